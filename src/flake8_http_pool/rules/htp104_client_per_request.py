"""HTP104 client-per-request: a client constructed inside a function that runs many times, and not kept for reuse."""

from ..checks import connections
from ..rule import FIX_UNSAFE, Rule

RULE = Rule(
    code="HTP104",
    name="client-per-request",
    summary="A pooled client created inside a function that runs many times, and not kept for reuse",
    message="{client}() created in {function}(), which runs many times ({reason}), opens new connections on every call; create one client in the caller and pass it in",
    fix=FIX_UNSAFE,
    fix_sites=(
        "offered only for functions nobody outside the project can call (a leading underscore, a nested function, a script's, or any with `application = true`); report only where a call site has no loop or gather to hoist the client above, or a second client of the same library would nest"
    ),
    fix_title="Take the client as a parameter and create one in the caller",
    check=connections.client_per_request,
    what_it_does="""\
Checks for an HTTP client (`requests.Session()`, `httpx.Client()` / `AsyncClient()`,
`aiohttp.ClientSession()`, `urllib3.PoolManager()`, ... - the constructors HTP103 knows) created inside a
function that runs many times - called in a loop, mapped or gathered over items, a request handler or a
task, or called from such a function (see HTP102 for the full list) - where the client serves only that
one call:

- it is used for the request(s) of that call, as in the classic
  `async def fetch(url): async with aiohttp.ClientSession() as s: ...` gathered over many URLs, or in
  `session = self.session or aiohttp.ClientSession()`; or
- it is made by a client factory (see HTP103: a function returning a new client, a `functools.partial` of
  a constructor in its own module, a class whose `__init__` only builds and stores one) called in the hot function: the
  finding is at that call and names the factory (`make_session() created in fetch(), ...`), never at the
  constructor inside the factory. A factory called in a loop scope is HTP103. Only a factory that is itself
  run many times with no call in the project to report (mapped over items, a handler) is reported at its
  own constructor.

A client kept for reuse is not reported: stored on `self`, in a module global, in a `threading.local` or in
a container, or made by a function decorated with `functools.cache` / `lru_cache`. A client created inside a
loop of the function is HTP103 instead.""",
    why_bad="""\
Every call of the function builds a pool, connects (TCP, and TLS over HTTPS) for its request and closes the
pool again, so nothing is ever reused: gathering `fetch` over 100 URLs opens 100 pools of one connection
each. The aiohttp documentation says it plainly: do not create a session per request. One client shared by
the calls keeps its connections alive - a `requests.Session` is 8-25 % faster than a connection per request
over plain HTTP on loopback, keep-alive gave 10-15 % more requests per second behind nginx, and over HTTPS
the handshake saved per request is worth far more.""",
    example="""\
import asyncio
import aiohttp


async def fetch(url):
    async with aiohttp.ClientSession() as session:  # HTP104
        async with session.get(url) as resp:
            return await resp.text()


async def main(urls):
    return await asyncio.gather(*(fetch(url) for url in urls))
""",
    use_instead="""\
import asyncio
import aiohttp


async def fetch(session, url):
    async with session.get(url) as resp:
        return await resp.text()


async def main(urls):
    async with aiohttp.ClientSession() as session:
        return await asyncio.gather(*(fetch(session, url) for url in urls))
""",
    fix_safety="""\
The fix is unsafe, and offered only where every use of the function is a call in this module: the function
takes the client as its first parameter, and each caller creates one client around its loop or `gather`
and passes it in. The client's `with` (or assignment) may sit inside other blocks of the function, as in
the common `async with semaphore: async with aiohttp.ClientSession() as session: ...`; its body takes the
`with`'s place.

A new parameter changes the function's signature, which breaks callers the tool cannot see (other modules,
tests, a framework that calls a handler). So the parameter is only added to functions nobody outside the
project can call:
- a name with a leading underscore (the function's, or its class's);
- a function nested in another function;
- any function of a script: a `__main__.py`, or a module outside any package that has an
  `if __name__ == "__main__":` block or whose module-level code calls its own functions (`main(sys.argv[1])`,
  `asyncio.run(main())`: importing it runs the program). A module of a package is importable by its dotted
  name whatever it runs at the bottom, so a main block does not make it a script; and a module outside any
  package is not a script by that alone, since a flat project imports such modules by their bare names;
- any function at all when the config says `application = true`.

And the calls that used to have a client each now share one: cookies set by one response are sent with the
others, and a client shared between threads must be one that tolerates it.

Report only (no fix offered):
- a public function or method of a library module (above);
- a call site with no loop, comprehension or `gather` to put the client around: that only moves the per-call
  client to the caller, and two nested sessions gain nothing;
- a caller that is itself a nested function or lambda (a per-call closure: the client would again be made
  once per call);
- a caller where a client of the same library is open already (it would nest a second one);
- a client factory's call in a hot function, and the factory itself (a function that returns the
  client); a client that is closed, rebound or used outside its own
  block, a constructor that uses the function's own names, and a function used other than by calls.

Across modules (`fix --preview`, or `preview = true`): a function hot because of calls in other modules of
the project takes the client as its first parameter, and every caller, in whichever module, creates one
client around its loop or `gather` (importing the library where it is not imported yet; the function's
module drops the import it no longer uses). Every file involved is edited or none: the change is verified
file by file (each must compile, keep its comments, show no new finding, and the function's module must lose
the finding) and written all together; if one file fails or cannot be written, none is. It is report only
when any caller cannot be edited safely: the function is public without `application = true`, a module
names it other than by importing it and calling it (`mod.f`, passed on as a value), a caller has no loop or
`gather`, is nested, is itself hot, or already has a client of that library open; a method, or a function
its own module calls too, is left to report. With the project model, a function another module names is
never given a parameter by the fix of its own module alone.

A run over part of a project (pre-commit hands `fix` only the changed files; `--exclude`; `fix -` for an
editor's buffer) still reads the rest of each file's project (the nearest folder holding `pyproject.toml`,
`setup.cfg`, `setup.py` or `.git`) for the function's name when a plan is about to add the parameter: a module
the run does not fix cannot have its calls edited, so a function it names keeps its signature and the finding
stays report only. Run `fix` on the whole project to make the change across modules.

Comments survive the fix.""",
    options="""\
`hot-decorators` (`--http-pool-hot-decorators` for flake8, `hot-decorators` in `[tool.flake8-http-pool]` of
`pyproject.toml`): more decorators, as dotted names, that mark a function as a handler or task, so that a
client created in it is reported.""",
    references=(
        "https://docs.aiohttp.org/en/stable/client_quickstart.html",
        "https://docs.aiohttp.org/en/stable/client_reference.html",
        "https://requests.readthedocs.io/en/latest/user/advanced/#session-objects",
        "https://www.python-httpx.org/advanced/clients/",
    ),
    valid=(
        """\
# created lazily and stored on self
import httpx


class Api:
    _client = None

    def get(self, path):
        if self._client is None:
            self._client = httpx.Client(base_url=BASE)
        return self._client.get(path)


api = Api()
for path in PATHS:
    api.get(path)
""",
        """\
# a cached factory returns the same session every time
import functools
import requests


@functools.lru_cache(maxsize=None)
def session_for(host):
    return requests.Session()


for url in URLS:
    session_for(HOST).get(url)
""",
        """\
# a module global created on first use
import requests

_SESSION = None


def get_session():
    global _SESSION
    if _SESSION is None:
        _SESSION = requests.Session()
    return _SESSION


for url in URLS:
    get_session().get(url)
""",
        """\
# a factory called once, its session reused in the loop
import requests


def make_session():
    session = requests.Session()
    session.headers["User-Agent"] = "crawler/1.0"
    return session


def crawl(urls):
    session = make_session()
    for url in urls:
        session.get(url)
""",
        """\
# one session per thread in a threading.local
import threading
import requests

_local = threading.local()


def fetch(url):
    if not hasattr(_local, "session"):
        _local.session = requests.Session()
    return _local.session.get(url)


results = list(map(fetch, URLS))
""",
    ),
    invalid=(
        """\
# httpx client per call of a flask handler
import httpx
from flask import Flask

app = Flask(__name__)


@app.post("/hook")
def hook():
    with httpx.Client(timeout=5) as client:  # HTP104
        client.post(FORWARD_URL, json={"ok": True})
    return "ok"
""",
        """\
# falls back to a new session in a method called in a loop
import aiohttp


class Fetcher:
    session = None

    async def fetch(self, url):
        session = self.session or aiohttp.ClientSession()  # HTP104
        async with session.get(url) as resp:
            return await resp.read()

    async def run(self, urls):
        for url in urls:
            await self.fetch(url)
""",
        """\
# a session factory called in a function that runs per item: reported at the call
import requests


def make_session():
    session = requests.Session()
    session.headers["User-Agent"] = "crawler/1.0"
    return session


def fetch(url):
    return make_session().get(url).text  # HTP104


pages = [fetch(url) for url in URLS]
""",
        """\
# urllib3 pool manager per run of a task
import urllib3
from celery import shared_task


@shared_task
def notify(url, body):
    http = urllib3.PoolManager()  # HTP104
    http.request("POST", url, body=body)
""",
        """\
# requests session in a function mapped over a thread pool
from concurrent.futures import ThreadPoolExecutor
import requests


def fetch(url):
    with requests.Session() as session:  # HTP104
        return session.get(url).text


with ThreadPoolExecutor(4) as pool:
    pages = list(pool.map(fetch, URLS))
""",
    ),
)
