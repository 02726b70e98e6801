"""HTP202 stream-api-without-stream: iter_content(), iter_lines() or .raw on a requests response made without stream=True."""

from ..checks import downloads
from ..rule import FIX_SAFE, Rule

RULE = Rule(
    code="HTP202",
    name="stream-api-without-stream",
    summary="iter_content(), iter_lines() or .raw on a requests response made without stream=True",
    message="{use} on the response of {call}() made without stream=True: the whole body is already in memory; pass stream=True",
    fix=FIX_SAFE,
    fix_sites=(
        'safe only for `iter_content(chunk_size=N)` with a literal N whose chunks are only written or joined; unsafe for `iter_lines()`, `iter_content()` / `chunk_size=None` / a size that is not a literal, chunks used one by one, and `.raw`, whose chunks, lines or bytes change; report only where an iterator escapes the statement, the body is read twice, or a stub may stand for the response'
    ),
    fix_title="Pass stream=True to the request",
    check=downloads.stream_api_without_stream,
    what_it_does="""\
Checks for the streaming API of a requests response - `r.iter_content()`, `r.iter_lines()` or `r.raw` - on
a response whose request did not pass `stream=True` (or passed `stream=False`). It covers `requests.*`,
`niquests.*` and the methods of a `requests.Session` bound in the same function, on `self`, at module level,
made by a client factory of the module, or passed in as a parameter (annotated, or passed one by a call in
the module), and is reported at the request call, where `stream=True` goes. A `stream=` whose value is not a literal, or `**kwargs`, is left
alone.""",
    why_bad="""\
Without `stream=True`, requests downloads the whole body into memory before the call returns.
`iter_content()` and `iter_lines()` then only slice bytes that are already held, so the code looks like a
streaming download but uses as much memory as `r.content`, and its first chunk arrives after the last byte.
`r.raw` is worse: the body has already been read from it, so `r.raw.read()` and
`shutil.copyfileobj(r.raw, f)` get nothing and the file comes out empty.""",
    example="""\
import requests


def save_log(url, path):
    r = requests.get(url, timeout=30)  # HTP202
    with open(path, "wb") as f:
        for chunk in r.iter_content(chunk_size=65536):
            f.write(chunk)
""",
    use_instead="""\
import requests


def save_log(url, path):
    with requests.get(url, stream=True, timeout=30) as r:
        with open(path, "wb") as f:
            for chunk in r.iter_content(chunk_size=65536):
                f.write(chunk)
""",
    fix_safety="""\
Safety is decided per site. The fix adds `stream=True` to the request and makes the request a `with`
statement around the statements that use the response, so the connection is released when the block ends
(a streamed response that is never closed would be HTP203). A request that is already a `with` target only
gets `stream=True`, where every use of the response is inside that block.

Safe (applied by `fix`): `iter_content(N)` or `iter_content(chunk_size=N)` with a literal int N whose chunks
are only written (`for chunk in r.iter_content(N): f.write(chunk)`, also under `if chunk:`;
`f.writelines(r.iter_content(N))`) or joined (`b"".join(r.iter_content(N))`). Streaming moves where the
chunks split - a chunked body arrives in the server's chunks, at most N bytes each - but never the bytes
written or joined, decoded from gzip or deflate as before (measured: the same files from a plain and a
chunked body). One difference remains, as for HTP201: a transfer broken midway now fails inside the loop,
after the chunks received so far were written, where it failed at the request before the file was opened
(measured: a partial file of 99,328 bytes where the original left none).

Unsafe (applied only by `fix --unsafe-fixes`; `fix` alone counts it as an unsafe fix not applied):
- `iter_lines()`: a chunked body can split a CRLF across two chunks, and each split then yields an extra
  empty line (measured: chunks `alpha\\r` and `\\nbeta` give `b'alpha'`, `b''`, `b'beta'`);
- `iter_content()` and `iter_content(chunk_size=None)` (one chunk of the whole body before, the pieces as
  they arrive after), a chunk size that is not a literal, `decode_unicode=True`, and chunks used one by one
  (counted, printed, `next(...)`, collected in a list);
- `.raw`: without `stream=True` it has been drained, so `shutil.copyfileobj(r.raw, f)` wrote an empty file;
  with it, the file gets the body as sent, still gzip-encoded where the server compressed it.

No fix is offered (report only) where:
- an iterator over the body escapes its statement: stored (in a name, a list, a dict), returned, yielded,
  or passed to anything but a call that drains it at once (`list`, `b"".join`, `f.writelines`, `next`,
  `shutil.copyfileobj`). The `with` closes the response, and such an iterator comes back empty;
- the body is read twice (two iterations, or an iteration and `r.content`, `r.text`, `r.json()`,
  `r.apparent_encoding`): a streamed body can be read once ("The content for this response was already
  consumed");
- the response is used in another block (or after its `with` block), handed on, read by a closure, or
  the request is inline;
- a stub may stand for the response: the project patches or wraps the request function or method, what it
  calls on the way or the session class, or the session is not built in the function itself (on `self`, at
  module level, a parameter: it may be anything by the time this runs), as for HTP201; a stub response
  without `__enter__` breaks the `with`.

Comments survive the fix.""",
    options="",
    references=(
        "https://requests.readthedocs.io/en/latest/user/advanced/#body-content-workflow",
        "https://requests.readthedocs.io/en/latest/user/quickstart/#raw-response-content",
        "https://requests.readthedocs.io/en/latest/api/#requests.Response.iter_content",
    ),
    valid=(
        """\
# stream=True already passed
import requests


def tail(url):
    with requests.get(url, stream=True) as r:
        for line in r.iter_lines():
            print(line)
""",
        """\
# httpx response iter_lines is not requests' stream API
import httpx


def lines(url):
    r = httpx.get(url)
    return list(r.iter_lines())
""",
        """\
# stream= given by a variable
import requests


def fetch(url, streaming):
    r = requests.get(url, stream=streaming)
    return r.iter_content(1024)
""",
        """\
# stream passed through **kwargs
import requests


def fetch(url, **kwargs):
    r = requests.get(url, **kwargs)
    return r.raw
""",
        """\
# a response handed in by the caller
def copy_raw(response, f):
    for chunk in response.iter_content(4096):
        f.write(chunk)
""",
    ),
    invalid=(
        """\
# iter_lines on a session request
import requests


def events(url):
    with requests.Session() as s:
        r = s.get(url)  # HTP202
        for line in r.iter_lines():
            print(line)
""",
        """\
# raw copied to a file gets nothing
import shutil
import requests


def save(url, path):
    r = requests.get(url)  # HTP202
    with open(path, "wb") as f:
        shutil.copyfileobj(r.raw, f)
""",
        """\
# an explicit stream=False
import requests


def save(url, f):
    r = requests.get(url, stream=False)  # HTP202
    for chunk in r.iter_content(8192):
        f.write(chunk)
""",
        """\
# already a with statement, still no stream=True
import requests


def save(url, f):
    with requests.post(url, json=QUERY) as r:  # HTP202
        for chunk in r.iter_content(1024):
            f.write(chunk)
""",
        """\
# niquests behaves like requests
import niquests


def tail(url):
    r = niquests.get(url)  # HTP202
    return list(r.iter_lines())
""",
    ),
)
