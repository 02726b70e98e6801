"""`fix` end to end with real clients: a program prints the same before and after the fix, and opens fewer
connections to a real HTTP/1.1 keep-alive server.

Each legacy program is written as users write it, takes the server's base URL from argv, and runs in its own
interpreter before and after `python -m flake8_http_pool fix` rewrites it. The server (tests/safety_server.py,
shared with the fix-safety harness), on 127.0.0.1 only, counts the TCP connections it accepts.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

from flake8_http_pool.engine import check_source
from flake8_http_pool.fixes import FIXES
from safety_server import PAGES, SafetyServer, blob

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each case runs a program
# against a real server before and after fix
pytestmark = pytest.mark.slow

Server = SafetyServer


def _run_program(path: Path, server: Server) -> Tuple[str, int]:
    """Run the program against the server: its stdout and how many connections it opened."""
    before = server.connections
    result = subprocess.run(
        [sys.executable, str(path), server.base], capture_output=True, text=True, timeout=120, cwd=path.parent
    )
    assert result.returncode == 0, result.stderr
    return result.stdout, server.connections - before


def _fix(path: Path, *flags: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "flake8_http_pool", "fix", "--exit-zero", *flags, str(path)],
        capture_output=True, text=True, timeout=120, cwd=path.parent,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def _before_and_after(tmp_path: Path, server: Server, source: str, *flags: str) -> Tuple[str, int, int, str]:
    """Run, fix, run again: (stdout, connections before, connections after, the fixed source)."""
    path = tmp_path / "legacy.py"
    path.write_text(source)
    out_before, before = _run_program(path, server)
    _fix(path, *flags)
    fixed = path.read_text()
    assert fixed != source, "fix changed nothing"
    out_after, after = _run_program(path, server)
    assert out_after == out_before
    assert out_before.strip(), "the program printed nothing"
    return out_before, before, after, fixed


def _need(*modules: str) -> None:
    for module in modules:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed")


# -- HTP101, safe --------------------------------------------------------------------------------------
REQUESTS_LOOP = """\
import sys

import requests

BASE = sys.argv[1]
for n in range(20):
    response = requests.get(f"{BASE}/item/{n}", timeout=10)
    print(response.json()["id"])
"""

REQUESTS_COMPREHENSION = """\
import sys

import requests

BASE = sys.argv[1]
ids = [requests.get(BASE + "/item/" + str(n), timeout=10).json()["id"] for n in range(20)]
print(",".join(ids))
"""

REQUESTS_PAGINATION = """\
import sys

import requests

base = sys.argv[1]
url = base + "/pages?page=0"
seen = []
while url:
    data = requests.get(url, timeout=10).json()
    seen.extend(data["items"])
    url = base + data["next"] if data["next"] else None
print(seen)
"""

HTTPX_LOOP = """\
import sys

import httpx


def main(base):
    for n in range(20):
        print(httpx.get(f"{base}/item/{n}").json()["id"])


if __name__ == "__main__":
    main(sys.argv[1])
"""

AIOHTTP_LOOP = """\
import asyncio
import sys

import aiohttp


async def main(base):
    for n in range(20):
        async with aiohttp.request("GET", f"{base}/item/{n}") as response:
            print((await response.json())["id"])


asyncio.run(main(sys.argv[1]))
"""

AIOHTTP_ASYNC_FOR = """\
import asyncio
import sys

import aiohttp


async def numbers(count):
    for n in range(count):
        yield n


async def main(base):
    async for n in numbers(20):
        async with aiohttp.request("GET", f"{base}/item/{n}") as response:
            print(await response.text())


asyncio.run(main(sys.argv[1]))
"""

REQUESTS_GENERATOR = """\
import sys

import requests

BASE = sys.argv[1]
responses = (requests.get(f"{BASE}/item/{n}", timeout=10) for n in range(20))
print("fetching")
for response in responses:
    print(response.json()["id"])
