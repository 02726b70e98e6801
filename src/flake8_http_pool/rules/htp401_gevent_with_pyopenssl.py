"""HTP401 gevent-with-pyopenssl: gevent monkey-patching together with urllib3's pyOpenSSL injection."""

from ..checks import gevent
from ..rule import FIX_NONE, Rule

RULE = Rule(
    code="HTP401",
    name="gevent-with-pyopenssl",
    summary="gevent monkey-patching together with urllib3's pyOpenSSL injection",
    message='{what} under gevent makes every HTTPS read block the whole hub; drop the injection, or call urllib3.contrib.pyopenssl.extract_from_urllib3() after it',
    fix=FIX_NONE,
    fix_title='',
    check=gevent.gevent_with_pyopenssl,
    what_it_does="""TODO""",
    why_bad="""TODO""",
    example="""TODO""",
    use_instead="""TODO""",
    fix_safety="""TODO""",
    references=(),
    valid=(),
    invalid=(),
)
