"""HTP101 unpooled-call-in-loop: an unpooled request function called in a loop scope."""

from ..checks import connections
from ..rule import FIX_UNSAFE, Rule

RULE = Rule(
    code="HTP101",
    name="unpooled-call-in-loop",
    summary="A request function that opens its own connection, called once per loop iteration",
    message="{call}() {where} opens a new connection (and TLS handshake) for every request; {remedy}",
    fix=FIX_UNSAFE,
    fix_sites=(
        "report only where a call in the loop passes `cookies=` or its response's cookies are read, where the loop mixes `verify=` / `cert=` values and requests is not pinned at 2.32 or newer, where the project patches or wraps the rewritten name, where the library's import would not bind the name before the new `with`, for `urlopen` and `urlretrieve`, and for a function looked up by `getattr`; a loop inside a function that runs many times gets HTP102's fix"
    ),
    fix_title="Create one {client} around the loop and call through it",
    check=connections.unpooled_call_in_loop,
    what_it_does="""\
Checks for module-level request functions that open a connection pool of their own and throw it away after
one request - `requests.get()` and its siblings, `httpx.get()` / `httpx.stream()`, `aiohttp.request()`,
`urllib.request.urlopen()` and `urllib.request.urlretrieve()`, the same functions of `niquests` and `httpx2`,
and `grequests.get()` without a `session=` keyword - when they run once per iteration of a loop.

A loop here is the body of `for`, `async for` and `while` (not their `else`), the parts of a comprehension
or generator expression that run per item, and a `lambda` or nested `def` written inside one of those. The
iterable of the outermost `for` runs once and is not part of the loop; a `while` test is. Handing the
function itself to a mapping call (`executor.map(requests.get, urls)`, `pool.map(...)`) counts as calling
it per item, and so does handing it to `submit`, `gevent.spawn` or `threading.Thread(target=...)` inside a
loop.

Every import form is followed (`import requests as rq`, `from requests import get as fetch`,
`from requests import api`), and so is a name assigned the module (`http = requests`). So is a function
looked up by the builtin `getattr`: `getattr(requests, "get")` is `requests.get`, and `getattr(requests, m)`
(with or without a default) counts whatever `m` is, as it does on `niquests`, `httpx` and `httpx2`; on the
other libraries only a literal name that is one of their functions counts. A parameter, loop variable or
local definition with the same name (`requests`, `get`, `getattr`) shadows the library or the builtin and is
not reported, and `getattr(self.session, m)(u)` is a session's method.

A retry loop is not reported: a loop that leaves (`return`, `break`) right after the request succeeds and
repeats only from an `except` handler or a failed status check (`r.ok`, `r.status_code` compared with a
number, a named code such as `HTTPStatus.GATEWAY_TIMEOUT` / `requests.codes.too_many_requests`, or a
module-level set of codes; `raise_for_status()`) makes one request when things go well. A loop that leaves
on a condition about the body (`if r.json()["state"] == "done": break`) is polling and is reported.""",
    why_bad="""\
Each of these functions builds a fresh `Session` or `Client`, connects (DNS lookup, TCP handshake, and over
HTTPS a TLS handshake), sends one request and closes the connection again. In a loop that set-up is paid for
every item, although all the requests usually go to the same host.

A pooled client keeps the connection open and sends the next request over it. Measured in public
write-ups, a `requests.Session` is 8-25 % faster than `requests.get` over plain HTTP on loopback, and
keep-alive behind nginx gave 10-15 % more requests per second. Over HTTPS, and over any real network, the
handshake per request costs far more than that. Closing a connection per request also leaves sockets in
`TIME_WAIT` on the client and makes the server accept and tear down a connection for every call.""",
    example="""\
import requests


def fetch_all(urls):
    pages = []
    for url in urls:
        pages.append(requests.get(url, timeout=10).text)  # HTP101
    return pages
""",
    use_instead="""\
import requests


def fetch_all(urls):
    pages = []
    with requests.Session() as session:
        for url in urls:
            pages.append(session.get(url, timeout=10).text)
    return pages
""",
    fix_safety="""\
The fix is unsafe: `fix --unsafe-fixes` applies it (or `extend-safe-fixes = ["HTP101"]` in the config, for a
team that accepts the differences below). It wraps the statement holding the outermost loop of the function
(or of the module) in `with requests.Session() as session:` - `with httpx.Client() as client:` for httpx,
`async with aiohttp.ClientSession() as session:` for aiohttp - and sends the request through it
(`session.get(...)`). If `session` is already taken, a free name is chosen; the imports the new code needs
are added, and imports the fix leaves unused are removed. For grequests the fix passes `session=session`
instead of calling through the session. Continuation lines aligned under the call's arguments move with the
shorter `session.get(`, so the result passes flake8 where the original did.

`requests.get()` itself creates a new `Session` with the same defaults for each call, and the one the fix
creates lives only for the loop and is closed after it. Still, a program can tell the difference, which is
why the fix is unsafe: a cookie set by one response in the loop is sent with the next request to that host
(where each `requests.get()` started with an empty jar), and a jar cookie beats a per-call `cookies=` of the
same name; a kept-alive connection that the server drops between iterations can fail the next request, where
a fresh connection would not; and before requests 2.32 a pooled connection was reused whatever the call's
`verify=` / `cert=` (CVE-2024-35195).

Report only (no fix offered, not even with `--unsafe-fixes`), where one session would surely break the
program:

- a call in the loop passes its own `cookies=`: the jar's cookie of the same name would go out with every
  later request, so a loop over users would keep acting as the first one;
- the program reads a response's cookies (`requests.post(...).cookies`, `r.cookies` of a response bound in
  the same scope): the jar would send the first cookie back, and a server that sees it sets no new one;
- the loop's requests calls pass `verify=` / `cert=` values that differ between calls or are not literals,
  unless the project pins requests at 2.32 or newer;
- the project patches or wraps a name the fix rewrites: `mock.patch("pkg.mod.requests.get")`,
  `mock.patch.object(mod, "get")`, `monkeypatch.setattr(requests, "get", ...)`, `mocker.patch(...)`, or
  `requests.get = wrapper` anywhere in the project (the files under the nearest `pyproject.toml`,
  `setup.cfg`, `setup.py` or `.git`): the mocks and wrappers would silently stop applying. The same holds
  for what the function runs on its way (`requests.api.request`, `requests.sessions.Session`) and for the
  session method the fix would call instead (`requests.Session.get`, which a patch would start to catch),
  and for the module name the call goes through (`mock.patch("pkg.mod.requests")`).
  Mocks of the transport (`responses`, `requests-mock`, `respx`) see sessions too and are no obstacle;
- the library is imported inside the function, but not surely before the loop (inside the loop, or under an
  `if` or `try`): the import makes the name local to the function, and a `with requests.Session()` above the
  loop would raise `UnboundLocalError` on every call, even for an empty loop. An import that comes first in
  the same block (or an enclosing one), or in a `try` whose every handler leaves (`except ImportError:
  return None`), is used: the `with` goes after it. A loop at module level likewise
  needs an import that surely ran before it (not one under an `if` or `try` above it), and a loop in a
  function needs a module-level import that surely ran when the module was imported (`if URLS: import
  requests` leaves the name unbound when the branch did not run: the new `with` would raise `NameError`);
- the module imports the library only optionally (`try: import requests except ImportError: ...`) or lazily
  and the fix would need a module-level import: one is added only where the module already imports the
  library unconditionally at module level.

A `from requests import get` that the fix leaves unused is still kept where code outside the module may reach
it: a name listed in `__all__`, re-exported (`from requests import get as get`), or patched by the project.

Where the call sits inside a `lambda` or nested `def`, or the function is handed over as a callable (it may
run after the statement has ended, in a thread pool or a greenlet), the loop-scoped `with` would close the
session too early, so the fix is the one of HTP102 instead - a module-level session - and is unsafe. The
same goes for a loop inside a hot function (one called in a loop, mapped, or a request handler): a session
created there per call would itself be HTP104, so it gets HTP102's module-level session, under the same
report-only rules (and any `verify=` / `cert=` before requests 2.32 keeps it report only, since every caller
shares that pool); a blocking call in a hot `async def` stays report only, as the module-level session
would hide its HTP403 finding. Retry loops are not reported, so never rewritten.
A generator expression assigned to a name and consumed later gets a `with` that spans from its statement to
the last use of that name. `urllib.request.urlopen()` and `urlretrieve()` are reported only: their
replacement (`urllib3`) returns a different response type, and has nothing that saves to a file. A
function looked up by `getattr` is reported only: `getattr(session, m)` would fail where `m` names an
attribute of the module that a session lacks, and even a literal name is left as the author wrote it.

Comments survive the fix; a site where the rewrite would drop a comment is treated as unsafe.""",
    options="""\
`unpooled-calls` (in `[tool.flake8-http-pool]` of `pyproject.toml`): more functions that open a connection
per call, such as in-house wrappers, as ast-grep patterns (`mycorp.http.get($$$)`). Calls that match are
reported like `requests.get()`.""",
    references=(
        "https://requests.readthedocs.io/en/latest/user/advanced/#session-objects",
        "https://www.python-httpx.org/advanced/clients/",
        "https://docs.aiohttp.org/en/stable/client_quickstart.html",
        "https://docs.aiohttp.org/en/stable/client_reference.html",
    ),
    valid=(
        """\
# retry loop: leaves as soon as the request succeeds
import time
import requests


def fetch(url):
    for attempt in range(3):
        try:
            return requests.get(url, timeout=5)
        except requests.ConnectionError:
            time.sleep(2 ** attempt)
""",
        """\
# retry until a good status, then break
import requests


def wait_ok(url):
    while True:
        r = requests.get(url, timeout=5)
        if r.status_code == 200:
            break
    return r
""",
        """\
# the iterable of the outermost for runs once; dict.get and session.get in the body
import requests

session = requests.Session()
for item in requests.get(INDEX_URL).json():
    name = item.get("name")
    session.get(f"{BASE}/{name}")
""",
        """\
# a parameter called requests shadows the library
import requests


def crawl(requests, urls):
    for url in urls:
        requests.get(url)
""",
        """\
# the else of a for loop runs once
import requests

for job in jobs:
    job.run()
else:
    requests.post(DONE_URL, json={"ok": True})
""",
        """\
# grequests with a shared session
import grequests
import requests

session = requests.Session()
pending = [grequests.get(url, session=session) for url in URLS]
""",
    ),
    invalid=(
        """\
# list comprehension through an import alias
import httpx as hx

bodies = [hx.get(url).text for url in URLS]  # HTP101
""",
        """\
# while loop through a renamed from-import
from requests import post as send


def drain(queue):
    while queue:
        send(SINK_URL, json=queue.pop())  # HTP101
""",
        """\
# polling: leaves on a condition about the body
import time
import requests


def wait_done(url):
    while True:
        r = requests.get(url)  # HTP101
        if r.json()["state"] == "done":
            break
        time.sleep(1)
""",
        """\
# requests.get mapped over a thread pool
from concurrent.futures import ThreadPoolExecutor
import requests

with ThreadPoolExecutor(max_workers=8) as pool:
    responses = list(pool.map(requests.get, URLS))  # HTP101
""",
        """\
# a name assigned the module means the module
import requests

http = requests
for url in URLS:
    http.get(url)  # HTP101
""",
        """\
# aiohttp.request in async for
import aiohttp


async def crawl(feed):
    async for url in feed:
        async with aiohttp.request("GET", url) as resp:  # HTP101
            print(resp.status)
""",
        """\
# grequests without a session builds one per request
import grequests

pending = [grequests.get(url) for url in URLS]  # HTP101
""",
        """\
# urlopen in a loop, reached through a submodule import
import urllib.request

for url in URLS:
    with urllib.request.urlopen(url) as resp:  # HTP101
        print(resp.status)
""",
        """\
# a while test runs every iteration
import requests

while requests.get(HEALTH_URL).ok:  # HTP101
    process_batch()
""",
        """\
# the iterable of a second for clause runs per item
import requests

rows = [row for url in URLS for row in requests.get(url).json()]  # HTP101
""",
        """\
# handed to threading.Thread inside a loop
import threading
import requests

for url in URLS:
    threading.Thread(target=requests.get, args=(url,)).start()  # HTP101
""",
        """\
# a lambda written inside a loop
import requests

callbacks = []
for url in URLS:
    callbacks.append(lambda url=url: requests.get(url))  # HTP101
""",
        """\
# blocking call in a loop of an async def is also HTP403
import requests


async def ping_all(urls):
    for url in urls:
        requests.head(url)  # HTP101, HTP403
""",
    ),
)
