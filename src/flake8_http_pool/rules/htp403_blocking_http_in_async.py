"""HTP403 blocking-http-in-async: a blocking HTTP call inside an async def."""

from ..checks import async_blocking
from ..rule import FIX_NONE, Rule

RULE = Rule(
    code="HTP403",
    name="blocking-http-in-async",
    summary="A blocking HTTP call inside an async def, which stalls the event loop",
    message="blocking {call}(){via} inside async def {function}() stalls the event loop for the whole request; use {alternative}, or await asyncio.to_thread({offload})",
    fix=FIX_NONE,
    fix_title="",
    check=async_blocking.blocking_http_in_async,
    what_it_does="""\
Checks for synchronous HTTP calls in the body of an `async def`: the module-level request functions of
requests, niquests, httpx and httpx2 (also looked up by `getattr`: `getattr(requests, m)(u)`),
`urllib.request.urlopen()` and `urlretrieve()`, and the request methods (`get`, `post`, ..., `send`,
`stream`) of a `requests.Session` or `httpx.Client` known where the function runs: created in the same
function, at module level (including the `_HTTP_SESSION` that HTP102's fix writes: the shared session still
blocks), stored on `self` by the class, a parameter annotated as one or that a call in the module passes one
to, or what a client factory of the module returned, bound in the function or at module level
(`SESSION = make_session()`). Creating the client is not
reported, nor is code in a nested plain `def` or `lambda` (it runs wherever it is called),
`aiohttp.request()`, `grequests.get()` (which only builds a request), or anything on `httpx.AsyncClient`
and aiohttp sessions.

Also reported: a call, in the body of an `async def`, of a synchronous project function that makes such a
blocking call on every run, directly or through other functions that do (`def get_json(u): return
requests.get(u).json()` called as `get_json(u)` in a coroutine); the message names the blocking call it
reaches and where it is. "Every run" means the call is in the function's own body under no `if`, loop or
`except`, and no earlier statement may return or raise first: a helper that only sometimes makes the request
is left alone, as are generators, decorated functions (a decorator may make a coroutine of it or cache it),
`async def` helpers, and a helper handed to `asyncio.to_thread` or `loop.run_in_executor` (passed, not
called). `check` follows such helpers into other modules of the project (under `--preview` for now).""",
    why_bad="""\
An event loop runs one task at a time, and a task only lets the others run when it awaits. A synchronous
request never awaits: for its whole round trip - DNS lookup, connect, TLS handshake, the server's time,
the download - the loop is stuck in it. Every other task waits meanwhile, so a server answers one client at a
time and timers and heartbeats fire late; `asyncio` in debug mode logs these calls as slow callbacks.""",
    example="""\
import requests


async def handle(request):
    r = requests.get(UPSTREAM_URL, timeout=10)  # HTP403
    return r.json()
""",
    use_instead="""\
import httpx

_client = httpx.AsyncClient(timeout=10)


async def handle(request):
    r = await _client.get(UPSTREAM_URL)
    return r.json()
""",
    fix_safety="""\
There is no automatic fix: moving to an async client changes the response API (awaited bodies, other
exceptions) and usually the code around the call. Use `httpx.AsyncClient` or `aiohttp.ClientSession`
(`niquests.AsyncSession` for niquests), or, for a call that has to stay synchronous, run it in a worker
thread with `await asyncio.to_thread(requests.get, url)`.""",
    options="",
    references=(
        "https://www.python-httpx.org/async/",
        "https://docs.aiohttp.org/en/stable/client_quickstart.html",
        "https://docs.python.org/3/library/asyncio-task.html#asyncio.to_thread",
        "https://docs.python.org/3/library/asyncio-dev.html#running-blocking-code",
    ),
    valid=(
        """\
# a blocking helper run in a worker thread, and one that requests only sometimes
import asyncio
import requests


def get_json(url):
    return requests.get(url, timeout=10).json()


def cached_json(url, cache):
    if url in cache:
        return cache[url]
    return requests.get(url, timeout=10).json()


async def handle(request, cache):
    fresh = await asyncio.to_thread(get_json, UPSTREAM_URL)
    return fresh, cached_json(UPSTREAM_URL, cache)
""",
        """\
# handed to asyncio.to_thread, not called
import asyncio
import requests


async def fetch(url):
    return await asyncio.to_thread(requests.get, url, timeout=10)
""",
        """\
# an awaited httpx.AsyncClient
import httpx


async def fetch(url):
    async with httpx.AsyncClient() as client:
        return await client.get(url)
""",
        """\
# grequests.get only builds a request
import grequests


async def prepare(urls):
    return [grequests.get(url) for url in urls]
""",
        """\
# a nested plain def run in an executor
import asyncio
import requests


async def fetch(url):
    def work():
        return requests.get(url).text

    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(None, work)
""",
        """\
# aiohttp.request is asynchronous
import aiohttp


async def fetch(url):
    async with aiohttp.request("GET", url) as resp:
        return await resp.text()
""",
    ),
    invalid=(
        """\
# a synchronous helper that blocks on every call
import requests


def get_json(url):
    return requests.get(url, timeout=10).json()


async def handle(request):
    return get_json(UPSTREAM_URL)  # HTP403
""",
        """\
# a requests session created in the coroutine
import requests


async def sync_profile(user):
    with requests.Session() as s:
        r = s.get(f"{API}/users/{user}")  # HTP403
        return r.json()
""",
        """\
# an httpx.Client, not an AsyncClient
import httpx


async def notify(event):
    client = httpx.Client()
    client.post(WEBHOOK_URL, json=event)  # HTP403
""",
        """\
# urlopen in a coroutine
from urllib.request import urlopen


async def status(url):
    with urlopen(url) as resp:  # HTP403
        return resp.status
""",
        """\
# niquests through a renamed import
from niquests import get as nget


async def fetch(url):
    return nget(url).text  # HTP403
""",
        """\
# httpx module function awaited nowhere
import httpx


async def fetch(url):
    return httpx.get(url).json()  # HTP403
""",
        """\
# a module-level session (as HTP102's fix writes) still blocks
import requests

_HTTP_SESSION = requests.Session()


async def fetch(url):
    return _HTTP_SESSION.get(url).json()  # HTP403
""",
    ),
)
