"""A walk never skips part of the tree in silence: a folder or file it cannot look at costs one line and exit 2.

Issue 11: an unreadable subfolder and a path beyond PATH_MAX were skipped with no line and exit 0/1, so a run
that had not looked at part of the project looked clean. Both cases go through the real command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator, List

import pytest

LOOP = "import requests\nfor u in urls:\n    requests.get(u)\n"
NOBODY = 65534


# Root reads every folder, so as root the command drops to `nobody` once it is loaded: the interpreter and the
# packages may sit where `nobody` cannot go (pyenv under /root), so everything the run needs is imported first.
AS_NOBODY = f"""
import os, pkgutil, importlib, sys
import flake8_http_pool
for module in pkgutil.walk_packages(flake8_http_pool.__path__, "flake8_http_pool."):
    if module.name.split(".")[1] not in ("fixes", "plugin", "docs"):
        importlib.import_module(module.name)
import encodings.idna, concurrent.futures.process, multiprocessing.connection, locale, gettext  # argparse: gettext imports locale on use
import libcst  # fix checks for it before any file; the venv may sit where nobody cannot read (a mktemp folder)
os.setgroups([]); os.setgid({NOBODY}); os.setuid({NOBODY})
from flake8_http_pool.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _command(args: List[str], cwd: Path, as_nobody: bool = False) -> subprocess.CompletedProcess:
    launch = ["-c", AS_NOBODY] if as_nobody else ["-m", "flake8_http_pool"]
    return subprocess.run([sys.executable, *launch, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def _others_can_reach(path: Path) -> bool:
    """Whether every folder from / down to `path` lets other users through (o+x)."""
    return all(os.stat(folder).st_mode & 0o001 for folder in [path, *path.parents])


def _deep_tree(top: Path, depth: int) -> None:
    """Folders nested until the full path is far past PATH_MAX (4096 here), made through folder descriptors."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d" * 60, dir_fd=fd)
            inner = os.open("d" * 60, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        handle = os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(handle, LOOP.encode())
        os.close(handle)
    finally:
        os.close(fd)


def _remove_deep(top: Path) -> None:
    """shutil.rmtree works through folder descriptors, so it can remove what no path can name."""
    shutil.rmtree(top, ignore_errors=True)


@pytest.mark.parametrize("command", [["check"], ["fix", "--diff"]])
def test_a_folder_beyond_path_max_gets_a_line_and_exit_2(tmp_path: Path, command: List[str]) -> None:
    (tmp_path / "shallow.py").write_text(LOOP)
    _deep_tree(tmp_path / "", 90)  # 90 * 61 characters: past 4096
    try:
        result = _command([*command, "--isolated", "."], tmp_path)
    finally:
        _remove_deep(tmp_path)
    assert result.returncode == 2, result.stderr
    # (fix's summary lists the skipped files again, indented)
    lines = [line for line in result.stderr.splitlines() if "PATH_MAX" in line and not line.startswith(" ")]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("./d") and ": error: path too long" in lines[0]
    if command == ["check"]:
        assert "shallow.py:3:5: HTP101" in result.stdout  # the rest of the tree is still checked


@pytest.fixture
def world_readable_tree() -> Iterator[Path]:
    """A tree another user can walk (pytest's tmp_path is private to its owner)."""
    top = Path(tempfile.mkdtemp(prefix="htp-walk-"))
    top.chmod(0o755)
    yield top
    for path in [top, *top.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)
    shutil.rmtree(top, ignore_errors=True)


@pytest.mark.parametrize("command", [["check"], ["fix", "--diff"]])
def test_an_unreadable_subfolder_gets_a_line_and_exit_2(world_readable_tree: Path, command: List[str]) -> None:
    (world_readable_tree / "open.py").write_text(LOOP)
    locked = world_readable_tree / "locked"
    locked.mkdir()
    (locked / "hidden.py").write_text(LOOP)
    for path in world_readable_tree.rglob("*.py"):
        path.chmod(0o644)
    locked.chmod(0o000)
    if os.geteuid() == 0 and not _others_can_reach(Path(__file__).resolve().parent.parent):
        pytest.skip("running as root in a clone that other users cannot enter (a mktemp folder): `nobody` could "
                    "not load the command's own files, so an unreadable folder cannot be made here")
    # --jobs 1: the run stays in the process that dropped its rights (workers would start Python afresh)
    result = _command([*command, "--isolated", "--jobs", "1", "."], world_readable_tree, as_nobody=os.geteuid() == 0)
    assert result.returncode == 2, (result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if ": error:" in line]
    assert errors == ["./locked: error: cannot be read: permission denied; skipped"], result.stderr
    if command == ["check"]:
        assert "open.py:3:5: HTP101" in result.stdout and "hidden.py" not in result.stdout


def test_dangling_links_and_loops_stay_silent(tmp_path: Path) -> None:
    """Not the project's code, as flake8 and ruff see it: no line, and the exit code is the findings'."""
    (tmp_path / "clean.py").write_text("x = 1\n")
    (tmp_path / "gone.py").symlink_to(tmp_path / "missing.py")
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    result = _command(["check", "--isolated", "."], tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
