"""HTP102 unpooled-call-in-hot-function: an unpooled request function called in a function that runs many times."""

from ..checks import connections
from ..rule import FIX_UNSAFE, Rule

RULE = Rule(
    code="HTP102",
    name="unpooled-call-in-hot-function",
    summary='An unpooled request function called in a function that runs many times',
    message='{call}() in {function}(), which runs many times ({reason}), opens a new connection every call; {remedy}',
    fix=FIX_UNSAFE,
    fix_title='Share one module-level {client}',
    check=connections.unpooled_call_in_hot_function,
    what_it_does="""TODO""",
    why_bad="""TODO""",
    example="""TODO""",
    use_instead="""TODO""",
    fix_safety="""TODO""",
    references=(),
    valid=(),
    invalid=(),
)
