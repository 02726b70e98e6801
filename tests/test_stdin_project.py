"""An editor's buffer on standard input, named as a file of a project (`flake8 --stdin-display-name NAME -`,
`check --stdin-filename NAME -`): checked with what the project on disk says of that file, through the real
flake8 and our command, with the same findings; `fix --stdin-filename NAME -` fixes it as `fix` of the project
fixes that file, and leaves alone a signature another module of the project calls.

Of those seeds, the ones that point at a call by line and column (a factory's call, HTP103) hold only while
the buffer is the file as saved: an unsaved edit moves the calls, and such a seed would then land on another
call. Those are left out of an edited buffer; the ones naming functions (a hot wrapper, HTP102) are kept."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from cli_support import assert_no_traceback, run_cli
from project_trees import LOOP, WRAPPER, write_tree

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each case runs the commands on
# a buffer inside a project
pytestmark = pytest.mark.slow

FACTORY = ("import requests\n\n\ndef make_session():\n    session = requests.Session()\n"
           "    session.headers['X-Team'] = 'sync'\n    return session\n")
PER_ITEM = ("from app.factory import make_session\n\n\ndef run(urls):\n    for url in urls:\n"
            "        session = make_session()\n        session.get(url)\n")
# PER_ITEM with a line put in before the factory's call: the call saved at 6:18 is now at 7:18, and 6:18 is
# `open(url)`, which a seed by position would take for a client factory.
EDITED = PER_ITEM.replace("        session = make_session()\n",
                          "        other__ = open(url)\n        session = make_session()\n")
FACTORY_FOUND = "app/main.py:6:19: HTP103 make_session() created in a loop"


def _project(root: Path) -> Path:
    write_tree(root, {"pyproject.toml": "", "app/__init__.py": "", "app/http.py": WRAPPER, "app/sync.py": LOOP,
                      "app/factory.py": FACTORY, "app/main.py": PER_ITEM})
    return root


def _flake8(root: Path, name: str, buffer: str) -> List[str]:
    environment = dict(os.environ)
    environment.pop("FLAKE8_HTTP_POOL_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "HTP",
                           "--stdin-display-name", name, "-"], cwd=root, input=buffer, capture_output=True,
                          text=True, timeout=180, env=environment)
    assert done.returncode in (0, 1) and done.stderr == "", done.stderr
    return done.stdout.splitlines()


def _check(root: Path, name: str, buffer: str, *extra: str) -> List[str]:
    done = run_cli(["check", "--isolated", "--stdin-filename", name, *extra, "-"], cwd=root, stdin=buffer)
    assert_no_traceback(done)
    assert done.returncode in (0, 1), done.stderr
    return [line for line in done.stdout.splitlines() if ": HTP" in line]


def test_a_buffer_gets_the_findings_whose_reason_is_in_another_module(tmp_path: Path) -> None:
    root = _project(tmp_path)
    on_disk = [line for line in run_cli(["check", "--isolated", "."], cwd=root).stdout.splitlines()
               if line.startswith("./app/http.py:")]
    assert len(on_disk) == 1 and "called in a loop at app/sync.py:6" in on_disk[0], on_disk
    expected = [on_disk[0][len("./"):]]
    assert _check(root, "app/http.py", WRAPPER) == expected
    assert _flake8(root, "app/http.py", WRAPPER) == expected
    # From inside the package, named relative to there: the same project, found from the file's folder.
    assert _check(root / "app", "http.py", WRAPPER) == ["http.py" + expected[0][len("app/http.py"):]]


def test_a_saved_buffer_gets_the_seeds_by_position_and_an_edited_one_does_not(tmp_path: Path) -> None:
    root = _project(tmp_path)
    for found in (_check(root, "app/main.py", PER_ITEM), _flake8(root, "app/main.py", PER_ITEM)):
        assert len(found) == 1 and found[0].startswith(FACTORY_FOUND), found
    # Edited: nothing on open(url), where the saved file's factory call was.
    assert _check(root, "app/main.py", EDITED) == []
    assert _flake8(root, "app/main.py", EDITED) == []


def test_project_from_gives_the_buffer_its_project(tmp_path: Path) -> None:
    root = _project(tmp_path)
    listing = tmp_path / "project.txt"
    listing.write_text("app/http.py\napp/sync.py\n")
    found = _check(root, "app/http.py", WRAPPER, "--project-from", str(listing))
    assert len(found) == 1 and "called in a loop at app/sync.py:6" in found[0], found
    # A project that does not hold the loop's module: the wrapper is not hot.
    listing.write_text("app/http.py\napp/main.py\n")
    assert _check(root, "app/http.py", WRAPPER, "--project-from", str(listing)) == []


def test_a_buffer_with_no_project_or_no_file_on_disk_is_checked_alone(tmp_path: Path) -> None:
    root = _project(tmp_path)
    # Named as a file that is not there (a new buffer never saved): nothing from the project.
    assert _check(root, "app/new.py", WRAPPER) == []
    assert _flake8(root, "app/new.py", WRAPPER) == []
    (root / "pyproject.toml").unlink()
    if not any((parent / marker).exists() for parent in root.parents
               for marker in ("pyproject.toml", "setup.cfg", "setup.py", ".git")):
        assert _check(root, "app/http.py", WRAPPER) == []
        assert _flake8(root, "app/http.py", WRAPPER) == []


# -- fix: the buffer fixed as the project's fix fixes its file ------------------------------------------------------
def _fix_buffer(root: Path, name: str, buffer: str) -> str:
    done = run_cli(["fix", "--isolated", "--unsafe-fixes", "--stdin-filename", name, "-"], cwd=root, stdin=buffer)
    assert_no_traceback(done)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


def _fixed_on_disk(root: Path, name: str, tmp_path: Path) -> str:
    """The file `name` as `fix --unsafe-fixes .` writes it, in a copy of the project."""
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    done = run_cli(["fix", "--isolated", "--unsafe-fixes", "--no-progress", "."], cwd=copy)
    assert_no_traceback(done)
    return (copy / name).read_text()


def test_fix_dash_fixes_the_buffer_with_what_other_modules_say(tmp_path: Path) -> None:
    """The wrapper is hot only because of app/sync.py's loop (HTP102), and app/main.py calls a factory of
    app/factory.py per item (HTP103): the buffer of each comes back as the project's fix writes the file."""
    root = _project(tmp_path / "project")
    for name, buffer in (("app/http.py", WRAPPER), ("app/main.py", PER_ITEM)):
        expected = _fixed_on_disk(root, name, tmp_path / name.replace("/", "_"))
        assert expected != buffer
        assert _fix_buffer(root, name, buffer) == expected