"""

# The default suite runs one shape per library; `.ci/run` runs them all (-m 'slow or not slow').
LOOP_PROGRAMS = [
    pytest.param(REQUESTS_GENERATOR, ("requests",), 20, id="requests-generator-consumed-later", marks=pytest.mark.slow),
    pytest.param(REQUESTS_LOOP, ("requests",), 20, id="requests-loop"),
    pytest.param(REQUESTS_COMPREHENSION, ("requests",), 20, id="requests-comprehension", marks=pytest.mark.slow),
    pytest.param(REQUESTS_PAGINATION, ("requests",), PAGES, id="requests-while-pagination", marks=pytest.mark.slow),
    pytest.param(HTTPX_LOOP, ("httpx",), 20, id="httpx-loop"),
    pytest.param(AIOHTTP_LOOP, ("aiohttp",), 20, id="aiohttp-loop"),
    pytest.param(AIOHTTP_ASYNC_FOR, ("aiohttp",), 20, id="aiohttp-async-for", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("source, modules, requests_made", LOOP_PROGRAMS)
def test_loop_fix_keeps_output_and_reuses_one_connection(
    tmp_path: Path, server: Server, source: str, modules: Tuple[str, ...], requests_made: int
) -> None:
    _need(*modules)
    assert [f.code for f in check_source(source)] == ["HTP101"]
    _, before, after, fixed = _before_and_after(tmp_path, server, source, "--unsafe-fixes")  # HTP101: unsafe
    assert before == requests_made, "each unpooled call should have opened its own connection"
    assert after == 1, fixed
    assert not check_source(fixed)


# -- HTP102, unsafe ------------------------------------------------------------------------------------
HOT_FUNCTION_LOOP = """\
import sys

import requests


def fetch(base, n):
    return requests.get(f"{base}/item/{n}", timeout=10).json()["id"]


for n in range(20):
    print(fetch(sys.argv[1], n))
"""

HOT_FUNCTION_THREAD_POOL = """\
import sys
from concurrent.futures import ThreadPoolExecutor

import requests

BASE = sys.argv[1]


def fetch(n):
    return requests.get(f"{BASE}/item/{n}", timeout=10).json()["id"]


with ThreadPoolExecutor(max_workers=4) as pool:
    print(list(pool.map(fetch, range(20))))
"""


def _need_htp102() -> None:
    if "HTP102" not in FIXES:
        pytest.skip("HTP102's fix is not registered yet")


def test_hot_function_fix_needs_unsafe_and_then_reuses_one_connection(tmp_path: Path, server: Server) -> None:
    _need("requests")
    _need_htp102()
    path = tmp_path / "unchanged.py"
    path.write_text(HOT_FUNCTION_LOOP)
    _fix(path)
    assert path.read_text() == HOT_FUNCTION_LOOP, "an unsafe fix ran without --unsafe-fixes"
    _, before, after, fixed = _before_and_after(tmp_path, server, HOT_FUNCTION_LOOP, "--unsafe-fixes")
    assert before == 20
    assert after == 1, fixed


def test_hot_function_over_a_thread_pool_keeps_one_connection_per_worker(tmp_path: Path, server: Server) -> None:
    _need("requests")
    _need_htp102()
    _, before, after, fixed = _before_and_after(tmp_path, server, HOT_FUNCTION_THREAD_POOL, "--unsafe-fixes")
    assert before == 20
    assert 1 <= after <= 4, fixed  # at most one per worker in flight at once


# -- HTP301, safe ----------------------------------------------------------------------------------------
POOL_BURSTS = """\
import sys
from concurrent.futures import ThreadPoolExecutor

import requests

BASE = sys.argv[1]
session = requests.Session()


def fetch(n):
    return session.get(f"{BASE}/item/{n}?slow=1", timeout=10).json()["id"]


with ThreadPoolExecutor(max_workers=16) as pool:
    for burst in range(3):
        print(burst, list(pool.map(fetch, range(burst * 16, burst * 16 + 16))))
"""


def test_pool_sized_to_the_workers_stops_discarding_connections(tmp_path: Path, server: Server) -> None:
    _need("requests")
    assert [f.code for f in check_source(POOL_BURSTS)] == ["HTP301"]
    _, before, after, fixed = _before_and_after(tmp_path, server, POOL_BURSTS)
    assert "HTTPAdapter(pool_connections=16, pool_maxsize=16)" in fixed
    # 16 workers on a pool of 10: each burst after the first reopens what the last one discarded.
    assert after <= 16 < before, (before, after)
    assert not check_source(fixed)


# -- HTP402, safe ----------------------------------------------------------------------------------------
LATE_PATCH = """\
import sys

