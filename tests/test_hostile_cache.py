"""A cache folder that came with the repository is hostile (issue 32): whatever it holds, `check`, `fix` and
flake8 never follow a link out of it, never hang on it, and print what a run without a cache prints.

Every test works on a project with a root marker and a finding whose reason is in another module (so the
project model, its solve and the plugin's lock all run), beside an `outside/` folder the cache must never
write to. The commands run in subprocesses with a timeout: a hang comes back as a failure, not a stuck suite.
"""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Tuple

import pytest

from cli_support import assert_no_traceback, run_cli
from project_trees import CACHE, LOOP, WRAPPER, age_tree, write_tree

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX links, FIFOs and flock")

# A wrapper called in a loop in another module (HTP102 through the solve), a loop of its own (HTP101, which
# flake8 reads back from the module's entry), a test that patches (fix facts), a module naming nothing.
FILES = {
    "pyproject.toml": "",
    "app/__init__.py": "",
    "app/http.py": WRAPPER,
    "app/sync.py": LOOP,
    "app/own.py": "import requests\n\n\ndef pull(urls):\n    for url in urls:\n        requests.get(url, timeout=5)\n",
    "app/plain.py": "def add(a, b):\n    return a + b\n",
    "tests/test_http.py": "from unittest import mock\n\n\n@mock.patch('app.http.requests.get')\ndef test_get(get):\n"
                          "    pass\n",
}
TIMEOUT = 60  # every run here takes a few seconds at most; a hang is a failure


class Outputs(NamedTuple):
    check: str
    fix: str
    flake8: str
    fix_summary: str = ""  # what `fix` says on stderr (how many files would change), beside any note


def _project(root: Path) -> Path:
    write_tree(root, FILES)
    age_tree(root)  # old enough for the stat indexes to vouch for every file (project_cache.settled)
    return root


