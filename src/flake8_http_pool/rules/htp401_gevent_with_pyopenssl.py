"""HTP401 gevent-with-pyopenssl: gevent monkey-patching together with urllib3's pyOpenSSL injection."""

from ..checks import gevent
from ..rule import FIX_NONE, Rule

RULE = Rule(
    code="HTP401",
    name="gevent-with-pyopenssl",
    summary="gevent monkey-patching together with urllib3's pyOpenSSL injection, which blocks the hub",
    message="{what} under gevent makes every HTTPS read block the whole hub; drop the injection, or call urllib3.contrib.pyopenssl.extract_from_urllib3() after it",
    fix=FIX_NONE,
    fix_title="",
    check=gevent.gevent_with_pyopenssl,
    what_it_does="""\
Checks for a module that monkey-patches with gevent - it imports `grequests`, or calls
`gevent.monkey.patch_all()`, `patch_socket()` or `patch_ssl()` - and also injects pyOpenSSL into urllib3:
it imports `urllib3.contrib.pyopenssl` (or `requests.packages.urllib3.contrib.pyopenssl`) or calls
`inject_into_urllib3()`. It is reported once per module, at the first such import or call, and not when the
module calls `extract_from_urllib3()` after the last injection.

A bare `import OpenSSL` is not reported: requests 2.24 and later inject pyOpenSSL only where the `ssl` module
lacks SNI support, which no current Python does. The standalone `check` command also reports HTP401 on
dependency files (`requirements*.txt`, `pyproject.toml`, `setup.cfg`, `setup.py`) that declare `grequests`
or `gevent` together with an automatic injection - `requests[security]`, `urllib3[secure]`, or `pyopenssl`
beside a `requests` held below 2.24 - at the line of the injecting requirement.""",
    why_bad="""\
gevent makes blocking code concurrent by patching `socket` and `ssl` with cooperative versions that yield to
other greenlets while they wait. The pyOpenSSL injection replaces urllib3's use of the (patched) `ssl`
module with pyOpenSSL's own connection objects, which wait for data inside OpenSSL instead. Every HTTPS read
then blocks the whole gevent hub, and the greenlets run one after another: grequests with pyOpenSSL
installed ran 10 requests in 10 s instead of 1.3 s. Nothing fails - the program only loses its concurrency,
which makes this hard to find.""",
    example="""\
from gevent import monkey

monkey.patch_all()

import requests
import urllib3.contrib.pyopenssl  # HTP401

urllib3.contrib.pyopenssl.inject_into_urllib3()
""",
    use_instead="""\
from gevent import monkey

monkey.patch_all()

import requests
""",
    fix_safety="""\
There is no automatic fix: whether the injection can go depends on why it was added (very old Pythons
needed it for SNI) and on code the tool cannot see. Remove the import and the `inject_into_urllib3()` call,
or, where a library injects it for you, call `urllib3.contrib.pyopenssl.extract_from_urllib3()` after it to
give urllib3 back the patched `ssl` module. For dependency files, drop the `[security]` / `[secure]` extra or
raise `requests` to 2.24 or later.""",
    options="",
    references=(
        "https://urllib3.readthedocs.io/en/stable/reference/contrib/pyopenssl.html",
        "https://www.gevent.org/api/gevent.monkey.html",
        "https://github.com/spyoungtech/grequests",
    ),
    valid=(
        """\
# the injection is undone with extract_from_urllib3
from gevent import monkey

monkey.patch_all()

import urllib3.contrib.pyopenssl

urllib3.contrib.pyopenssl.inject_into_urllib3()
urllib3.contrib.pyopenssl.extract_from_urllib3()
""",
        """\
# a bare import OpenSSL does not inject anything
import grequests
import OpenSSL

CERT = OpenSSL.crypto.load_certificate(OpenSSL.crypto.FILETYPE_PEM, PEM)
""",
        """\
# pyOpenSSL without gevent
import urllib3.contrib.pyopenssl

urllib3.contrib.pyopenssl.inject_into_urllib3()
""",
        """\
# gevent imported but nothing patched
import gevent
import urllib3.contrib.pyopenssl

jobs = [gevent.spawn(work, item) for item in ITEMS]
""",
        """\
# only time is patched
from gevent import monkey
from urllib3.contrib import pyopenssl

monkey.patch_time()
""",
    ),
    invalid=(
        """\
# grequests with the injection imported from urllib3.contrib
import grequests
from urllib3.contrib import pyopenssl  # HTP401

pyopenssl.inject_into_urllib3()
""",
        """\
# the requests.packages path of the module
import gevent.monkey

gevent.monkey.patch_socket()

from requests.packages.urllib3.contrib import pyopenssl  # HTP401
""",
        """\
# inject_into_urllib3 imported by name
from gevent import monkey

monkey.patch_all()

from urllib3.contrib.pyopenssl import inject_into_urllib3  # HTP401

inject_into_urllib3()
""",
        """\
# patch_ssl alone is enough to be broken
from gevent.monkey import patch_ssl

patch_ssl()

import urllib3.contrib.pyopenssl  # HTP401
""",
        """\
# injected inside a setup function
import grequests


def setup_tls():
    import urllib3.contrib.pyopenssl  # HTP401

    urllib3.contrib.pyopenssl.inject_into_urllib3()
""",
    ),
)
