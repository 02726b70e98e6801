"""Fix safety of HTP102, HTP103, HTP104, HTP301 and HTP402 at the sites RULES.md names, through the real CLI.

Each case writes a small project to a temporary folder, runs `python -m flake8_http_pool fix` on it, and
checks what `check` says afterwards, or runs the program before and after against a server on 127.0.0.1.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import assert_no_traceback, run_cli
from test_fix_end_to_end import Server, _run_program

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each program runs against a
# real server before and after fix
pytestmark = pytest.mark.slow


def _codes(result: subprocess.CompletedProcess) -> list:
    """(line, code) of every finding `check` printed in its default format."""
    found = []
    for line in result.stdout.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[3].strip().startswith("HTP"):
            found.append((int(parts[1]), parts[3].split()[0]))
    return found


def _fix(path: Path, *args: str) -> subprocess.CompletedProcess:
    result = run_cli(["fix", "--no-progress", "--exit-zero", *args, str(path)], cwd=path.parent)
    assert_no_traceback(result)
    return result


def _check(path: Path, *args: str) -> list:
    result = run_cli(["check", *args, str(path)], cwd=path.parent)
    assert_no_traceback(result)
    return _codes(result)


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- HTP403 stays after HTP102's shared session ----------------------------------------------------------
ASYNC_HANDLER = '''\
import requests
from fastapi import FastAPI

app = FastAPI()


@app.get("/quote")
async def quote():
    return requests.get("http://127.0.0.1:1/quote").json()
'''


def test_htp403_survives_the_shared_session(tmp_path: Path) -> None:
    path = _write(tmp_path, "app.py", ASYNC_HANDLER)
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    assert sorted(_check(path)) == [(9, "HTP102"), (9, "HTP403")]
    fixed = _fix(path, "--unsafe-fixes")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    text = path.read_text(encoding="utf-8")
    assert "_HTTP_SESSION.get(" in text, text
    # The blocking call is still blocking: the fix must not make the finding vanish.
    assert [code for _, code in _check(path)] == ["HTP403"]


# -- HTP102: names the project patches, imports it may not add ---------------------------------------------
HOT_FETCH = '''\
from requests import get


def fetch(url):
    return get(url).json()


def fetch_all(urls):
    return [fetch(u) for u in urls]
'''


def test_htp102_leaves_a_name_the_tests_patch(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    _write(tmp_path, "pkg/__init__.py", "")
    module = _write(tmp_path, "pkg/api.py", HOT_FETCH)
    _write(
        tmp_path, "tests/test_api.py",
        "from unittest import mock\n\nfrom pkg import api\n\n\n"
        "@mock.patch(\"pkg.api.get\")\ndef test_fetch(fake):\n    api.fetch('u')\n",
    )
    result = _fix(module, "--unsafe-fixes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert module.read_text(encoding="utf-8") == HOT_FETCH
    assert [code for _, code in _check(module)] == ["HTP102"]


def test_htp102_without_the_patch_is_fixed(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    _write(tmp_path, "pkg/__init__.py", "")
    module = _write(tmp_path, "pkg/api.py", HOT_FETCH)
    result = _fix(module, "--unsafe-fixes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "_HTTP_SESSION.get(url)" in module.read_text(encoding="utf-8")
    assert _check(module) == []


OPTIONAL_IMPORT = '''\
import sys

try:
    import requests
except ImportError:
    requests = None


def fetch(url):
    return requests.get(url).status_code


def main(urls):
    if requests is None:
        print("offline")
        return
    for url in urls:
        print(fetch(url))


main(sys.argv[1:])
'''


def test_htp102_optional_import_still_imports_without_requests(tmp_path: Path) -> None:
    """With requests missing the program must still start: no module-level client of it is written."""
    path = _write(tmp_path, "tool.py", OPTIONAL_IMPORT)
    _fix(path, "--unsafe-fixes")
    assert path.read_text(encoding="utf-8") == OPTIONAL_IMPORT
    blocker = _write(tmp_path, "blocker/requests.py", "raise ImportError('requests is not installed here')\n")
    env_path = str(blocker.parent)
    run = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {env_path!r}); sys.argv = ['tool']; "
         f"exec(open({str(path)!r}).read())"],
        capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 0 and run.stdout == "offline\n", run.stderr


# -- HTP402: the patch never jumps code that is not an import -----------------------------------------------
VENDORED_PATCH = '''\
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vendor"))

import shim
import socket
from gevent import monkey

monkey.patch_all()
print(shim.WHERE, socket.AF_INET > 0)
'''


def test_htp402_patch_stays_below_sys_path_insert(tmp_path: Path) -> None:
    """Moving the patch above `sys.path.insert` would import gevent before the vendored folder is on the path:
    here the vendored stand-in of gevent is the only one, so the moved program would fail to start."""
    _write(tmp_path, "vendor/shim.py", "WHERE = 'vendored'\n")
    _write(tmp_path, "vendor/gevent/__init__.py", "")
    _write(tmp_path, "vendor/gevent/monkey.py", "def patch_all():\n    print('patched')\n")
    path = _write(tmp_path, "main.py", VENDORED_PATCH)
    before = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert before.returncode == 0 and before.stdout == "patched\nvendored True\n", before.stderr
    assert [code for _, code in _check(path)] == ["HTP402"]
    result = _fix(path, "--unsafe-fixes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text(encoding="utf-8") == VENDORED_PATCH
    assert [code for _, code in _check(path)] == ["HTP402"]


def test_htp402_patch_moves_above_a_block_of_imports(tmp_path: Path) -> None:
    _write(tmp_path, "gevent/__init__.py", "")
    _write(tmp_path, "gevent/monkey.py", "import sys\n\n\ndef patch_all():\n    print('socket' in sys.modules)\n")
    source = (
        "try:\n    import ujson as json\nexcept ImportError:\n    import json\n\nimport socket\n"
        "from gevent import monkey\n\nmonkey.patch_all()\nprint(json.dumps(socket.AF_INET > 0))\n"
    )
    path = _write(tmp_path, "main.py", source)
    before = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert before.returncode == 0 and before.stdout == "True\ntrue\n", before.stderr
    result = _fix(path)  # HTP402's fix is safe here: no --unsafe-fixes needed
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text(encoding="utf-8").startswith("from gevent import monkey\n\nmonkey.patch_all()\n")
    after = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    # The patch now runs before socket is imported: what HTP402 asks for, and the rest prints the same.
    assert after.returncode == 0 and after.stdout == "False\ntrue\n", after.stderr
    assert _check(path) == []


# -- HTP104: a new parameter only where no caller outside can be broken -----------------------------------
PUBLIC_FETCH = '''\
import requests


def fetch(url):
    with requests.Session() as s:
        return s.get(url).text


def fetch_all(urls):
    return [fetch(u) for u in urls]
'''


def test_htp104_public_function_is_report_only_in_a_library(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'lib'\n", encoding="utf-8")
    _write(tmp_path, "lib/__init__.py", "")
    path = _write(tmp_path, "lib/http.py", PUBLIC_FETCH)
    result = _fix(path, "--unsafe-fixes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert path.read_text(encoding="utf-8") == PUBLIC_FETCH
    assert [code for _, code in _check(path)] == ["HTP104"]


def test_htp104_application_config_allows_public_functions(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-http-pool]\napplication = true\n", encoding="utf-8")
    _write(tmp_path, "app/__init__.py", "")
    path = _write(tmp_path, "app/http.py", PUBLIC_FETCH)
    result = _fix(path, "--unsafe-fixes")
    assert result.returncode == 0, result.stdout + result.stderr
    text = path.read_text(encoding="utf-8")
    assert "def fetch(s, url):" in text and "with requests.Session() as session:" in text, text
    assert _check(path) == []


def test_htp104_functions_of_a_main_module_are_fixed(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'tool'\n", encoding="utf-8")
    _write(tmp_path, "tool/__init__.py", "")
    path = _write(tmp_path, "tool/__main__.py", PUBLIC_FETCH)
    result = _fix(path, "--unsafe-fixes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "def fetch(s, url):" in path.read_text(encoding="utf-8")


def test_htp104_main_block_of_a_package_module_is_not_a_script(tmp_path: Path) -> None:
    """`pkg/tool.py` with a main block is still importable as `pkg.tool` (its functions are often the API)."""
    project = tmp_path / "project"
    _write(project, "pyproject.toml", "[project]\nname = 'pkg'\n")
    _write(project, "pkg/__init__.py", "")
    source = PUBLIC_FETCH + '\n\nif __name__ == "__main__":\n    print(fetch_all(["http://127.0.0.1:1/"]))\n'
    path = _write(project, "pkg/tool.py", source)
    _fix(path, "--unsafe-fixes")
    assert path.read_text(encoding="utf-8") == source
    # A file of its own, in no project: a script. (Inside the project above, pkg/tool.py would name its
    # `fetch`, and a function another module names keeps its signature.)
    alone = _write(tmp_path / "scripts", "tool.py", source)
    _fix(alone, "--unsafe-fixes")
    assert "def fetch(s, url):" in alone.read_text(encoding="utf-8")


# -- HTP102 end to end: the shared session after the whole import block -----------------------------------
IMPORT_BLOCK_PROGRAM = '''\
"""Fetch items through a hot function."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import requests

try:
    import ujson as json
except ImportError:
    import json


def fetch(base, n):
    text = requests.get(f"{base}/item/{n}", timeout=10).text
    return json.loads(text)["id"]


if __name__ == "__main__":
    print([fetch(sys.argv[1], n) for n in range(12)])
'''


def test_htp102_session_after_the_import_block_runs_the_same(tmp_path: Path, server: Server) -> None:  # noqa: F811
    path = _write(tmp_path, "items.py", IMPORT_BLOCK_PROGRAM)
    out_before, opened_before = _run_program(path, server)
    fixed = _fix(path, "--unsafe-fixes")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    text = path.read_text(encoding="utf-8")
    # The client follows the `try:` of imports, not the `import requests` inside the block.
    assert text.index("_HTTP_SESSION = requests.Session()") > text.index("    import json\n"), text
    out_after, opened_after = _run_program(path, server)
    assert out_after == out_before and out_before.strip()
    assert opened_before == 12 and opened_after == 1
    assert _check(path) == []