import requests
from gevent import monkey

monkey.patch_all()

base = sys.argv[1]
with requests.Session() as session:
    print([session.get(f"{base}/item/{n}", timeout=10).json()["id"] for n in range(5)])
"""


def test_late_patch_moved_to_the_top_keeps_output(tmp_path: Path, server: Server) -> None:
    _need("requests", "gevent")
    _, _, after, fixed = _before_and_after(tmp_path, server, LATE_PATCH)
    lines: List[str] = fixed.splitlines()
    assert lines.index("monkey.patch_all()") < lines.index("import requests")
    assert after == 1
    assert not check_source(fixed)


# -- HTP104, unsafe ----------------------------------------------------------------------------------------
AIOHTTP_SESSION_PER_REQUEST_LOOP = """\
import asyncio
import sys

import aiohttp


async def fetch(url):
    async with aiohttp.ClientSession() as s:
        async with s.get(url) as r:
            return await r.text()


async def main(base):
    for n in range(20):
        print(await fetch(f"{base}/item/{n}"))


asyncio.run(main(sys.argv[1]))
"""

AIOHTTP_SESSION_PER_REQUEST_GATHER = """\
import asyncio
import sys

import aiohttp


async def fetch(url):
    async with aiohttp.ClientSession() as s:
        async with s.get(url) as r:
            return await r.text()


async def main(base):
    urls = [f"{base}/item/{n}" for n in range(20)]
    for _ in range(2):
        print(await asyncio.gather(*(fetch(u) for u in urls)))


asyncio.run(main(sys.argv[1]))
"""

REQUESTS_SESSION_PER_CALL = """\
import sys

import requests


def download(url):
    s = requests.Session()
    return s.get(url, timeout=10).json()["id"]


def main(base):
    for n in range(20):
        print(download(f"{base}/item/{n}"))


main(sys.argv[1])
"""


def _need_htp104() -> None:
    if "HTP104" not in FIXES:
        pytest.skip("HTP104's fix is not registered yet")


@pytest.mark.parametrize(
    "source, modules",
    [
        pytest.param(AIOHTTP_SESSION_PER_REQUEST_LOOP, ("aiohttp",), id="aiohttp-session-per-request-loop"),
        pytest.param(REQUESTS_SESSION_PER_CALL, ("requests",), id="requests-session-per-call-loop"),
    ],
)
def test_client_per_request_in_a_loop_becomes_one_connection(
    tmp_path: Path, server: Server, source: str, modules: Tuple[str, ...]
) -> None:
    _need(*modules)
    _need_htp104()
    assert [f.code for f in check_source(source)] == ["HTP104"]
    path = tmp_path / "unchanged.py"
    path.write_text(source)
    _fix(path)
    assert path.read_text() == source, "an unsafe fix ran without --unsafe-fixes"
    _, before, after, fixed = _before_and_after(tmp_path, server, source, "--unsafe-fixes")
    assert before == 20, "each call's own client should have opened its own connection"
    assert after == 1, fixed
    assert not check_source(fixed)


@pytest.mark.slow
def test_client_per_request_gathered_shares_one_pool(tmp_path: Path, server: Server) -> None:
    _need("aiohttp")
    _need_htp104()
    source = AIOHTTP_SESSION_PER_REQUEST_GATHER
    assert [f.code for f in check_source(source)] == ["HTP104"]
    _, before, after, fixed = _before_and_after(tmp_path, server, source, "--unsafe-fixes")
    assert before == 40, "each gathered call's own session should have opened its own connection"
    # One session now: a burst's 20 requests run at once, so its connector (limit 100) opens one connection
    # per request in flight (measured: 20), and the second burst reuses them instead of opening 20 more.
    assert 1 <= after <= 20, fixed
    assert "async with aiohttp.ClientSession() as" in fixed and not check_source(fixed)


# -- HTP201, safe: an unstreamed download -------------------------------------------------------------
BLOB_SIZE = 32 * 1024 * 1024  # big enough that holding it whole dwarfs everything else the program allocates

# Each program measures its own peak of Python allocations around the download (tracemalloc) and prints it to
# stderr, so stdout stays what the user sees: the same before and after.
_MEASURED_MAIN = """

