"""HTP402 late-monkey-patch: gevent monkey-patching after HTTP or socket modules are imported."""

from ..checks import gevent
from ..rule import FIX_SAFE, Rule

RULE = Rule(
    code="HTP402",
    name="late-monkey-patch",
    summary='gevent monkey-patching after HTTP or socket modules are imported',
    message='{patch} after `import {module}` (line {line}) leaves it with blocking sockets; move the patch to the top of the module',
    fix=FIX_SAFE,
    fix_title='Move the monkey-patch to the top of the module',
    check=gevent.late_monkey_patch,
    what_it_does="""TODO""",
    why_bad="""TODO""",
    example="""TODO""",
    use_instead="""TODO""",
    fix_safety="""TODO""",
    references=(),
    valid=(),
    invalid=(),
)
