"""HTP301 pool-smaller-than-workers: a thread pool with more workers than the shared session's connection pool."""

from ..checks import pools
from ..rule import FIX_SAFE, Rule

RULE = Rule(
    code="HTP301",
    name="pool-smaller-than-workers",
    summary="A thread pool with more workers than the shared session's connection pool",
    message='{pool} runs {workers} workers on a {client} whose connection pool keeps {size}; the rest are opened and discarded: mount HTTPAdapter(pool_connections={workers}, pool_maxsize={workers})',
    fix=FIX_SAFE,
    fix_title='Mount an HTTPAdapter sized to the workers',
    check=pools.pool_smaller_than_workers,
    what_it_does="""TODO""",
    why_bad="""TODO""",
    example="""TODO""",
    use_instead="""TODO""",
    fix_safety="""TODO""",
    references=(),
    valid=(),
    invalid=(),
)
