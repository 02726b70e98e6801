"""HTP101 unpooled-call-in-loop: an unpooled request function called in a loop scope."""

from ..checks import connections
from ..rule import FIX_SAFE, Rule

RULE = Rule(
    code="HTP101",
    name="unpooled-call-in-loop",
    summary='An unpooled request function called in a loop scope',
    message='{call}() in a loop opens a new connection every iteration; {remedy}',
    fix=FIX_SAFE,
    fix_title='Create one {client} around the loop and call through it',
    check=connections.unpooled_call_in_loop,
    what_it_does="""TODO""",
    why_bad="""TODO""",
    example="""TODO""",
    use_instead="""TODO""",
    fix_safety="""TODO""",
    references=(),
    valid=(),
    invalid=(),
)
