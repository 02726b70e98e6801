"""HTP201/HTP202 fix safety, proven by running programs before and after `fix` against a real local server.

Each program is run in its own interpreter in a fresh folder (stdout, exit code and the files it writes are
compared) against a server on 127.0.0.1 that can break a body midway (a Content-Length larger than what it
sends), send a chunked body with a CRLF split across two chunks, or send a plain body. What is shown:
- HTP201 is unsafe: a download-if-missing program keeps a partial file for good once streamed; `fix` alone
  leaves it and says so, `--unsafe-fixes` applies it.
- HTP202 `iter_lines()` is unsafe: a chunked body with a CRLF split gives an extra empty line once streamed;
  `fix` alone leaves it.
- HTP202 `iter_content(chunk_size=1024)` written to a file is safe: the same files after `fix`.
- HTP201 with a file opened for appending is report-only: a retry after a broken transfer would append the
  whole body after the part streamed before (shown with the rewrite the fix would have made).
- HTP203 where the project's tests stub the session method is report-only: the stub response has no
  `__enter__`, so the `with` the fix would write fails the project's own check.
Two tables then pin down the per-site classes these runs justify, through `fix_source` alone: which file
openers append (HTP201 report-only), and which HTP202 stream uses are safe, unsafe or report-only.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, Iterator, NamedTuple, Set
from urllib.parse import parse_qs, urlsplit

import pytest

from flake8_http_pool.engine import check_source

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each program runs against a
# real server before and after fix
pytestmark = pytest.mark.slow

pytest.importorskip("requests")

_BLOCK = bytes(range(256)) * 64  # 16 KiB
# A chunked body whose CRLF line ends are cut in two between chunks.
CRLF_CHUNKS = (b"alpha\r", b"\nbeta\r", b"\ngamma\r\n", b"delta")


def body(size: int) -> bytes:
    """The bytes /blob and /flaky send for `size`."""
    return (_BLOCK * (size // len(_BLOCK) + 1))[:size]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        size = int(query.get("size", ["0"])[0])
        if parts.path == "/blob":
            self._send(body(size), len(body(size)))
        elif parts.path.startswith("/flaky/"):
            # The first request for a key breaks midway: half the body, then the connection closes.
            first = self.server.first_time(parts.path)  # type: ignore[attr-defined]
            self._send(body(size)[: size // 2] if first else body(size), size)
        elif parts.path == "/chunked":
            self._send_chunked(CRLF_CHUNKS)
        else:
            self.send_error(404)

    def _send(self, data: bytes, length: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(length))
        if len(data) < length:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_chunked(self, chunks: tuple) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
            time.sleep(0.02)  # each chunk arrives on its own
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self._seen: Set[str] = set()
        self._lock = threading.Lock()

    def first_time(self, key: str) -> bool:
        with self._lock:
            first = key not in self._seen
            self._seen.add(key)
            return first


@pytest.fixture
def base() -> Iterator[str]:
    """The base URL of a server on 127.0.0.1 (an ephemeral port), stopped after the test."""
    httpd = _Server()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


class Run(NamedTuple):
    stdout: str
    code: int
    files: Dict[str, bytes]  # what the program wrote in its folder


def _run(program: Path, folder: Path, *args: str) -> Run:
    """Run `program` in `folder` (created if needed) with `args`; what it printed, its exit code, its files."""
    folder.mkdir(exist_ok=True)
    result = subprocess.run(
        [sys.executable, str(program), *args], capture_output=True, text=True, timeout=60, cwd=folder
    )
    assert "Traceback" not in result.stderr, result.stderr
    files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
    return Run(result.stdout, result.returncode, files)


def _fix(path: Path, *flags: str) -> str:
    """`python -m flake8_http_pool fix` on `path`: its summary."""
    result = subprocess.run(
        [sys.executable, "-m", "flake8_http_pool", "fix", "--exit-zero", *flags, str(path)],
        capture_output=True, text=True, timeout=120, cwd=path.parent,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def _program(tmp_path: Path, source: str, name: str = "program.py") -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


# -- HTP201: unsafe -------------------------------------------------------------------------------------------
DOWNLOAD_IF_MISSING = """\
import os
import sys

import requests


def download(url, path):
    if os.path.exists(path):
        return "kept " + path
    r = requests.get(url, timeout=10)
    with open(path, "wb") as f:
        f.write(r.content)
    return "downloaded " + path


base, key = sys.argv[1], sys.argv[2]
try:
    print(download(base + "/flaky/" + key + "?size=200000", "data.bin"))
