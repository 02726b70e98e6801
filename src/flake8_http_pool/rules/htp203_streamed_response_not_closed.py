"""HTP203 streamed-response-not-closed: a stream=True response that is never closed."""

from ..checks import downloads
from ..rule import FIX_SAFE, Rule

RULE = Rule(
    code="HTP203",
    name="streamed-response-not-closed",
    summary="A stream=True response that is never closed, so its connection never returns to the pool",
    message="stream=True response from {call}() is never closed, so its connection never returns to the pool; use it in a `with` block",
    fix=FIX_SAFE,
    fix_sites=(
        "report only where the response is used outside one block, an iterator over its body escapes its statement, or a stub may stand for it (the project patches the session's method)"
    ),
    fix_title="Use the response in a `with` block",
    check=downloads.streamed_response_not_closed,
    what_it_does="""\
Checks for a response requested with `stream=True` from a pooled client - a `requests.Session` (or
niquests') method, on a session bound in the function, on `self`, at module level or passed in as an
annotated parameter or one a call in the module passes a session to (a session a client factory of the
module returned counts too), or any `.send(request, stream=True)` as in httpx - that the function neither uses as a
`with` target, nor closes (`r.close()`, `r.raw.close()`, `r.raw.release_conn()`), nor hands on - returned,
yielded, passed to another call, or stored outside the function. It is reported at the request call.

Not for the library's module-level functions (`requests.get(url, stream=True)`): the session such a call
makes is closed when it returns, so there is no pool to starve, and the socket closes with the response.""",
    why_bad="""\
With `stream=True` only the headers have been read when the call returns, and the connection stays checked
out of the pool until the body is read to the end or the response is closed. Code that reads part of the
body, or only the status and headers, keeps the connection busy until the garbage collector gets to the
response. In a loop or a busy service the pool runs dry: urllib3 opens extra connections beyond the pool
size and logs "Connection pool is full, discarding connection" when they come back, or, with
`pool_block=True`, every request waits for a connection that is never returned. The requests documentation
recommends a `with` statement for exactly this reason.""",
    example="""\
import requests


SESSION = requests.Session()


def first_line(url):
    r = SESSION.get(url, stream=True, timeout=10)  # HTP203
    for line in r.iter_lines():
        return line
""",
    use_instead="""\
import requests


SESSION = requests.Session()


def first_line(url):
    with SESSION.get(url, stream=True, timeout=10) as r:
        for line in r.iter_lines():
            return line
""",
    fix_safety="""\
The fix is safe where the response is used only inside one block: it wraps that use in `with ... as r:`.
Leaving the block calls `r.close()`, which returns the connection to the pool - what the program needed
anyway - and every use of the response, and of any iterator over its body, is still inside the block, so
nothing reads it after it is closed. Comments survive the fix.

No fix is offered (report only) where:
- the response is used across blocks, after a second binding of its name, by a closure, or on a line
  shared with another statement;
- an iterator over the body escapes the statement that made it (stored, returned, passed to anything but a
  call that drains it at once): closed by the `with`, it would come back empty;
- a stub may stand for the response: the project patches or wraps the session's method
  (`mock.patch.object(requests.Session, "get", ...)`, `mocker.patch("requests.Session.request")`), what it
  calls on the way, the session class, or the module function (`requests.get`), or the client is not bound
  once, in the same function, to its constructor. A stub response without `__enter__` breaks the `with`.
  `fix` gathers the patches from every file of the project (its tests included);
- the response comes from httpx `send(..., stream=True)`: close it with `response.close()` or
  `client.stream(...)` by hand.""",
    options="",
    references=(
        "https://requests.readthedocs.io/en/latest/user/advanced/#body-content-workflow",
        "https://www.python-httpx.org/advanced/clients/",
        "https://urllib3.readthedocs.io/en/stable/advanced-usage.html",
    ),
    valid=(
        """\
# closed in a finally block
import requests


def head_bytes(url):
    r = requests.get(url, stream=True)
    try:
        return r.raw.read(512)
    finally:
        r.close()
""",
        """\
# returned to the caller, who owns it
import requests


def open_stream(url):
    return requests.get(url, stream=True)
""",
        """\
# stored on self for later
import requests


class Download:
    def start(self, url):
        self.response = requests.get(url, stream=True)
""",
        """\
# handed to contextlib.closing
import contextlib
import requests


def size(url):
    with contextlib.closing(requests.get(url, stream=True)) as r:
        return r.headers.get("content-length")
""",
        """\
# a module-level function: its own session is closed when it returns
import requests


def first_line(url):
    r = requests.get(url, stream=True)
    for line in r.iter_lines():
        return line
""",
        """\
# raw connection released by hand
import requests


def probe(url):
    r = requests.get(url, stream=True)
    status = r.status_code
    r.raw.release_conn()
    return status
""",
    ),
    invalid=(
        """\
# headers only, in a session loop
import requests


def sizes(urls):
    out = {}
    with requests.Session() as s:
        for url in urls:
            r = s.get(url, stream=True)  # HTP203
            out[url] = r.headers.get("content-length")
    return out
""",
        """\
# httpx send with stream=True
import httpx


def status(url):
    client = httpx.Client()
    request = client.build_request("GET", url)
    response = client.send(request, stream=True)  # HTP203
    return response.status_code
""",
        """\
# partial read of raw, through the session on self
import requests


class Probe:
    def __init__(self):
        self.session = requests.Session()

    def magic(self, url):
        r = self.session.get(url, stream=True)  # HTP203
        return r.raw.read(4)
""",
        """\
# niquests streamed response left open
import niquests


def peek(session: niquests.Session, url):
    r = session.get(url, stream=True)  # HTP203
    return next(r.iter_content(256))
""",
        """\
# every iteration leaves a connection checked out of the module's pool
import requests

SESSION = requests.Session()


def statuses(urls):
    for url in urls:
        r = SESSION.get(url, stream=True)  # HTP203
        print(r.status_code)
""",
    ),
)
