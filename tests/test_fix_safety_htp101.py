"""HTP101's fix against RULES.md "Fix safety": report-only sites, imports, clean output, real programs.

The end-to-end cases run a small program before and after `python -m flake8_http_pool fix --unsafe-fixes`
against a server on 127.0.0.1 (an ephemeral port) that echoes the request's cookies and sets one of its own,
and compare what the program printed. The broader harness for every rule lives elsewhere; these are HTP101's
own sites.
"""

from __future__ import annotations

import functools
import itertools
import re
import subprocess
import sys
import threading
import types
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

from flake8_http_pool.engine import check_source
from flake8_http_pool.fix_facts import FixFacts
from flake8_http_pool.fixing import FixResult, fix_source
from flake8_http_pool.source_files import decode_source

from conftest import fixture_files, fixture_params

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): libcst's own codemods against
# ours, import by import
pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent / "fixtures"
HTP101_FILES = fixture_files("", "fixes", pattern="HTP101_*.py")  # the ones the running Python parses


def _codes(text: str) -> "Counter[str]":
    return Counter(f.code for f in check_source(text))


@functools.lru_cache(maxsize=None)
def _fixed(path: Path) -> Tuple[str, FixResult]:
    """The file's text and HTP101's fixes of it with --unsafe-fixes (computed once for both tests below)."""
    text = decode_source(path.read_bytes())
    return text, fix_source(text, codes=["HTP101"], unsafe=True, filename=str(path))


# -- fixed code is clean code --------------------------------------------------------------------------
@pytest.mark.parametrize("path", fixture_params("", "fixes", pattern="HTP101_*.py", label=lambda p: p.name))
def test_fix_then_check_is_clean(path: Path) -> None:
    """After HTP101's fixes, every fixed site is gone, and no other finding appears or vanishes (a session in
    a hot function would be HTP104; HTP403 must survive)."""
    text, result = _fixed(path)
    assert result.error is None, result.error
    before, after = _codes(text), _codes(result.text)
    assert after["HTP101"] == before["HTP101"] - result.applied["HTP101"]
    del before["HTP101"], after["HTP101"]
    assert after == before
    # No blank line right after a `with` header the fix wrote, and no trailing whitespace it wrote.
    assert not re.search(r"^[ \t]*(async )?with [^\n]* as \w+:\r?\n[ \t]*\r?\n", result.text, re.M)
    trailing = [line for line in result.text.splitlines() if line != line.rstrip()]
    assert len(trailing) <= len([line for line in text.splitlines() if line != line.rstrip()])


