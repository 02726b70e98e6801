"""HTP402 late-monkey-patch: gevent monkey-patching after HTTP or socket modules are imported."""

from ..checks import gevent
from ..rule import FIX_SAFE, Rule

RULE = Rule(
    code="HTP402",
    name="late-monkey-patch",
    summary="gevent monkey-patching after HTTP or socket modules are imported",
    message="{patch} after `import {module}` (line {line}) leaves it with blocking sockets; move the patch to the top of the module",
    fix=FIX_SAFE,
    fix_sites=(
        'report only where the move would cross a statement that is not an import (`sys.path.insert(...)`, `os.environ[...] = ...`)'
    ),
    fix_title="Move the monkey-patch to the top of the module",
    check=gevent.late_monkey_patch,
    what_it_does="""\
Checks for gevent monkey-patching - `gevent.monkey.patch_all()`, `patch_socket()` or `patch_ssl()`, or
`import grequests`, which patches on import - that comes after a module-level import of `requests`,
`urllib3`, `httpx`, `ssl`, `socket`, `http.client` or `urllib.request`, in any import form
(`from http import client`, `from requests import get`). Each such patch is reported. Imports inside
functions, and under `if TYPE_CHECKING:`, do not run before the patch and are not counted.""",
    why_bad="""\
Monkey-patching replaces the functions and classes of `socket`, `ssl` and friends in their modules. A module
imported before the patch has already taken its own references to the originals - `from socket import
socket`, subclasses of `ssl.SSLContext`, defaults captured at import time - and keeps them. Its I/O then
blocks the whole gevent hub instead of yielding to other greenlets, so the concurrency is lost for exactly
the HTTP calls it was meant for, and gevent warns that patching `ssl` after it was imported "may lead to
errors, including RecursionError". gevent's documentation asks for the patch as early as possible, before
any other import.""",
    example="""\
import requests
from gevent import monkey

monkey.patch_all()  # HTP402
""",
    use_instead="""\
from gevent import monkey

monkey.patch_all()

import requests
""",
    fix_safety="""\
The fix is safe only where it moves the patch within the module's leading block of imports. It moves the
patch - its import and its call - to the top of the module, after the docstring and the `from __future__`
imports, so the modules imported after it get the patched objects. Jumping only imports (plain ones, and
`if`/`try` blocks that only import, such as `try: import ujson as json except ImportError: import json` or
`if TYPE_CHECKING:`), the program runs as its author meant it to: the patch does not depend on anything the
module imports, and the modules imported later behave the same, only cooperatively.

Report only (no fix offered):
- any statement that is not an import stands between the top and the patch (`sys.path.insert(...)`,
  `os.environ[...] = ...`, `log = logging.getLogger(...)`): moving the patch above it may import a different
  gevent, or configure it differently;
- the patch is inside a function or under an `if` (it runs when its author chose), has arguments that are
  not literals, or shares its line with another statement.

Comments on or above the moved lines move with them. The imports below the moved call are then what
pycodestyle calls E402 (module level import not at top of file): that is the point of the move, and gevent's
own docs put the patch first for the same reason; add `E402` to the ignores of such a module (or
`# noqa: E402` on its imports), since no placement of a call before the imports avoids it.""",
    options="",
    references=(
        "https://www.gevent.org/api/gevent.monkey.html",
        "https://github.com/spyoungtech/grequests",
    ),
    valid=(
        """\
# patched before anything else
from gevent import monkey

monkey.patch_all()

import requests
import urllib3
""",
        """\
# requests imported inside a function runs later
from gevent import monkey


def fetch(url):
    import requests

    return requests.get(url)


monkey.patch_all()
""",
        """\
# an import only for type checkers
from typing import TYPE_CHECKING

from gevent import monkey

if TYPE_CHECKING:
    import requests

monkey.patch_all()
""",
        """\
# unrelated modules before the patch
import json
import logging
import os

import gevent.monkey

gevent.monkey.patch_all()
import requests
""",
    ),
    invalid=(
        """\
# grequests imported after socket
import socket
import grequests  # HTP402
""",
        """\
# grequests patches on import, after requests
import requests
import grequests  # HTP402
""",
        """\
# from http import client counts
from http import client
import gevent.monkey

gevent.monkey.patch_socket()  # HTP402
""",
        """\
# patch_all imported by name, after ssl
import ssl
from gevent.monkey import patch_all

patch_all()  # HTP402
""",
        """\
# every late patch is reported
import httpx
from gevent import monkey

monkey.patch_socket()  # HTP402
monkey.patch_ssl()  # HTP402
""",
        """\
# after a docstring, a future import and urllib.request
\"\"\"Fetch feeds concurrently.\"\"\"
from __future__ import annotations

import urllib.request

from gevent import monkey

monkey.patch_all()  # HTP402
""",
    ),
)