except requests.RequestException as error:
    print("failed:", type(error).__name__)
    sys.exit(1)
"""


def test_htp201_partial_download_is_kept_so_the_fix_waits_for_unsafe_fixes(tmp_path: Path, base: str) -> None:
    assert [f.code for f in check_source(DOWNLOAD_IF_MISSING)] == ["HTP201"]
    program = _program(tmp_path, DOWNLOAD_IF_MISSING)
    # Run twice (a cron job): the first transfer breaks midway, the second run finds what the first left.
    before = [_run(program, tmp_path / "before", base, "before") for _ in range(2)]
    assert [r.code for r in before] == [1, 0]
    assert before[0].stdout == "failed: ChunkedEncodingError\n" and before[0].files == {}
    assert before[1].files == {"data.bin": body(200000)}

    summary = _fix(program)
    assert program.read_text() == DOWNLOAD_IF_MISSING, "HTP201's unsafe fix ran without --unsafe-fixes"
    assert "1 unsafe fix not applied (HTP201: 1); use --unsafe-fixes to apply" in summary

    summary = _fix(program, "--unsafe-fixes")
    fixed = program.read_text()
    assert "stream=True" in fixed and "iter_content" in fixed and "HTP201: 1" in summary
    assert not [f for f in check_source(fixed) if f.code.startswith("HTP2")]
    after = [_run(program, tmp_path / "after", base, "after") for _ in range(2)]
    # What makes it unsafe: the broken transfer leaves half a file, which the next run keeps for good.
    assert [r.code for r in after] == [1, 0]
    assert after[0].stdout == "failed: ChunkedEncodingError\n"
    partial = after[0].files["data.bin"]
    assert 0 < len(partial) <= 100000 and body(200000).startswith(partial), len(partial)
    assert after[1].stdout == "kept data.bin\n" and after[1].files == {"data.bin": partial}


# -- HTP202 iter_lines(): unsafe ---------------------------------------------------------------------------
TAIL_LINES = """\
import sys

import requests


def tail(url):
    r = requests.get(url, timeout=10)
    for line in r.iter_lines():
        print(repr(line))


tail(sys.argv[1] + "/chunked")
"""


def test_htp202_iter_lines_splits_a_crlf_across_chunks_so_the_fix_is_unsafe(tmp_path: Path, base: str) -> None:
    assert [f.code for f in check_source(TAIL_LINES)] == ["HTP202"]
    program = _program(tmp_path, TAIL_LINES)
    before = _run(program, tmp_path / "before", base)
    assert before.code == 0 and before.stdout == "b'alpha'\nb'beta'\nb'gamma'\nb'delta'\n"

    summary = _fix(program)
    assert program.read_text() == TAIL_LINES, "HTP202's unsafe iter_lines() fix ran without --unsafe-fixes"
    assert "1 unsafe fix not applied (HTP202: 1)" in summary

    _fix(program, "--unsafe-fixes")
    fixed = program.read_text()
    assert "stream=True" in fixed and not check_source(fixed)
    after = _run(program, tmp_path / "after", base)
    # What makes it unsafe: each CRLF cut in two by a chunk boundary yields an extra empty line.
    assert after.code == 0 and after.stdout != before.stdout
    assert after.stdout.count("b''") == 2 and after.stdout.replace("b''\n", "") == before.stdout


# -- HTP202 iter_content(chunk_size=1024) written: safe ---------------------------------------------------------
SAVE_CHUNKS = """\
import hashlib
import sys

import requests


def save(url, path):
    r = requests.get(url, timeout=10)
    r.raise_for_status()
    with open(path, "wb") as f:
        for chunk in r.iter_content(chunk_size=1024):
            f.write(chunk)
    return r.status_code


base = sys.argv[1]
print(save(base + "/blob?size=300001", "plain.bin"))
print(save(base + "/chunked", "chunked.bin"))
for name in ("plain.bin", "chunked.bin"):
    with open(name, "rb") as f:
        print(name, hashlib.sha256(f.read()).hexdigest())
"""


def test_htp202_iter_content_written_to_a_file_is_safe(tmp_path: Path, base: str) -> None:
    assert [f.code for f in check_source(SAVE_CHUNKS)] == ["HTP202"]
    program = _program(tmp_path, SAVE_CHUNKS)
    before = _run(program, tmp_path / "before", base)
    assert before.code == 0, before
    assert before.files == {"plain.bin": body(300001), "chunked.bin": b"".join(CRLF_CHUNKS)}

    summary = _fix(program)  # safe: no --unsafe-fixes
    fixed = program.read_text()
    assert "with requests.get(url, timeout=10, stream=True) as r:" in fixed, summary
    assert "unsafe" not in summary and not check_source(fixed)
    after = _run(program, tmp_path / "after", base)
    assert after == before


# -- HTP201 append mode with a retry: report-only ---------------------------------------------------------------
APPEND_WITH_RETRY = """\
import sys
import time

