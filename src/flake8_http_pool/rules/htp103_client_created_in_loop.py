"""HTP103 client-created-in-loop: a client (Session, Client, ClientSession, PoolManager) constructed in a loop scope."""

from ..checks import connections
from ..rule import FIX_UNSAFE, Rule

RULE = Rule(
    code="HTP103",
    name="client-created-in-loop",
    summary="A pooled client (Session, Client, ClientSession, PoolManager) created anew in every loop iteration",
    message="{client}() created in a loop opens a new connection pool every iteration; create it once, before the loop",
    fix=FIX_UNSAFE,
    fix_sites=(
        "report only where the constructor's arguments use a name bound in the loop, the loop sets the client's auth, headers, cookies or adapters, or a client of the same library is already open around the loop, or the loop is in a function that runs many times (hoisted there, the client would be made per call: HTP104)"
    ),
    fix_title="Create the client once, before the loop",
    check=connections.client_created_in_loop,
    what_it_does="""\
Checks for HTTP clients constructed inside a loop: `requests.Session()` / `requests.session()`,
`httpx.Client()` / `httpx.AsyncClient()`, `aiohttp.ClientSession()` / `aiohttp.TCPConnector()`,
`urllib3.PoolManager()` / `ProxyManager()` / `HTTPConnectionPool()` / `HTTPSConnectionPool()` /
`connection_from_url()`, `niquests.Session()`, `httpx2.Client()` and `requests_futures`'
`FuturesSession()`, through any import form.

Loops are the same as for HTP101: loop bodies, the per-item parts of comprehensions, and `lambda`s or nested
`def`s inside them; retry loops are not loops. A client kept beyond the iteration - stored in a dictionary,
a list, an attribute or a global (`sessions[host] = requests.Session()`) - is not reported, since keeping a
pool per host is a reason to build several.

A call of a client factory of the project counts as a constructor, and is reported at that call (the
message names the factory: `make_session() created in a loop ...`), never at the constructor inside the
factory. A factory is:
- a function whose every return hands out a client it builds, or another factory's client (also one yielded
  from a `@contextmanager`); one that on another path returns a client it keeps is none;
- a `functools.partial` of a constructor bound to a module name (reported as the constructor in its own
  module, and by its name where another module imports and calls it); one handed a pool made elsewhere
  (`connector=`, `transport=`, `session=`) builds none;
- a class whose `__init__` only builds and stores a client: every statement of it is a docstring, `pass`,
  `super().__init__(...)`, an assignment to `self.<attribute>` of a parameter, a constant, a client
  constructor or a factory call, or configures the client it stored (`self.session.mount(...)`,
  `self.session.headers[...] = token`) from parameters, constants and HTTP-library calls; and at least one
  stores a client, or is `super().__init__(...)` of a factory base of the same module (not yet a base
  imported from another module). A class whose
  `__init__` does anything else (opens a file, starts a thread, branches) holds a client but is not a
  factory; a class storing a client it was passed builds none.

A factory that hands out one client (`lru_cache`, a module global) is not one.""",
    why_bad="""\
A client is worth having for its connection pool, and a pool only pays off if it outlives the request that
opened its connection. A client built per iteration connects (TCP, and TLS over HTTPS) for its first request
and throws the connection away at the end of the iteration, so the loop is no faster than calling
`requests.get()` per item - and if the client is never closed, its sockets stay open until the garbage
collector finds it (aiohttp warns about the "Unclosed client session").

Built once, before the loop, the same client reuses its connections: a `requests.Session` is 8-25 % faster
than a new connection per request over plain HTTP on loopback, keep-alive gave 10-15 % more requests per
second behind nginx, and over HTTPS each saved TLS handshake counts for far more.""",
    example="""\
import requests

for user in USERS:
    with requests.Session() as session:  # HTP103
        profile = session.get(f"{API}/users/{user}/profile").json()
        orders = session.get(f"{API}/users/{user}/orders").json()
""",
    use_instead="""\
import requests

with requests.Session() as session:
    for user in USERS:
        profile = session.get(f"{API}/users/{user}/profile").json()
        orders = session.get(f"{API}/users/{user}/orders").json()
""",
    fix_safety="""\
The fix is unsafe. It moves the `with` statement or the assignment that creates the client above the loop,
where the constructor's arguments use no name bound in the loop and the loop body neither sets the client's
state (`s.auth = ...`, `s.headers[...] = ...`, `s.cookies...`) nor mounts adapters on it.

Whoever built a client per iteration may have meant each iteration's cookies and credentials to stay apart:
after the move, a cookie that the server sets while serving one user is sent with the requests made for the
next one. Review that the iterations share no session state before applying it.

A call of a client factory, of the same module or another module of the project, made in a loop, moves above
the loop at its call site under the same conditions (its arguments use no name the loop binds; the loop
neither configures, mounts on nor closes the client, `holder.session.headers.update(...)` included for a
class factory's instance); the factory is not touched. The factory, of whichever module, must also build the
same client on every call: a class factory, or a function that only builds and configures its client from
its parameters, constants and HTTP-library calls; one that reads changing state (`next(TOKENS)`), prints,
logs or stores elsewhere does that once per call, so its call stays in the loop (report only). Such a call
in a hot function is HTP104, report only.

Report only (no fix offered):
- a client of the same library is already open around the loop (an enclosing `with requests.Session()`, or
  `s = requests.Session()` earlier in the function): the hoisted client would be a second pool nested in it;
- the constructor's arguments use a name the loop binds, or the loop configures, closes or rebinds the client;
- the loop is in a function that runs many times: the hoisted client would still be one per call of that
  function, which HTP104 reports; fixed code must be clean code, so the site waits for a fix that moves the
  client out of the function;
- the loop is a comprehension, or the client is made in a nested function, or by anything but a
  `with C() as s:` item or a plain `s = C()` in the loop's own body.

Comments survive the fix.""",
    options="",
    references=(
        "https://requests.readthedocs.io/en/latest/user/advanced/#session-objects",
        "https://www.python-httpx.org/advanced/clients/",
        "https://docs.aiohttp.org/en/stable/client_reference.html",
        "https://urllib3.readthedocs.io/en/stable/advanced-usage.html",
    ),
    valid=(
        """\
# one session per host kept in a dict comprehension
import requests

sessions = {host: requests.Session() for host in HOSTS}
""",
        """\
# sessions stored for reuse in a loop
import httpx

clients = []
for region in REGIONS:
    clients.append(httpx.Client(base_url=f"https://{region}.api.example.com"))
""",
        """\
# a retry loop that builds a client and returns on success
import time
import httpx


def fetch(url):
    for attempt in range(3):
        try:
            with httpx.Client(timeout=5) as client:
                return client.get(url)
        except httpx.ConnectError:
            time.sleep(attempt)
""",
        """\
# created before the loop
import aiohttp


async def crawl(urls):
    async with aiohttp.ClientSession() as session:
        for url in urls:
            async with session.get(url) as resp:
                print(resp.status)
""",
        """\
# created in the else of a loop, which runs once
import urllib3

for attempt in ATTEMPTS:
    attempt.prepare()
else:
    http = urllib3.PoolManager()
""",
    ),
    invalid=(
        """\
# httpx client per item of a comprehension
import httpx

pages = [httpx.Client().get(url).text for url in URLS]  # HTP103
""",
        """\
# aiohttp session per job in async for
import aiohttp


async def worker(jobs):
    async for job in jobs:
        async with aiohttp.ClientSession() as session:  # HTP103
            await session.post(job.callback, json=job.result)
""",
        """\
# urllib3 pool manager in a while loop
import urllib3


def poll(url):
    while RUNNING:
        http = urllib3.PoolManager()  # HTP103
        http.request("GET", url)
""",
        """\
# renamed from-import with per-iteration auth
from requests import Session as HttpSession

for user, token in TOKENS.items():
    s = HttpSession()  # HTP103
    s.headers["Authorization"] = f"Bearer {token}"
    s.get(f"{API}/users/{user}")
""",
        """\
# lowercase requests.session() in a loop
import requests

for url in URLS:
    requests.session().get(url)  # HTP103
""",
        """\
# in a loop of a request handler it is HTP103, not HTP104
import httpx
from flask import Flask

app = Flask(__name__)


@app.post("/fanout")
def fanout():
    for target in TARGETS:
        with httpx.Client() as client:  # HTP103
            client.post(target)
    return "ok"
""",
    ),
)
