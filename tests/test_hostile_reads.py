"""A cloned tree can hold anything where a file is expected: every read of it is bounded (issue 32).

A FIFO named like a module, a link to /dev/zero, a 1 GB sparse file, a FIFO for a dependency file or a patch, a
link to a file outside the tree: each must leave `check`, `fix` and flake8 (its project model too) printing what
they print without it, promptly, in a project with a root marker (where the project model runs). Each test runs
the real command in a subprocess, with a time limit that a hang would hit.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable, List, Optional

import pytest

from cli_support import assert_no_traceback, command

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): FIFOs and devices, each waited
# on by check, fix and flake8
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs, devices and RLIMIT_AS are POSIX's")]

LIB = "import requests\n\n\ndef fetch(u):\n    return requests.get(u)\n"
APP = "from lib import fetch\n\nfor u in urls:\n    fetch(u)\n"
# The finding that only the project model gives: lib.py's fetch is hot because app.py calls it in a loop.
CROSS = "lib.py:5:12: HTP102"
LIMIT = 60  # seconds: each run takes about one; a hang would take forever


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "victim"\n')
    (root / "lib.py").write_text(LIB)
    (root / "app.py").write_text(APP)
    return root


def _env() -> dict:
    env = dict(os.environ, NO_COLOR="1")
    env.pop("PYTHONPATH", None)
    return env


def _capped(megabytes: int) -> Callable[[], None]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (megabytes * 1024 ** 2, megabytes * 1024 ** 2))
    return cap


def _run(args: List[str], cwd: Path, stdin: str = "", memory: Optional[int] = 600) -> subprocess.CompletedProcess:
    """A command (`flake8 ...` or our subcommand) in `cwd`, under a memory cap that reading a device or a 1 GB
    file whole would break, and a time limit that a hang would hit."""
    argv = [sys.executable, "-m", "flake8", *args[1:]] if args[0] == "flake8" else [*command(), *args]
    shutil.rmtree(cwd / ".flake8-http-pool-cache", ignore_errors=True)  # cold: the project model reads the tree
    return subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=LIMIT, env=_env(),
                          preexec_fn=_capped(memory) if memory else None)


COMMANDS = {
    "check": ["check", "."],
    "fix --diff": ["fix", "--unsafe-fixes", "--diff", "."],
    "flake8": ["flake8", "--isolated", "--select", "HTP", "app.py", "lib.py"],
    "check stdin": ["check", "--stdin-filename", "lib.py", "-"],
    "fix stdin": ["fix", "--unsafe-fixes", "--stdin-filename", "lib.py", "-"],
    "flake8 stdin": ["flake8", "--isolated", "--select", "HTP", "--stdin-display-name", "lib.py", "-"],
}


def _same_as_without(tmp_path: Path, hostile: Callable[[Path], None], names: List[str]) -> None:
    """Each command prints the same findings (and exit code) with the hostile entry as without it."""
    clean = _project(tmp_path / "clean")
    attacked = _project(tmp_path / "attacked")
    hostile(attacked)
    for name in names:
        args = COMMANDS[name]
        stdin = LIB if "stdin" in name else ""
        expected = _run(args, clean, stdin)
        got = _run(args, attacked, stdin)
        assert CROSS in expected.stdout or "_HTTP_SESSION" in expected.stdout, (name, expected)
        assert (got.returncode, got.stdout) == (expected.returncode, expected.stdout), (name, got.stderr)
        assert_no_traceback(got)


def _fifo(name: str) -> Callable[[Path], None]:
    return lambda root: os.mkfifo(root / name)


def _device_link(name: str) -> Callable[[Path], None]:
    def make(root: Path) -> None:
        (root / name).unlink(missing_ok=True)
        os.symlink("/dev/zero", root / name)
    return make


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_fifo_named_like_a_module_is_never_opened_for_reading(tmp_path, name):
    _same_as_without(tmp_path, _fifo("pipe.py"), [name])


@pytest.mark.parametrize("name", ["check", "fix --diff", "flake8"])
def test_a_link_to_dev_zero_named_like_a_module_is_not_read(tmp_path, name):
    _same_as_without(tmp_path, _device_link("zero.py"), [name])


@pytest.mark.parametrize("entry", ["requirements.txt", "pyproject.toml", "setup.cfg", "setup.py", "tox.ini", ".flake8"])
def test_a_fifo_or_device_for_a_dependency_or_config_file_does_not_hang(tmp_path, entry):
    def fifo(root: Path) -> None:
        (root / entry).unlink(missing_ok=True)
        os.mkfifo(root / entry)

    _same_as_without(tmp_path, fifo, ["check", "fix --diff", "flake8"])
    shutil.rmtree(tmp_path / "clean")
    shutil.rmtree(tmp_path / "attacked")
    _same_as_without(tmp_path, _device_link(entry), ["check", "fix --diff"])


def test_fix_and_the_plugin_never_read_a_file_over_the_size_limit(tmp_path):
    def sparse(root: Path) -> None:
        with open(root / "big.py", "wb") as handle:
            handle.truncate(1024 ** 3)  # sparse: no disk; read whole, it is 1 GB of memory, over the cap

    clean = _project(tmp_path / "clean")
    attacked = _project(tmp_path / "attacked")
    sparse(attacked)
    for name in ("fix --diff", "flake8"):
        expected, got = _run(COMMANDS[name], clean), _run(COMMANDS[name], attacked)
        assert CROSS in expected.stdout or "_HTTP_SESSION" in expected.stdout
        assert got.stdout == expected.stdout, (name, got.stderr)
        assert_no_traceback(got)
    fixed = _run(COMMANDS["fix --diff"], attacked)
    assert "./big.py: error: skipped: 1 GB is over the 4 MB limit (--max-file-size)" in fixed.stderr


def test_a_module_linked_to_a_file_outside_the_tree_is_never_opened(tmp_path):
    """The project model lists files as check's walk does: never through a link that leaves the root. An audit
    hook in the process records every open; the run must not open the outside file, whichever door."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.py"
    secret.write_text("from lib import fetch\n\nfor u in urls:\n    fetch(u)\n")
    root = _project(tmp_path / "tree")
    os.symlink(secret, root / "pw.py")
    log = tmp_path / "opened.log"
    launch = (
        "import os, sys\n"
        "log = open(sys.argv.pop(1), 'w')\n"
        "def hook(event, args):\n"
        "    if event == 'open' and args and isinstance(args[0], (str, bytes)):\n"
        "        log.write(os.path.realpath(os.fsdecode(args[0])) + '\\n'); log.flush()\n"
        "sys.addaudithook(hook)\n"
        "door = sys.argv.pop(1)\n"
        "if door == 'flake8':\n"
        "    from flake8.main.cli import main\n"
        "else:\n"
        "    from flake8_http_pool.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    for door, args in (("ours", ["check", "--jobs", "1", "."]), ("ours", ["fix", "--jobs", "1", "--diff", "."]),
                       ("flake8", ["--isolated", "--select", "HTP", "-j", "1", "app.py", "lib.py"])):
        shutil.rmtree(root / ".flake8-http-pool-cache", ignore_errors=True)
        result = subprocess.run([sys.executable, "-c", launch, str(log), door, *args], cwd=root, capture_output=True,
                                text=True, timeout=LIMIT, env=_env())
        assert_no_traceback(result)
        opened = log.read_text().splitlines()
        assert str(root / "lib.py") in opened, (door, args)  # the hook saw the run's reads
        assert str(secret) not in opened, (door, args, result.stdout)