# `check` and `fix` read the project's config (a case below names its cache folder there); flake8 reads the
# plugin's `cache-dir` from it even under --isolated.
def _check(root: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli(["check", *args, "."], cwd=root, timeout=TIMEOUT)


def _fix_diff(root: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli(["fix", "--diff", "--unsafe-fixes", *args, "."], cwd=root, timeout=TIMEOUT)


def _flake8(root: Path, *args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", *args, "."], cwd=root,
                          capture_output=True, text=True, timeout=timeout)


def _runs(root: Path) -> Tuple[subprocess.CompletedProcess, ...]:
    return _check(root), _fix_diff(root), _flake8(root)


def _outputs(runs: Tuple[subprocess.CompletedProcess, ...], uncached: Outputs) -> Outputs:
    """The stdout of (check, fix, flake8) runs, and fix's summary on stderr (taken from `uncached` when it is
    there among the notes)."""
    for done in runs:
        assert_no_traceback(done)
        assert "internal error" not in done.stderr, done.stderr
    summary = uncached.fix_summary if uncached.fix_summary in runs[1].stderr else runs[1].stderr
    return Outputs(*(done.stdout for done in runs), summary)


@pytest.fixture(autouse=True)
def _no_cache_dir_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLAKE8_HTTP_POOL_CACHE_DIR", raising=False)


@pytest.fixture(scope="module")
def uncached(tmp_path_factory: pytest.TempPathFactory) -> Outputs:
    """What the three commands print on FILES without any cache (flake8's cache in a folder of its own, cold)."""
    root = _project(tmp_path_factory.mktemp("uncached"))
    cold = tmp_path_factory.mktemp("flake8-cache")
    fixed = _fix_diff(root, "--no-cache")
    found = Outputs(_check(root, "--no-cache").stdout, fixed.stdout,
                    _flake8(root, "--http-pool-cache-dir", str(cold / "c")).stdout, fixed.stderr)
    assert "HTP102" in found.check and "HTP101" in found.check and "+" in found.fix
    assert "HTP102" in found.flake8 and "HTP101" in found.flake8
    return found


def _listing(folder: Path) -> List[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*")) if folder.exists() else []


# -- links --------------------------------------------------------------------------------------------------
def test_a_lock_that_is_a_link_is_never_followed(tmp_path: Path, uncached: Outputs) -> None:
    """A committed `lock` linking out of the tree: flake8 created the link's target (the lock was opened
    `a+b`). It is left alone now, and the project is solved without it."""
    root = _project(tmp_path / "proj")
    (tmp_path / "outside").mkdir()
    target = tmp_path / "outside" / "made-by-the-lock"
    (root / CACHE).mkdir()
    (root / CACHE / "lock").symlink_to(target)
    done = _flake8(root)
    assert not os.path.lexists(target)
    assert done.stdout == uncached.flake8 and done.stderr == "", done.stderr
    assert _outputs(_runs(root), uncached) == uncached
    assert _listing(tmp_path / "outside") == []


class FolderCase(NamedTuple):
    name: str
    # Makes the hostile folder in `root` (beside `outside`), returns the files holding the config it needs.
    make: Callable[[Path, Path], Dict[str, str]]
    noted_by_flake8: bool  # the plugin notes a link refused; a file or FIFO in the way it passes over quietly


def _folder_link(root: Path, outside: Path) -> Dict[str, str]:
    (root / CACHE).symlink_to(outside, target_is_directory=True)
    return {}


def _configured_link(root: Path, outside: Path) -> Dict[str, str]:
    (root / "build").symlink_to(outside, target_is_directory=True)
    return {"pyproject.toml": '[tool.flake8-http-pool]\ncache-dir = "build"\n'}


def _link_on_the_way(root: Path, outside: Path) -> Dict[str, str]:
    # The configured folder does not exist yet; a folder on its way there is a link out of the tree.
    (root / "build").symlink_to(outside, target_is_directory=True)
    return {"pyproject.toml": '[tool.flake8-http-pool]\ncache-dir = "build/cache"\n'}


def _subfolder_link(root: Path, outside: Path) -> Dict[str, str]:
    (root / CACHE).mkdir()
    (root / CACHE / "m").symlink_to(outside, target_is_directory=True)
    return {}


def _folder_file(root: Path, outside: Path) -> Dict[str, str]:
    (root / CACHE).write_text("not a folder\n")
    return {}


def _folder_fifo(root: Path, outside: Path) -> Dict[str, str]:
    os.mkfifo(root / CACHE)
    return {}


FOLDERS = [
    FolderCase("the cache folder a link", _folder_link, True),
    FolderCase("the configured cache folder a link", _configured_link, True),
    FolderCase("a link on the way to the configured folder", _link_on_the_way, True),
    FolderCase("the entries' subfolder a link", _subfolder_link, True),
    FolderCase("the cache folder a file", _folder_file, False),
    FolderCase("the cache folder a FIFO", _folder_fifo, False),
]


@pytest.mark.parametrize("case", FOLDERS, ids=[case.name for case in FOLDERS])
def test_a_cache_folder_that_is_not_a_real_folder_is_not_used(tmp_path: Path, uncached: Outputs,
                                                               case: FolderCase) -> None:
    """Used only as a real directory: otherwise one note, no cache, the same findings, and nothing written
    where a link points (`check` and flake8 wrote CACHEDIR.TAG, `.gitignore` and every entry there)."""
    root = _project(tmp_path / "proj")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.txt").write_text("theirs\n")
    config = case.make(root, outside)
    write_tree(root, config)
    runs = _runs(root)
    assert _outputs(runs, uncached) == uncached
    assert _listing(outside) == ["kept.txt"] and (outside / "kept.txt").read_text() == "theirs\n"
    for done in runs[:2]:
        notes = done.stderr.replace(uncached.fix_summary, "").splitlines()
        assert len(notes) == 1 and "not a real folder; running without a cache" in notes[0], done.stderr
    flake8_notes = runs[2].stderr.splitlines()
    if case.noted_by_flake8:
        assert len(flake8_notes) == 1 and "symbolic link, not a real folder" in flake8_notes[0], runs[2].stderr
    else:
        assert flake8_notes == []


def test_tag_and_gitignore_links_are_not_written_through(tmp_path: Path, uncached: Outputs) -> None:
    """CACHEDIR.TAG and `.gitignore` committed as links out of the tree, one dangling, one to a file: neither
    target is written, and the cache works."""
    root = _project(tmp_path / "proj")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "theirs.txt").write_text("theirs\n")
    (root / CACHE).mkdir()
    (root / CACHE / "CACHEDIR.TAG").symlink_to(outside / "dangling")
    (root / CACHE / ".gitignore").symlink_to(outside / "theirs.txt")
    assert _outputs(_runs(root), uncached) == uncached
    assert _listing(outside) == ["theirs.txt"] and (outside / "theirs.txt").read_text() == "theirs\n"
    assert list((root / CACHE / "m").rglob("*"))  # the cache itself was used


# -- entries that are not regular files ---------------------------------------------------------------------
def _cold_cache(root: Path) -> List[Path]:
    """The entries the three commands write on a cold run (every kind: m, s, i, g, r, p)."""
    _runs(root)
    entries = [path for path in (root / CACHE).rglob("*") if path.is_file() and path.parent != root / CACHE]
    assert {path.relative_to(root / CACHE).parts[0] for path in entries} == {"m", "s", "i", "g", "r", "p"}
    return entries


def test_fifos_and_device_links_in_place_of_entries_are_misses(tmp_path: Path, uncached: Outputs) -> None:
    """Every entry of a warm cache replaced, in turn, by a FIFO (flake8 and `fix` hung opening it) and by a
    link to /dev/zero: each is a miss, replaced by a real entry, and the output is a cold run's."""
    root = _project(tmp_path / "proj")
    entries = _cold_cache(root)
    for number, entry in enumerate(entries):
        entry.unlink()
        if number % 2:
            entry.symlink_to("/dev/zero")
        else:
            os.mkfifo(entry)
    assert _outputs(_runs(root), uncached) == uncached
    assert not [path for path in (root / CACHE).rglob("*") if path.is_fifo() or path.is_symlink()]


def _forged(value: Any) -> Any:
    """`value` with every finding's message, and every reason a solve gives a hot function, forged."""
    from flake8_http_pool.engine import ModuleSeeds
    from flake8_http_pool.finding import Finding

    if isinstance(value, Finding):
        return value._replace(message="forged through a link")
    if isinstance(value, ModuleSeeds):
        return value._replace(hot={key: ("forged through a link", *hot[1:]) for key, hot in value.hot.items()})
    if isinstance(value, dict):
        return {key: _forged(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_forged(item) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    return value


def test_an_entry_linking_out_of_the_cache_is_neither_read_nor_written(tmp_path: Path, uncached: Outputs) -> None:
    """Every entry a link to a file outside holding a well-formed entry whose findings are forged: the forged
    text is never shown (the link was read), the files outside never change, and the links are replaced."""
    root = _project(tmp_path / "proj")
    entries = _cold_cache(root)
    outside = tmp_path / "outside"
    outside.mkdir()
    for number, entry in enumerate(entries):
        (outside / f"{number}.bin").write_bytes(pickle.dumps(_forged(pickle.loads(entry.read_bytes()))))
        entry.unlink()
        entry.symlink_to(outside / f"{number}.bin")
    # And one folder of module entries a link to a folder of forged ones.
    module_entries = sorted(path for path in (root / CACHE / "m").iterdir())[0]
    shutil.copytree(module_entries, outside / "m-folder", symlinks=False)
    for entry in (outside / "m-folder").iterdir():
        entry.write_bytes(pickle.dumps(_forged(pickle.loads(entry.read_bytes()))))
    shutil.rmtree(module_entries)
    module_entries.symlink_to(outside / "m-folder", target_is_directory=True)
    before = {str(path): path.read_bytes() for path in outside.rglob("*") if path.is_file()}
    assert _outputs(_runs(root), uncached) == uncached
    assert {str(path): path.read_bytes() for path in outside.rglob("*") if path.is_file()} == before


@pytest.fixture(params=["descriptors", "paths"])
def cache_files(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """cache_files as it works here (under directory descriptors), and as it works where the platform has no
    *at calls (on paths, each lstat'ed first)."""
    from flake8_http_pool import cache_files as module

    if request.param == "paths":
        monkeypatch.setattr(module, "_AT_CALLS", False)
    return module


def test_the_folder_on_disk_refuses_links_fifos_and_big_entries(tmp_path: Path, cache_files: Any) -> None:
    """CacheFolder itself, in both ways of working: a link (entry, subfolder, folder, lock) is never followed,
    a FIFO or an entry over its cap is a miss at once, and a write replaces a link instead of writing through."""
    root = tmp_path / "proj"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "theirs").write_bytes(b"theirs")
    folder = cache_files.CacheFolder(str(root / "cache"), str(root))
    folder.write(("m", "ab", "entry"), b"12345")
    assert folder.read(("m", "ab", "entry"), 5) == b"12345"
    assert folder.read(("m", "ab", "entry"), 4) is None  # over the cap: never read
    made = root / "cache" / "m" / "ab"
    (made / "linked").symlink_to(outside / "theirs")
    os.mkfifo(made / "fifo")
    (made / "device").symlink_to("/dev/zero")
    for name in ("linked", "fifo", "device", "missing"):
        assert folder.read(("m", "ab", name), 1 << 20) is None, name
    folder.write(("m", "ab", "linked"), b"ours")
    assert not (made / "linked").is_symlink() and (made / "linked").read_bytes() == b"ours"
    (root / "cache" / "m" / "cd").symlink_to(outside, target_is_directory=True)
    assert folder.read(("m", "cd", "theirs"), 100) is None
    with pytest.raises(cache_files.FolderRefused) as refused:
        folder.write(("m", "cd", "new"), b"ours")
    assert refused.value.link and "m/cd is a symbolic link" in refused.value.reason
    (root / "cache" / "lock").symlink_to(outside / "made-by-the-lock")
    with folder.locked(0.1) as held:
        assert held is None
    linked = cache_files.CacheFolder(str(root / "linked-cache"), str(root))
    (root / "linked-cache").symlink_to(outside, target_is_directory=True)
    with pytest.raises(cache_files.FolderRefused) as refused:
        linked.make()
    assert refused.value.reason == "a symbolic link, not a real folder"
    assert linked.read(("theirs",), 100) is None and not linked.exists(("theirs",))
    folder.close()
    linked.close()
    assert _listing(outside) == ["theirs"] and (outside / "theirs").read_bytes() == b"theirs"


# -- the lock -----------------------------------------------------------------------------------------------
_HOLD = """
import fcntl, sys, time
handle = open(sys.argv[1], "a+b")
fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(120)
"""


@pytest.fixture
def held_lock(tmp_path: Path) -> Iterator[Path]:
    """A project whose cache lock another process holds (as `flock lock sleep 60` would)."""
    root = _project(tmp_path / "proj")
    (root / CACHE).mkdir()
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(root / CACHE / "lock")], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        yield root
    finally:
        holder.kill()
        holder.wait(timeout=TIMEOUT)


def test_a_lock_held_by_another_process_is_waited_for_a_few_seconds(held_lock: Path, uncached: Outputs) -> None:
    """flake8 waited forever, saying nothing. It waits a few seconds, says so once, and solves the project
    itself: the same findings. `check` and `fix` never take the lock."""
    started = time.monotonic()
    done = _flake8(held_lock, timeout=30)
    assert time.monotonic() - started < 25
    assert done.stdout == uncached.flake8
    notes = done.stderr.splitlines()
    assert len(notes) == 1 and "cache lock" in notes[0] and "held by another process" in notes[0], done.stderr
    started = time.monotonic()
    check, fix = _check(held_lock), _fix_diff(held_lock)
    assert time.monotonic() - started < 25
    assert (check.stdout, fix.stdout, check.stderr, fix.stderr) == (uncached.check, uncached.fix, "",
                                                                     uncached.fix_summary)
    # Two flake8 processes at once, cold again: each waits its few seconds at most, and both report what a run
    # without a cache does.
    shutil.rmtree(held_lock / CACHE / "s")
    both = [subprocess.Popen([sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", "."], cwd=held_lock,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for run in both:
        stdout, _ = run.communicate(timeout=TIMEOUT)
        assert stdout == uncached.flake8