import requests


def append_download(url, path):
    for attempt in range(3):
        try:
            r = requests.get(url, timeout=10)
            with open(path, "ab") as f:
                f.write(r.content)
            return attempt
        except requests.RequestException:
            time.sleep(0.05)
    return None


print(append_download(sys.argv[1] + "/flaky/" + sys.argv[2] + "?size=200000", "log.bin"))
"""


def test_htp201_append_mode_with_a_retry_is_report_only(tmp_path: Path, base: str) -> None:
    assert [f.code for f in check_source(APPEND_WITH_RETRY)] == ["HTP201"]
    program = _program(tmp_path, APPEND_WITH_RETRY)
    before = _run(program, tmp_path / "before", base, "before")
    assert before.code == 0 and before.stdout == "1\n"
    assert before.files == {"log.bin": body(200000)}, "the original appends the body once"

    for flags in ((), ("--unsafe-fixes",)):
        summary = _fix(program, *flags)
        assert program.read_text() == APPEND_WITH_RETRY, flags
        assert "unsafe fix" not in summary, "a report-only site is not counted as a held unsafe fix"
    assert [f.code for f in check_source(program.read_text())] == ["HTP201"]

    # Why: the rewrite the fix would make (the same program streamed) appends the broken part, then the body.
    streamed = APPEND_WITH_RETRY.replace(
        "            r = requests.get(url, timeout=10)\n"
        "            with open(path, \"ab\") as f:\n"
        "                f.write(r.content)\n",
        "            with requests.get(url, timeout=10, stream=True) as r:\n"
        "                with open(path, \"ab\") as f:\n"
        "                    for chunk in r.iter_content(chunk_size=65536):\n"
        "                        f.write(chunk)\n",
    )
    assert streamed != APPEND_WITH_RETRY
    would_be = _run(_program(tmp_path, streamed, "streamed.py"), tmp_path / "streamed", base, "streamed")
    assert would_be.stdout == "1\n"
    written = would_be.files["log.bin"]
    assert written.endswith(body(200000)) and len(written) > 200000, "the broken part is left before the body"
    assert body(200000).startswith(written[: len(written) - 200000])


# -- HTP203 where the project's tests stub the session method: report-only ---------------------------------------
APP = """\
import requests


def content_length(url):
    with requests.Session() as s:
        r = s.get(url, stream=True)
        return r.headers.get("content-length")
"""

APP_TEST = """\
from unittest import mock

import requests

from shop import app


class StubResponse:
    headers = {"content-length": "3"}


with mock.patch.object(requests.Session, "get", return_value=StubResponse()):
    print(app.content_length("http://stub.invalid/"))
