"""HTP201 unstreamed-download: a whole response body written to a file."""

from ..checks import downloads
from ..rule import FIX_SAFE, Rule

RULE = Rule(
    code="HTP201",
    name="unstreamed-download",
    summary='A whole response body written to a file',
    message='response body of {call}() is held whole in memory and then written to a file; {remedy}',
    fix=FIX_SAFE,
    fix_title='Stream the body to the file in chunks',
    check=downloads.unstreamed_download,
    what_it_does="""TODO""",
    why_bad="""TODO""",
    example="""TODO""",
    use_instead="""TODO""",
    fix_safety="""TODO""",
    references=(),
    valid=(),
    invalid=(),
)
