"""HTP103 client-created-in-loop: a client (Session, Client, ClientSession, PoolManager) constructed in a loop scope."""

from ..checks import connections
from ..rule import FIX_UNSAFE, Rule

RULE = Rule(
    code="HTP103",
    name="client-created-in-loop",
    summary='A client (Session, Client, ClientSession, PoolManager) constructed in a loop scope',
    message='{client}() created in a loop opens a new connection pool every iteration; create it once, before the loop',
    fix=FIX_UNSAFE,
    fix_title='Create the client once, before the loop',
    check=connections.client_created_in_loop,
    what_it_does="""TODO""",
    why_bad="""TODO""",
    example="""TODO""",
    use_instead="""TODO""",
    fix_safety="""TODO""",
    references=(),
    valid=(),
    invalid=(),
)
