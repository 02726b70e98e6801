"""HTP201 unstreamed-download: a whole response body written to a file."""

from ..checks import downloads
from ..rule import FIX_UNSAFE, Rule

RULE = Rule(
    code="HTP201",
    name="unstreamed-download",
    summary="A whole response body held in memory, then written to a file",
    message="response body of {call}() is held whole in memory before {written_by}; {remedy}",
    fix=FIX_UNSAFE,
    fix_sites=(
        'report only where the body is handed to a function that writes it (the write is in that function), for a file opened for appending (or with a mode that is not a literal), a body used again after the write or read another way, or where a stub may stand for the response (the project patches or wraps the request function, method or client class, or the client is not bound to its constructor)'
    ),
    fix_title="Stream the body to the file in chunks",
    check=downloads.unstreamed_download,
    what_it_does="""\
Checks for downloads that read the whole response body and then write it to a file: `r.content` or `r.text`
(requests, niquests, httpx), `r.read()` (httpx), `await resp.read()` / `await resp.text()` (aiohttp), or
`urllib.request.urlopen(...).read()`, written with `f.write(...)` to an opened file,
`Path.write_bytes()` / `write_text()`, or `shutil.copyfileobj(io.BytesIO(...), f)` - directly or through a
local name that holds the body - or handed to a project function that writes that parameter to a file
(`save(path, r.content)` where `save` does `open(p, "wb").write(data)`), or the response handed to one that
writes its `.content` / `.text` (`save_cover(r)`); the message then names that function and where it is.
`check` follows such a function into another module of the project (under `--preview` for now).

The request must be made in the same function, through the library or through a known client: one bound
in that function, on `self`, at module level, returned by a client factory of the module, or passed in as
a parameter annotated as one or that a call in the module passes one to (the fix is
offered only for the library and for a client the function builds itself, see below). It is reported at the
request call, where `stream=True` goes, and also when the request already passes
`stream=True`: reading `.content` afterwards still holds the whole body in memory. Where the response is
also used with `iter_content()` / `iter_lines()` / `.raw` without `stream=True`, HTP202 is reported
instead.""",
    why_bad="""\
The whole body sits in memory before the first byte reaches the disk: a 2 GB download needs 2 GB of RAM (and
`r.text` decodes it into a second copy), which is how a download job gets killed by the out-of-memory killer
on the one large file. Nothing is written while the bytes arrive, so the network and the disk never work at
the same time. Written in chunks, the download needs one chunk of memory, whatever its size.""",
    example="""\
import requests


def download(url, path):
    r = requests.get(url, timeout=30)  # HTP201
    r.raise_for_status()
    with open(path, "wb") as f:
        f.write(r.content)
""",
    use_instead="""\
import requests


def download(url, path):
    with requests.get(url, stream=True, timeout=30) as r:
        r.raise_for_status()
        with open(path, "wb") as f:
            for chunk in r.iter_content(chunk_size=65536):
                f.write(chunk)
""",
    fix_safety="""\
The fix is unsafe (applied only by `fix --unsafe-fixes`; `fix` alone counts it as an unsafe fix not
applied), for requests, niquests, httpx (sync and `httpx.AsyncClient`), aiohttp and `urlopen`. For requests
the request becomes a `with` statement with `stream=True` (`with requests.get(url, stream=True) as r:`), so
its connection goes back to the pool when the block ends and HTP203 never follows;
`Path(p).write_bytes(r.content)` becomes `with ... as r, Path(p).open("wb") as f:`. The body is then
written in chunks: `for chunk in r.iter_content(chunk_size=65536): f.write(chunk)` for requests,
`httpx.stream()` / `client.stream()` with `iter_bytes()` for httpx,
`async for chunk in resp.content.iter_chunked(65536)` for aiohttp, and `shutil.copyfileobj(resp, f)` for
`urlopen`.

The file receives the same bytes when the transfer succeeds: `iter_content()` decodes gzip and deflate just
as `.content` does. What makes the fix unsafe is a transfer that breaks midway: before, the error came from
the request, before the file was opened, so the old file (or none) stayed; now the file holds the part
received so far. Code that skips a download when `path.exists()` then keeps that partial file for good
(measured against a server that cuts the body short: the original left no file and downloaded it whole on
the next run; the fixed program left the part received and kept it). Code that needs all-or-nothing should write
to a temporary file and rename it. Comments survive the fix.

No fix is offered (report only, the finding stays) where:
- the file is opened for appending (a mode with `a`: `"ab"`, `"a+b"`), or with a mode that is not a
  literal: after a transfer broken midway, a retry appends the whole body after the part already streamed
  into the file (measured: the whole body preceded by the part of the broken transfer), where the
  original wrote nothing on failure;
- the body is used again after the write, or read some other way (`r.json()`, a second `r.content`, a
  local `data = r.content` written and then returned or hashed), or the response is returned, handed on,
  read by a closure or kept after the block: a streamed response has no whole body left to give;
- a stub may stand for the response: the project patches or wraps the request function or method - as the
  module writes it (`mock.patch("pkg.mod.requests.get")`, `mock.patch.object(mod, "get")`), under the
  library's name (`monkeypatch.setattr(requests, "get", ...)`, `requests.get = wrapper`), what it calls on
  the way (`requests.Session.request`, `Session.send`) or the client's class - or the request goes through
  a client that is not bound once, in the same function, to its constructor. A stub response without
  `__enter__` or `iter_content` would break the rewritten code. `fix` gathers the patches from every file of
  the project (its tests included);
- an aiohttp response is not already an `async with` target, an awaited request is not an
  `httpx.AsyncClient` one, or an httpx call cannot become `stream(...)` (`*args`, `**kwargs`);
- `.text` is written to a text-mode file (`iter_content` with `decode_unicode=True` yields bytes when the
  server names no charset, where `.text` guesses one);
- the request passes `stream=False` or a `stream=` that is not a literal;
- the statement is not alone on its line, or the file is named by an expression a loop would evaluate
  again for every chunk.""",
    options="",
    references=(
        "https://requests.readthedocs.io/en/latest/user/advanced/#body-content-workflow",
        "https://requests.readthedocs.io/en/latest/user/quickstart/#raw-response-content",
        "https://www.python-httpx.org/quickstart/#streaming-responses",
        "https://docs.aiohttp.org/en/stable/client_quickstart.html#streaming-response-content",
    ),
    valid=(
        """\
# handed to a function that writes a different parameter
import requests


def save(path, data):
    with open(path, "w") as f:
        f.write(path)


def download(url, path):
    r = requests.get(url, timeout=30)
    save(path, r.content)
""",
        """\
# streamed with httpx.stream and iter_bytes
import httpx


def download(url, path):
    with httpx.stream("GET", url) as r, open(path, "wb") as f:
        for chunk in r.iter_bytes():
            f.write(chunk)
""",
        """\
# the response comes from a parameter, not a request made here
from pathlib import Path


def save(response, path):
    Path(path).write_bytes(response.content)
""",
        """\
# the body is parsed, not written to a file
import json
import requests


def snapshot(url, path):
    data = requests.get(url).json()
    with open(path, "w") as f:
        f.write(json.dumps(data))
""",
        """\
# written to an in-memory buffer, not a file
import io
import requests


def capture(url):
    buffer = io.StringIO()
    buffer.write(requests.get(url).text)
    return buffer
""",
        """\
# iter_content without stream=True is HTP202, not HTP201
import requests


def save(url, path):
    r = requests.get(url)
    with open(path, "wb") as f:
        for chunk in r.iter_content(4096):
            f.write(chunk)
        f.write(r.content)
""",
    ),
    invalid=(
        """\
# the body handed to a function that writes it to a file
import requests


def save(path, data):
    with open(path, "wb") as f:
        f.write(data)


def download(url, path):
    r = requests.get(url, timeout=30)  # HTP201
    save(path, r.content)
""",
        """\
# stream=True then .content still holds it all
from pathlib import Path
import requests


def save(url, dest):
    with requests.get(url, stream=True) as r:  # HTP201
        Path(dest).write_bytes(r.content)
""",
        """\
# httpx body through a local name to a file opened earlier
import httpx


def save(url, path):
    out = open(path, "wb")
    resp = httpx.get(url)  # HTP201
    data = resp.content
    out.write(data)
    out.close()
""",
        """\
# aiohttp body read whole and written
import aiohttp


async def save(url, path):
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as resp:  # HTP201
            body = await resp.read()
    with open(path, "wb") as f:
        f.write(body)
""",
        """\
# urlopen read whole into a file
import urllib.request


def save(url, path):
    with urllib.request.urlopen(url) as resp, open(path, "wb") as f:  # HTP201
        f.write(resp.read())
""",
        """\
# copyfileobj through a BytesIO copy of the body
import io
import shutil
import requests


def save(url, path):
    r = requests.get(url)  # HTP201
    with open(path, "wb") as f:
        shutil.copyfileobj(io.BytesIO(r.content), f)
""",
        """\
# text body written with Path.write_text
from pathlib import Path
import requests


def save_page(url, path):
    r = requests.get(url)  # HTP201
    Path(path).write_text(r.text, encoding="utf-8")
""",
        """\
# downloads in a loop are also HTP101
import requests

for name, url in FILES.items():
    r = requests.get(url)  # HTP101, HTP201
    with open(name, "wb") as f:
        f.write(r.content)
""",
    ),
)
