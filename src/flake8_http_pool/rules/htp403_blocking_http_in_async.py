"""HTP403 blocking-http-in-async: a blocking HTTP call inside an async def."""

from ..checks import async_blocking
from ..rule import FIX_NONE, Rule

RULE = Rule(
    code="HTP403",
    name="blocking-http-in-async",
    summary='A blocking HTTP call inside an async def',
    message='blocking {call}() inside async def {function}() stalls the event loop for the whole request; use {alternative}, or await asyncio.to_thread(...)',
    fix=FIX_NONE,
    fix_title='',
    check=async_blocking.blocking_http_in_async,
    what_it_does="""TODO""",
    why_bad="""TODO""",
    example="""TODO""",
    use_instead="""TODO""",
    fix_safety="""TODO""",
    references=(),
    valid=(),
    invalid=(),
)