def test_golden_outputs_add_no_pycodestyle_codes(tmp_path: Path) -> None:
    """flake8's default E/W checks (pycodestyle's, run directly so no plugin runs) find no code in a fixed
    file that its original did not have."""
    pairs: List[Tuple[str, Path, Path]] = []
    for number, path in enumerate(HTP101_FILES):
        text, result = _fixed(path)
        original, fixed = tmp_path / f"original_{number}.py", tmp_path / f"fixed_{number}.py"
        original.write_text(text)
        fixed.write_text(result.text)
        pairs.append((path.name, original, fixed))
    run = subprocess.run(
        [sys.executable, "-m", "pycodestyle", "--format=%(path)s %(code)s", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode in (0, 1), run.stderr
    found: Dict[str, set] = {}
    for line in run.stdout.splitlines():
        where, code = line.rsplit(" ", 1)
        found.setdefault(Path(where).name, set()).add(code)
    new = {name: found.get(b.name, set()) - found.get(a.name, set()) for name, a, b in pairs}
    assert not {name: codes for name, codes in new.items() if codes}
    fixed_names = [b.name for _, _, b in pairs]
    assert any(name in found for name in fixed_names), "flake8 found nothing at all: is it running?"


def test_continuation_lines_realigned() -> None:
    text = (
        "import requests\n\n\ndef f(urls):\n    for u in urls:\n"
        "        r = requests.post(u, json={'a': 1,\n"
        "                                   'b': 2},\n"
        "                          timeout=3)\n"
    )
    fixed = fix_source(text, unsafe=True).text
    assert (
        "            r = session.post(u, json={'a': 1,\n"
        "                                      'b': 2},\n"
        "                             timeout=3)\n"
    ) in fixed


# -- facts: the project's pin and patches ----------------------------------------------------------------
MIXED_VERIFY = (
    "import requests\n\n\ndef scan(hosts):\n    for host in hosts:\n"
    "        requests.get(host, verify=False)\n        requests.post(host)\n"
)


def test_mixed_verify_needs_requests_232() -> None:
    assert fix_source(MIXED_VERIFY, unsafe=True).text == MIXED_VERIFY
    pinned = fix_source(MIXED_VERIFY, unsafe=True, facts=FixFacts(requests_232=True))
    assert pinned.applied["HTP101"] == 2 and "with requests.Session() as session:" in pinned.text


@pytest.mark.parametrize(
    "target, fixed",
    [
        ("requests.get", False),
        ("requests.api.request", False),  # requests.get goes through it, a session does not
        ("requests.sessions.Session", False),
        ("requests.Session.get", False),  # the original never called it, the fixed code would
        ("requests.adapters.HTTPAdapter.send", True),  # the transport: both go through it
        ("requests.post", True),
        ("app.fetch.requests", False),  # the module's `requests` swapped for a mock: asserts on .get break
        ("app.other.requests", True),
    ],
)
def test_patch_targets(target: str, fixed: bool) -> None:
    text = "import requests\n\n\ndef f(urls):\n    for u in urls:\n        requests.get(u)\n"
    result = fix_source(text, unsafe=True, facts=FixFacts(patched=frozenset({target}), module="app.fetch"))
    assert (result.applied["HTP101"] == 1) is fixed


def test_patched_name_in_another_module_is_report_only(tmp_path: Path) -> None:
    """A test module of the project patches `app.fetch.get`: `fix --unsafe-fixes` leaves app/fetch.py alone,
    and keeps fixing it once the patch is gone."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'app'\n")
    package = tmp_path / "app"
    package.mkdir()
    (package / "__init__.py").write_text("")
    source = "from requests import get\n\n\ndef fetch_all(urls):\n    return [get(url).text for url in urls]\n"
    (package / "fetch.py").write_text(source)
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_fetch.py").write_text(
        "from unittest import mock\n\nfrom app import fetch\n\n\ndef test_fetch():\n"
        "    with mock.patch('app.fetch.get') as get:\n        fetch.fetch_all(['u'])\n    assert get.called\n"
    )

    def fix() -> str:
        run = subprocess.run(
            [sys.executable, "-m", "flake8_http_pool", "fix", "--unsafe-fixes", "app/fetch.py"],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )
        assert run.returncode in (0, 1), run.stdout + run.stderr
        return (package / "fetch.py").read_text()

    assert fix() == source
    (tests / "test_fetch.py").unlink()
    assert "session.get(url)" in fix()


# -- programs against a real server ------------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    """Echoes the request's Cookie header and sets a cookie of its own, `sid=issued`, on every response."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        body = (self.headers.get("Cookie") or "-").encode()
        self.send_response(200)
        self.send_header("Set-Cookie", "sid=issued; Path=/")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
        pass


@pytest.fixture
def base_url() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def _run(path: Path, base: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(path), base], capture_output=True, text=True, timeout=120, cwd=path.parent
    )


def _before_after(tmp_path: Path, base: str, source: str) -> Tuple[str, str, str]:
    """Run the program, `fix --unsafe-fixes` it, run it again: (output before, output after, fixed source)."""
    (tmp_path / "setup.cfg").write_text("")  # the project root: no patches of the test suite leak in
    path = tmp_path / "program.py"
    path.write_text(source)
    before = _run(path, base)
    assert before.returncode == 0, before.stderr
    fix = subprocess.run(
        [sys.executable, "-m", "flake8_http_pool", "fix", "--unsafe-fixes", str(path)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert fix.returncode in (0, 1), fix.stdout + fix.stderr
    after = _run(path, base)
    assert after.returncode == 0, after.stderr
    return before.stdout, after.stdout, path.read_text()


PER_USER_COOKIES = """\
import sys

import requests

for user in ["alice", "bob", "carol"]:
    print(requests.get(sys.argv[1] + "/me", cookies={"sid": user}, timeout=10).text)
"""


def test_per_call_cookies_stay_report_only(tmp_path: Path, base_url: str) -> None:
    before, after, fixed = _before_after(tmp_path, base_url, PER_USER_COOKIES)
    assert fixed == PER_USER_COOKIES
    assert before == after == "sid=alice\nsid=bob\nsid=carol\n"
    # What the fix would have done: the jar's `sid=issued` goes out with every later user's cookie.
    rewritten = tmp_path / "sessioned.py"
    rewritten.write_text(
        "import sys\n\nimport requests\n\nwith requests.Session() as session:\n"
        "    for user in ['alice', 'bob', 'carol']:\n"
        "        print(session.get(sys.argv[1] + '/me', cookies={'sid': user}, timeout=10).text)\n"
    )
    assert _run(rewritten, base_url).stdout != before


LOCAL_IMPORT = """\
import sys


def fetch(base, users):
    import requests

    seen = []
    for user in users:
        seen.append(requests.get(base + "/me", timeout=10).text)
    return seen


print(fetch(sys.argv[1], []))
print(fetch(sys.argv[1], ["a", "b"]))
"""


def test_local_import_fixed_inside_the_function(tmp_path: Path, base_url: str) -> None:
    """The session opens after the function's own import: no UnboundLocalError, even for an empty loop, and
    no module-level import appears. (The second request now carries the first response's cookie: one of the
    documented differences that make the fix unsafe.)"""
    before, after, fixed = _before_after(tmp_path, base_url, LOCAL_IMPORT)
    assert "    import requests\n\n    seen = []\n    with requests.Session() as session:\n" in fixed
    assert not fixed.startswith("import requests")
    assert before.splitlines()[0] == after.splitlines()[0] == "[]"
    assert after.splitlines()[1] == "['-', 'sid=issued']"


IMPORT_IN_LOOP = """\
import sys



def fetch(base, users):
    seen = []
    for user in users:
        import requests
        seen.append(requests.get(base + "/me", timeout=10).text)
    return seen


print(fetch(sys.argv[1], []))
print(fetch(sys.argv[1], ["a"]))
"""


def test_import_inside_the_loop_is_report_only(tmp_path: Path, base_url: str) -> None:
    before, after, fixed = _before_after(tmp_path, base_url, IMPORT_IN_LOOP)
    assert fixed == IMPORT_IN_LOOP and before == after == "[]\n['-']\n"


# -- imports: a small differential fuzz ------------------------------------------------------------------
class _StandIn:
    """A stand-in `requests` that records every request and every session opened and closed."""

    def __init__(self) -> None:
        self.log: List[tuple] = []
        module = types.ModuleType("requests")
        log = self.log

        class Response:
            def __init__(self, url: str) -> None:
                self.url = url

        class Session:
            def __enter__(self) -> "Session":
                return self

            def __exit__(self, *exc: object) -> None:
                pass

            def get(self, url: str, **kwargs: object) -> Response:
                log.append(("get", url))
                return Response(url)

        def get(url: str, **kwargs: object) -> Response:
            log.append(("get", url))
            return Response(url)

        module.get, module.Session = get, Session  # type: ignore[attr-defined]
        self.module = module

    def run(self, source: str, urls: List[str], flag: bool) -> tuple:
        """What the program's `f(urls, flag)` returned or raised, and the requests it made."""
        self.log.clear()
        namespace: Dict[str, object] = {"__name__": "program"}
        try:
            exec(compile(source, "program", "exec"), namespace)
            outcome: tuple = ("returned", namespace["f"](urls, flag))  # type: ignore[operator]
        except Exception as error:  # noqa: BLE001 - the outcome is what is compared
            outcome = ("raised", type(error).__name__)
        return outcome, list(self.log)


_MODULE_IMPORTS = ("import requests\n", "", "try:\n    import requests\nexcept ImportError:\n    pass\n",
                   "from requests import get\n")
_FUNCTION_IMPORTS = ("", "    import requests\n", "    if flag:\n        import requests\n",
                     "    try:\n        import requests\n    except ImportError:\n        return None\n",
                     "    try:\n        import requests\n    except ImportError:\n        pass\n")
_LOOP_IMPORTS = ("", "        import requests\n")
_LOOPS = (
    "    out = []\n    for u in urls:\n{inner}        out.append({call}(u).url)\n    return out\n",
    "    out = []\n    i = 0\n    while i < len(urls):\n{inner}        out.append({call}(urls[i]).url)\n"
    "        i += 1\n    return out\n",
    "    return [{call}(u).url for u in urls]\n",
)


@pytest.mark.slow
def test_imports_differential(monkeypatch: pytest.MonkeyPatch) -> None:
    """Programs with module-level, function-local, conditional, guarded and in-loop imports of requests, run
    before and after the fix with an empty and a full loop, with the flag on and off: the fixed program
    returns or raises the same and makes the same requests (no UnboundLocalError, no NameError)."""
    stand_in = _StandIn()
    monkeypatch.setitem(sys.modules, "requests", stand_in.module)
    programs = changed = local_changed = 0
    for head, local, inner, loop, call in itertools.product(
        _MODULE_IMPORTS, _FUNCTION_IMPORTS, _LOOP_IMPORTS, _LOOPS, ("requests.get", "get")
    ):
        if inner and "{inner}" not in loop:
            continue
        source = head + "\n\ndef f(urls, flag):\n" + local + loop.format(inner=inner, call=call)
        programs += 1
        fixed = fix_source(source, unsafe=True).text
        if fixed == source:
            continue
        changed += 1
        local_changed += bool(local or inner)
        for urls, flag in (([], True), ([], False), (["a", "b"], True), (["a", "b"], False)):
            assert stand_in.run(fixed, urls, flag) == stand_in.run(source, urls, flag), (source, fixed, urls, flag)
    assert programs == 200
    assert changed >= 50 and local_changed >= 20, (changed, local_changed)