def test_files_from_a_device_ends_with_one_line(tmp_path):
    _project(tmp_path / "p")
    result = _run(["check", "--files-from", "/dev/zero"], tmp_path / "p")
    assert result.returncode == 2
    assert result.stderr == "/dev/zero: error: cannot read the file list: not a regular file or a pipe\n"


def test_files_from_with_a_line_longer_than_any_path_ends_with_one_line(tmp_path):
    root = _project(tmp_path / "p")
    (root / "list.txt").write_bytes(b"lib.py\n" + b"x" * (1 << 20) + b"\napp.py\n")
    result = _run(["check", "--files-from", "list.txt"], root)
    assert result.returncode == 2
    assert "list.txt: error: cannot read the file list: a line is longer than any path" in result.stderr
    assert result.stderr.count("\n") == 1
    # Standard input is read the same way.
    piped = _run(["check", "--files-from", "-"], root, stdin="lib.py\n" + "y" * (1 << 20) + "\n")
    assert "standard input: error: cannot read the file list: a line is longer than any path" in piped.stderr


def test_a_fifo_patch_in_the_split_by_owner_folder_is_refused_not_waited_on(tmp_path):
    root = _project(tmp_path / "p")
    (root / "patches").mkdir()
    os.mkfifo(root / "patches" / "x.patch")
    result = _run(["fix", "--unsafe-fixes", "--split-by-owner", "patches", "."], root)
    assert result.returncode == 2
    assert "x.patch was not written by --split-by-owner" in result.stderr
    assert_no_traceback(result)