tracemalloc.start()
download(sys.argv[1] + "/blob?size={size}", "body.bin")
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(f"peak={peak}", file=sys.stderr)
with open("body.bin", "rb") as written:
    print(hashlib.sha256(written.read()).hexdigest())
"""

REQUESTS_DOWNLOAD = """\
import hashlib
import sys
import tracemalloc

import requests


def download(url, path):
    r = requests.get(url, timeout=60)
    r.raise_for_status()
    open(path, "wb").write(r.content)
""" + _MEASURED_MAIN

AIOHTTP_DOWNLOAD = """\
import asyncio
import hashlib
import sys
import tracemalloc

import aiohttp


async def fetch(url, path):
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as resp:
            resp.raise_for_status()
            with open(path, "wb") as f:
                f.write(await resp.read())


def download(url, path):
    asyncio.run(fetch(url, path))
""" + _MEASURED_MAIN

URLLIB_DOWNLOAD = """\
import hashlib
import sys
import tracemalloc
import urllib.request



def download(url, path):
    with open(path, "wb") as f:
        f.write(urllib.request.urlopen(url, timeout=60).read())
""" + _MEASURED_MAIN

DOWNLOAD_PROGRAMS = [
    pytest.param(REQUESTS_DOWNLOAD, ("requests",), "iter_content(chunk_size=65536)", id="requests-download"),
    pytest.param(AIOHTTP_DOWNLOAD, ("aiohttp",), "resp.content.iter_chunked(65536)",
                 id="aiohttp-download", marks=pytest.mark.slow),
    pytest.param(URLLIB_DOWNLOAD, (), "shutil.copyfileobj(r, f)", id="urllib-download", marks=pytest.mark.slow),
]


def _run_download(path: Path, server: Server) -> Tuple[str, int]:
    """Run a download program: its stdout and the peak of its traced allocations (from its stderr)."""
    result = subprocess.run(
        [sys.executable, str(path), server.base], capture_output=True, text=True, timeout=120, cwd=path.parent
    )
    assert result.returncode == 0, result.stderr
    peaks = [line for line in result.stderr.splitlines() if line.startswith("peak=")]
    assert peaks, result.stderr
    return result.stdout, int(peaks[-1].split("=", 1)[1])


@pytest.mark.parametrize("source, modules, streamed", DOWNLOAD_PROGRAMS)
def test_download_fix_writes_the_same_file_in_a_fraction_of_the_memory(
    tmp_path: Path, server: Server, source: str, modules: Tuple[str, ...], streamed: str
) -> None:
    _need(*modules)
    program = source.replace("{size}", str(BLOB_SIZE))
    assert [f.code for f in check_source(program)] == ["HTP201"]
    path = tmp_path / "legacy.py"
    path.write_text(program)
    written = tmp_path / "body.bin"
    expected = blob(BLOB_SIZE)

    out_before, peak_before = _run_download(path, server)
    assert written.read_bytes() == expected, "the original program wrote something else"
    written.unlink()
    _fix(path)
    assert path.read_text() == program, "HTP201's fix is unsafe (a broken transfer leaves a partial file)"
    _fix(path, "--unsafe-fixes")
    fixed = path.read_text()
    assert streamed in fixed, fixed
    assert not [f for f in check_source(fixed) if f.code == "HTP201"], fixed
    out_after, peak_after = _run_download(path, server)

    assert written.read_bytes() == expected, "the fixed program wrote a different file"
    assert out_after == out_before and out_before.strip()
    assert peak_after < peak_before / 2, (
        f"streaming should not hold the {BLOB_SIZE} byte body: peak {peak_before} bytes before the fix, "
        f"{peak_after} after\n{fixed}"
    )
    print(f"{modules or ('urllib',)}: peak {peak_before} -> {peak_after} bytes")