def test_fix_dash_leaves_an_edited_buffer_s_moved_calls_alone(tmp_path: Path) -> None:
    """A seed by position names the saved file's factory call at 6:18; in the edited buffer that place holds
    `open(url)`, which must not be taken for the factory and moved out of the loop."""
    root = _project(tmp_path)
    assert _fix_buffer(root, "app/main.py", EDITED) == EDITED


PRIVATE = ("import aiohttp\nimport asyncio\n\n\nasync def _fetch(url):\n"
           "    async with aiohttp.ClientSession() as session:\n"
           "        async with session.get(url) as resp:\n            return await resp.text()\n\n\n"
           "async def main(urls):\n    return await asyncio.gather(*[_fetch(u) for u in urls])\n")
PRIVATE_CALLER = "from app.client import _fetch\n\n\nasync def one(url):\n    return await _fetch(url)\n"


def test_fix_dash_keeps_a_signature_another_module_calls(tmp_path: Path) -> None:
    """HTP104's fix gives `_fetch` a client parameter; app/other.py calls `_fetch(url)` and is not the buffer,
    so the fix is report only. Without that caller, the buffer gets the fix."""
    root = tmp_path
    write_tree(root, {"pyproject.toml": "", "app/__init__.py": "", "app/client.py": PRIVATE,
                      "app/other.py": PRIVATE_CALLER})
    assert _fix_buffer(root, "app/client.py", PRIVATE) == PRIVATE
    (root / "app" / "other.py").write_text("print('no caller')\n")
    assert "async def _fetch(session, url):" in _fix_buffer(root, "app/client.py", PRIVATE)


def test_fix_dash_counts_a_caller_of_a_function_the_file_on_disk_lacks(tmp_path: Path) -> None:
    """The buffer adds `_fetch`, not saved yet, and app/other.py already calls it: the file on disk does not
    hold the name, so one other file holding it is enough for report only."""
    root = tmp_path
    write_tree(root, {"pyproject.toml": "", "app/__init__.py": "", "app/client.py": "import aiohttp\n",
                      "app/other.py": PRIVATE_CALLER})
    assert _fix_buffer(root, "app/client.py", PRIVATE) == PRIVATE
