"""Fix safety of HTP102, HTP103, HTP104, HTP301 and HTP402 at the sites RULES.md names, through the real CLI.

Each case writes a small project to a temporary folder, runs `python -m flake8_http_pool fix` on it, and
checks what `check` says afterwards, or runs the program before and after against a server on 127.0.0.1.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Sequence

from cli_support import assert_no_traceback, run_cli


def _codes(result: subprocess.CompletedProcess) -> list:
    """(line, code) of every finding `check` printed in its default format."""
    found = []
    for line in result.stdout.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[3].strip().startswith("HTP"):
            found.append((int(parts[1]), parts[3].split()[0]))
    return found


def _fix(path: Path, *args: str) -> subprocess.CompletedProcess:
    result = run_cli(["fix", "--no-progress", *args, str(path)], cwd=path.parent)
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
