"""HTP104 client-per-request: a client constructed inside a function that runs many times, and not kept for reuse."""

from ..checks import connections
from ..rule import FIX_UNSAFE, Rule

RULE = Rule(
    code="HTP104",
    name="client-per-request",
    summary='A client constructed inside a function that runs many times, and not kept for reuse',
    message='{client}() created in {function}(), which runs many times ({reason}), throws its connections away; create one client and pass it in',
    fix=FIX_UNSAFE,
    fix_title='Take the client as a parameter and create one in the caller',
    check=connections.client_per_request,
    what_it_does="""TODO""",
    why_bad="""TODO""",
    example="""TODO""",
    use_instead="""TODO""",
    fix_safety="""TODO""",
    references=(),
    valid=(),
    invalid=(),
)
