"""HTP203 streamed-response-not-closed: a stream=True response that is never closed."""

from ..checks import downloads
from ..rule import FIX_SAFE, Rule

RULE = Rule(
    code="HTP203",
    name="streamed-response-not-closed",
    summary='A stream=True response that is never closed',
    message='stream=True response from {call}() is never closed, so its connection never returns to the pool; use it in a `with` block',
    fix=FIX_SAFE,
    fix_title='Use the response in a `with` block',
    check=downloads.streamed_response_not_closed,
    what_it_does="""TODO""",
    why_bad="""TODO""",
    example="""TODO""",
    use_instead="""TODO""",
    fix_safety="""TODO""",
    references=(),
    valid=(),
    invalid=(),
)