"""


def test_htp203_left_alone_where_the_project_stubs_the_session_method(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    app = package / "app.py"
    app.write_text(APP)
    check = _program(tmp_path, APP_TEST, "check_app.py")
    assert [f.code for f in check_source(APP)] == ["HTP203"]
    before = _run(check, tmp_path, "unused")
    assert before.code == 0 and before.stdout == "3\n"

    for flags in ((), ("--unsafe-fixes",)):
        _fix(app, *flags)
        assert app.read_text() == APP, "the stubbed site was rewritten"
    assert _run(check, tmp_path, "unused") == before

    # Why: with the stub standing for the response, the `with` the fix would write fails.
    app.write_text(APP.replace(
        "        r = s.get(url, stream=True)\n        return r.headers.get(\"content-length\")\n",
        "        with s.get(url, stream=True) as r:\n            return r.headers.get(\"content-length\")\n",
    ))
    assert app.read_text() != APP and not check_source(app.read_text())
    result = subprocess.run([sys.executable, str(check)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    # Python 3.11 says "does not support the context manager protocol", older ones "AttributeError: __enter__".
    assert result.returncode != 0 and ("context manager" in result.stderr or "__enter__" in result.stderr)


# -- HTP201: which openers append (planner only, no server) -------------------------------------------------------
@pytest.mark.parametrize(
    "opener, fixed",
    [
        ('open(path, "wb")', True),
        ('open(path, mode="xb")', True),
        ('open(path, "r+b")', True),
        ('open(path, "ab")', False),
        ('open(path, mode="a+b")', False),
        ("open(path, MODE)", False),  # not a literal: may append
        ('open(path, **OPTIONS)', False),
        ('io.open(path, "ab")', False),
        ('io.open(path, "wb")', True),
        ('gzip.open(path, "ab")', False),
        ('os.fdopen(os.open(path, os.O_WRONLY), "ab")', False),
        ('os.fdopen(os.open(path, os.O_WRONLY), "wb")', True),
        ('Path(path).open("ab")', False),
        ('Path(path).open(mode="wb")', True),
        ('tempfile.NamedTemporaryFile(delete=False)', True),  # "w+b" when no mode is given
        ('tempfile.NamedTemporaryFile("ab", delete=False)', False),
    ],
)
def test_htp201_append_modes_are_report_only(opener: str, fixed: bool) -> None:
    from flake8_http_pool.fixing import fix_source

    source = (
        "import gzip\nimport io\nimport os\nimport tempfile\nfrom pathlib import Path\n\nimport requests\n\n"
        "MODE = 'wb'\nOPTIONS = {}\n\n\n"
        f"def save(url, path):\n    r = requests.get(url)\n    with {opener} as f:\n        f.write(r.content)\n"
    )
    assert [f.code for f in check_source(source)] == ["HTP201"], opener
    result = fix_source(source, unsafe=True)
    assert result.error is None
    assert bool(result.applied["HTP201"]) is fixed, result.text


# -- HTP202: each stream use's class (planner only, no server) ----------------------------------------------------
@pytest.mark.parametrize(
    "use, expected",
    [
        ("for chunk in r.iter_content(1024):\n        out.write(chunk)", "safe"),
        ("for chunk in r.iter_content(chunk_size=8192):\n        if chunk:\n            out.write(chunk)", "safe"),
        ("out.writelines(r.iter_content(4096))", "safe"),
        ('data = b"".join(r.iter_content(1024))', "safe"),
        ("for chunk in r.iter_content(1024, decode_unicode=False):\n        out.write(chunk)", "safe"),
        ("for chunk in r.iter_content():\n        out.write(chunk)", "unsafe"),
        ("for chunk in r.iter_content(chunk_size=None):\n        out.write(chunk)", "unsafe"),
        ("for chunk in r.iter_content(SIZE):\n        out.write(chunk)", "unsafe"),
        ("for chunk in r.iter_content(True):\n        out.write(chunk)", "unsafe"),
        ('data = "".join(r.iter_content(1024, decode_unicode=True))', "unsafe"),
        ("for chunk in r.iter_content(1024):\n        out.write(chunk)\n        print(len(chunk))", "unsafe"),
        ("for chunk in r.iter_content(1024):\n        out.write(chunk)\n    else:\n        out.flush()", "unsafe"),
        ("for line in r.iter_lines():\n        out.write(line)", "unsafe"),
        ("for n, line in enumerate(r.iter_lines()):\n        print(n, line)", "unsafe"),
        ("print(list(zip(range(3), r.iter_lines())))", "unsafe"),
        ("lines = enumerate(r.iter_lines())", "report-only"),
        ("shutil.copyfileobj(r.raw, out)", "unsafe"),
        ("data = r.raw.read()", "unsafe"),
        ("it = r.iter_content(1024)", "report-only"),
        ("PENDING.append(r.iter_lines())", "report-only"),
        ("sink(r.iter_content(1024))", "report-only"),
        ("PENDING.extend([r.iter_lines()])", "report-only"),
        ("sink(line for line in r.iter_lines())", "report-only"),
        ("out.write(b''.join(r.iter_content(1024)))\n    out.write(r.content)", "report-only"),
    ],
)
def test_htp202_site_classes(use: str, expected: str) -> None:
    from flake8_http_pool.fixing import fix_source

    source = (
        "import shutil\n\nimport requests\n\nPENDING = []\nSIZE = 1024\n\n\n"
        f"def save(url, out, sink):\n    r = requests.get(url)\n    {use}\n"
    )
    assert [f.code for f in check_source(source)] == ["HTP202"], use
    safe, unsafe = fix_source(source), fix_source(source, unsafe=True)
    assert safe.error is None and unsafe.error is None
    found = (
        "safe" if safe.applied["HTP202"]
        else "unsafe" if unsafe.applied["HTP202"] and safe.unsafe_left["HTP202"]
        else "report-only" if not unsafe.applied["HTP202"] and not safe.unsafe_left["HTP202"]
        else "inconsistent"
    )
    assert found == expected, (safe, unsafe)
