"""HTP202 stream-api-without-stream: iter_content(), iter_lines() or .raw on a requests response made without stream=True."""

from ..checks import downloads
from ..rule import FIX_SAFE, Rule

RULE = Rule(
    code="HTP202",
    name="stream-api-without-stream",
    summary='iter_content(), iter_lines() or .raw on a requests response made without stream=True',
    message='{use} on a response from {call}() made without stream=True: the body is already in memory; pass stream=True',
    fix=FIX_SAFE,
    fix_title='Pass stream=True to the request',
    check=downloads.stream_api_without_stream,
    what_it_does="""TODO""",
    why_bad="""TODO""",
    example="""TODO""",
    use_instead="""TODO""",
    fix_safety="""TODO""",
    references=(),
    valid=(),
    invalid=(),
)