def test_a_codeowners_fifo_does_not_hang_split_by_owner(tmp_path):
    root = _project(tmp_path / "p")
    (root / ".github").mkdir()
    os.mkfifo(root / ".github" / "CODEOWNERS")
    # Found where GitHub looks: a FIFO is no CODEOWNERS file (every file unowned), and it is never opened.
    found = _run(["fix", "--unsafe-fixes", "--split-by-owner", "patches", "."], root)
    assert found.returncode == 1, found.stderr
    assert "no CODEOWNERS in" in found.stderr and (root / "patches" / "unowned.patch").is_file()
    # Named on the command line: one line saying what it is.
    named = _run(["fix", "--unsafe-fixes", "--split-by-owner", "patches2", "--codeowners", ".github/CODEOWNERS",
                  "."], root)
    assert named.returncode == 2
    assert named.stderr == "flake8-http-pool: error: --codeowners .github/CODEOWNERS: not a regular file\n"
    # A link to a device in the place GitHub reads: the same as no file.
    os.unlink(root / ".github" / "CODEOWNERS")
    os.symlink("/dev/zero", root / ".github" / "CODEOWNERS")
    linked = _run(["fix", "--unsafe-fixes", "--split-by-owner", "patches3", "."], root)
    assert linked.returncode == 1 and "no CODEOWNERS in" in linked.stderr, linked.stderr


def test_a_module_whose_name_is_not_utf8_costs_no_finding_of_the_project(tmp_path):
    """A package holding `w\\xffx.py` whose function can matter, and a module searched for it through the
    package (`pkg.thing.go(u)`): the search's pattern for the name took the whole project model down
    (UnicodeEncodeError), losing every finding across modules."""
    clean = _project(tmp_path / "clean")
    attacked = _project(tmp_path / "attacked")
    for root in (clean, attacked):
        (root / "pkg").mkdir()
        (root / "pkg" / "__init__.py").write_text("")
        (root / "d.py").write_text("import pkg\n\nfor u in urls:\n    pkg.thing.go(u)\n")
    with open(os.path.join(os.fsencode(attacked / "pkg"), b"w\xffx.py"), "wb") as handle:
        handle.write(b"import requests\n\n\ndef go(u):\n    return requests.get(u)\n")
    for name in ("check", "flake8"):
        expected, got = _run(COMMANDS[name], clean), _run(COMMANDS[name], attacked)
        assert CROSS in got.stdout and got.stdout == expected.stdout, (name, got.stderr)
        assert "internal error" not in got.stderr, got.stderr
