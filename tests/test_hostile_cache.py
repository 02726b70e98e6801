"""A cache folder that came with the repository is hostile (issue 32): whatever it holds, `check`, `fix` and
flake8 never follow a link out of it, never hang on it, and print what a run without a cache prints.

Every test works on a project with a root marker and a finding whose reason is in another module (so the
project model and its solve run), beside an `outside/` folder the cache must never
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

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): every case builds a project
# and a hostile cache folder and runs check and flake8 on it
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX links, FIFOs and flock")]

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
    `a+b`). It is left alone now (no run takes a lock), and the project is solved as without it."""
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
    """CacheFolder itself, in both ways of working: a link (entry, subfolder, folder) is never followed,
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


def test_a_lock_held_by_another_process_stalls_no_run(held_lock: Path, uncached: Outputs) -> None:
    """flake8 waited forever on a held lock, saying nothing; then a few seconds, saying so. No run takes a lock
    now: flake8, `check` and `fix` answer at once, with the findings of a run without a cache."""
    started = time.monotonic()
    done = _flake8(held_lock, timeout=30)
    check, fix = _check(held_lock), _fix_diff(held_lock)
    assert time.monotonic() - started < 25
    assert (done.stdout, done.stderr) == (uncached.flake8, "")
    assert (check.stdout, fix.stdout, check.stderr, fix.stderr) == (uncached.check, uncached.fix, "",
                                                                     uncached.fix_summary)
    # Two flake8 processes at once, cold again: they share the modules' summaries through the cache, and both
    # report what a run without a cache does.
    shutil.rmtree(held_lock / CACHE / "s")
    both = [subprocess.Popen([sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", "."], cwd=held_lock,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for run in both:
        stdout, _ = run.communicate(timeout=TIMEOUT)
        assert stdout == uncached.flake8


# -- entries of the wrong shape -----------------------------------------------------------------------------
def _blobs(cache: Path, kind: str, select: Callable[[str], bool]) -> Iterator[Tuple[Path, str, Any]]:
    for path in sorted((cache / kind).iterdir()):
        key, value = pickle.loads(path.read_bytes())
        if select(key):
            yield path, key, value


def _starting(prefix: str) -> Callable[[str], bool]:
    return lambda key: key.startswith(prefix)


def _in_blobs(kind: str, change: Callable[[Any], Any], select: Callable[[str], bool] = lambda key: True,
              forget: Tuple[str, ...] = ()) -> Callable[[Path], int]:
    """A corruption: `change` applied to each blob of `kind` whose key `select` takes, after the kinds `forget`
    are removed (what would answer before the blob is read)."""
    def corrupt(cache: Path) -> int:
        _forget(cache, forget)
        count = 0
        for path, key, value in _blobs(cache, kind, select):
            path.write_bytes(pickle.dumps((key, change(value))))
            count += 1
        return count
    return corrupt


def _in_entries(change: Callable[[Dict[str, Any]], None], forget: Tuple[str, ...] = ()) -> Callable[[Path], int]:
    """A corruption: `change` applied to every module entry (m/), after the kinds `forget` are removed; it
    counts the entries changed."""
    def corrupt(cache: Path) -> int:
        _forget(cache, forget)
        count = 0
        for path in sorted((cache / "m").rglob("*")):
            if path.is_file():
                entry = pickle.loads(path.read_bytes())
                before = pickle.dumps(entry)
                change(entry)
                after = pickle.dumps(entry)
                if after != before:
                    path.write_bytes(after)
                    count += 1
        return count
    return corrupt


def _forget(cache: Path, kinds: Tuple[str, ...]) -> None:
    for kind in kinds:
        if kind == "quick":  # the plugin's quick check alone (the stat index beside it is under test)
            for path, _, _ in list(_blobs(cache, "s", _starting("quick"))):
                path.unlink()
        else:
            shutil.rmtree(cache / kind)


def _each_value(change: Callable[[Any], Any]) -> Callable[[Dict[str, Any]], Dict[str, Any]]:
    """`change` applied to each value of a stat index (path -> (signature, tag, value))."""
    return lambda memo: {path: (entry[0], entry[1], change(entry[2])) for path, entry in memo.items()}


def _line_a_string(findings: tuple) -> tuple:
    if not findings:
        return ("not a finding",)
    first = findings[0]
    return (first._replace(finding=first.finding._replace(line=str(first.finding.line))),) + findings[1:]


def _phase_one_wrong(value: tuple) -> tuple:
    return ("findings", *value[1:])


def _phase_one_line(value: tuple) -> tuple:
    return (_line_a_string(value[0]), *value[1:])


def _results_a_list(entry: Dict[str, Any]) -> None:
    if "results" in entry:
        entry["results"] = list(entry["results"].values())


def _results_line(entry: Dict[str, Any]) -> None:
    for field in ("results", "seeded"):
        for key, result in entry.get(field, {}).items():
            entry[field][key] = result._replace(findings=_line_a_string(result.findings))


def _seeded_strings(entry: Dict[str, Any]) -> None:
    if "seeded" in entry:
        entry["seeded"] = {key: "a result" for key in entry["seeded"]}


def _gated_a_string(entry: Dict[str, Any]) -> None:
    if "gated" in entry:
        entry["gated"] = "yes" if entry["gated"] else ""


def _functions_a_list(entry: Dict[str, Any]) -> None:
    if entry.get("summary"):
        entry["summary"]["functions"] = list(entry["summary"]["functions"])


def _defs_unknown(entry: Dict[str, Any]) -> None:
    if entry.get("summary") and entry["summary"]["defs"]:
        entry["summary"]["defs"] = {name: "no.such.function" for name in entry["summary"]["defs"]}


def _classes_short(entry: Dict[str, Any]) -> None:
    if entry.get("classes"):
        entry["classes"] = {key: [] for key in entry["classes"]}  # one per finding: none kept dropped them all


def _classes_unknown(entry: Dict[str, Any]) -> None:
    if entry.get("classes"):
        entry["classes"] = {key: ["safest"] * len(value) for key, value in entry["classes"].items()}


def _kept_tuples(entry: Dict[str, Any]) -> None:
    if entry.get("findings") and entry["findings"][1]:
        entry["findings"] = (entry["findings"][0], [tuple(found) for found in entry["findings"][1]])


def _kept_surrogate(entry: Dict[str, Any]) -> None:
    if entry.get("findings") and entry["findings"][1]:
        kept = entry["findings"][1]
        entry["findings"] = (entry["findings"][0], [kept[0]._replace(message="\ud800 forged")] + kept[1:])


def _hot_a_list(seeds: Dict[str, Any]) -> Dict[str, Any]:
    return {path: value._replace(hot=list(value.hot.items())) for path, value in seeds.items()}


def _hot_reason_only(seeds: Dict[str, Any]) -> Dict[str, Any]:
    return {path: value._replace(hot={key: hot[:1] for key, hot in value.hot.items()}) for path, value in seeds.items()}


def _keyed_by_numbers(seeds: Dict[str, Any]) -> Dict[Any, Any]:
    return {number: value for number, value in enumerate(seeds.values())}


def _seeded_index(key: str) -> bool:
    return key.endswith("'seeded')")


class ShapeCase(NamedTuple):
    name: str
    corrupt: Callable[[Path], int]  # changes the cache folder; how many entries or blobs it changed


# Per kind of entry, wrong shapes. Removed first: what would answer before the entry is read (the stat indexes
# before the module entries, the solved seeds before the summaries).
SHAPES = [
    ShapeCase("module entry: results a list", _in_entries(_results_a_list, ("i", "s"))),
    ShapeCase("module entry: a finding's line a string", _in_entries(_results_line, ("i", "s"))),
    ShapeCase("module entry: seeded results strings", _in_entries(_seeded_strings, ("i", "s"))),
    ShapeCase("module entry: gated a string", _in_entries(_gated_a_string, ("i", "s"))),
    ShapeCase("module entry: summary functions a list", _in_entries(_functions_a_list, ("i", "s"))),
    ShapeCase("module entry: summary defs naming no function", _in_entries(_defs_unknown, ("i", "s"))),
    ShapeCase("module entry: fix classes fewer than findings", _in_entries(_classes_short)),
    ShapeCase("module entry: fix classes unknown", _in_entries(_classes_unknown)),
    ShapeCase("module entry: flake8's findings tuples", _in_entries(_kept_tuples)),
    ShapeCase("module entry: flake8's finding with a lone surrogate", _in_entries(_kept_surrogate)),
    ShapeCase("check's solved seeds: hot reasons alone",
              _in_blobs("s", lambda v: (v[0], _hot_reason_only(v[1]), v[2]), _starting("check-solved"))),
    ShapeCase("check's solved seeds keyed by numbers",
              _in_blobs("s", lambda v: (v[0], _keyed_by_numbers(v[1]), v[2]), _starting("check-solved"))),
    ShapeCase("the plugin's solved seeds: hot a list",
              _in_blobs("s", lambda v: (v[0], _hot_a_list(v[1])), _starting("solved"))),
    ShapeCase("the plugin's quick check an int", _in_blobs("s", lambda v: (v[0], 7), _starting("quick"))),
    ShapeCase("the plugin's stat index: digests ints",
              _in_blobs("s", _each_value(lambda v: 7), _starting("index"), ("quick",))),
    ShapeCase("the plugin's folder listings strings",
              _in_blobs("s", _each_value(lambda v: ("app", "tests")), _starting("folders"))),
    ShapeCase("check's stat index: findings a string",
              _in_blobs("i", _each_value(_phase_one_wrong), lambda key: not _seeded_index(key))),
    ShapeCase("check's stat index: a finding's line a string",
              _in_blobs("i", _each_value(_phase_one_line), lambda key: not _seeded_index(key))),
    ShapeCase("check's seeded stat index: a finding's line a string",
              _in_blobs("i", _each_value(_line_a_string), _seeded_index)),
    ShapeCase("phase 2's misses an int", _in_blobs("g", _each_value(lambda v: 7), forget=("s",))),
    ShapeCase("a root's patch targets an int", _in_blobs("r", _each_value(lambda v: 7), forget=("p",))),
    ShapeCase("a file's patch targets ints", _in_blobs("p", lambda v: (1, 2), forget=("r",))),
]


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Tuple[Path, Path]:
    """A project and a copy of the warm cache the three commands leave in it."""
    root = _project(tmp_path_factory.mktemp("warm") / "proj")
    _cold_cache(root)
    kept = root.parent / "kept-cache"
    shutil.copytree(root / CACHE, kept, symlinks=True)
    return root, kept


@pytest.mark.parametrize("case", SHAPES, ids=[case.name for case in SHAPES])
def test_an_entry_of_the_wrong_shape_is_a_miss(warm: Tuple[Path, Path], uncached: Outputs,
                                                case: ShapeCase) -> None:
    """Well-formed pickles of plain data and this tool's own types, in the wrong shapes: `check`, `fix --diff`
    and flake8, each on the corrupted cache, print what a run without a cache prints (a `results` of the wrong
    type made `check` report an internal error and drop every finding of the run)."""
    root, kept = warm
    runs = []
    for run in (_check, _fix_diff, _flake8):
        shutil.rmtree(root / CACHE)
        shutil.copytree(kept, root / CACHE, symlinks=True)
        assert case.corrupt(root / CACHE) > 0
        runs.append(run(root))
    assert _outputs(tuple(runs), uncached) == uncached
    assert [done.stderr for done in runs] == ["", uncached.fix_summary, ""]


# -- the shapes themselves ----------------------------------------------------------------------------------
def _leaves(value: Any, where: Tuple[Any, ...] = ()) -> Iterator[Tuple[Tuple[Any, ...], Any]]:
    """Every leaf of a cached value and where it is; a finding's details left out (any plain data is theirs),
    and the items of sets (no place to put another)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, where + (key,))
    elif isinstance(value, (list, tuple)):
        fields = getattr(value, "_fields", ())
        for index, item in enumerate(value):
            if not fields or fields[index] != "details":
                yield from _leaves(item, where + (index,))
    elif not isinstance(value, (set, frozenset)):
        yield where, value


def _replaced(value: Any, where: Tuple[Any, ...], new: Any) -> Any:
    if not where:
        return new
    head, rest = where[0], where[1:]
    if isinstance(value, dict):
        return {**value, head: _replaced(value[head], rest, new)}
    items = list(value)
    items[head] = _replaced(items[head], rest, new)
    return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)


def _other_type(leaf: Any) -> Any:
    return 7 if isinstance(leaf, (str, bool)) or leaf is None else "7"


@pytest.fixture(scope="module")
def corpus_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cache `check` and flake8 leave on the rules' fixtures and the fixture projects (every shape of
    summary and finding the rules make)."""
    root = tmp_path_factory.mktemp("corpus")
    fixtures = Path(__file__).parent / "fixtures"
    shutil.copytree(fixtures / "projects", root / "projects")
    for source in fixtures.glob("*.py"):
        shutil.copyfile(source, root / source.name)
    (root / "pyproject.toml").write_text("")
    _check(root)
    _flake8(root)
    return root / CACHE


# The field names of entries and summaries: a leaf's place is told by these, every other key or index being one
# of many alike (a function's key, a finding's number), tried a few times each.
_FIELDS = frozenset({
    "hash", "path", "gated", "summary", "results", "seeded", "findings", "classes", "version", "functions",
    "module_calls", "defs", "exports", "stars", "library_roots", "class_facts", "has_async", "name", "line",
    "calls", "hot", "unpooled", "client", "wrapper", "factory", "blocks", "always", "writes", "handoffs",
    "factory_name", "factory_same", "bases", "clients", "own", "stored"})
_TRIES = 5


def _refused_everywhere(value: Any, valid: Callable[[Any], bool], tried: Dict[Tuple[Any, ...], int]) -> int:
    """Assert `valid` refuses `value` with any one leaf of another type (each kind of place a few times)."""
    count = 0
    for where, leaf in _leaves(value):
        kind = tuple(part if isinstance(part, str) and part in _FIELDS else type(part).__name__ for part in where)
        if where[:1] in (("hash",), ("path",)) or tried.get(kind, 0) >= _TRIES:
            continue  # hash and path: compared with what they must be (ProjectCache.load)
        tried[kind] = tried.get(kind, 0) + 1
        assert not valid(_replaced(value, where, _other_type(leaf))), where
        count += 1
    return count


def test_every_leaf_of_another_type_is_refused(corpus_cache: Path) -> None:
    """Each real entry passes its shape; the same entry with any one leaf (a string, a number, a flag, a None)
    of another type does not: no field of an entry reaches the engine unchecked."""
    from flake8_http_pool import cache_shapes as shapes

    tried: Dict[Tuple[Any, ...], int] = {}
    for path in sorted((corpus_cache / "m").rglob("*")):
        if path.is_file():
            entry = pickle.loads(path.read_bytes())
            assert shapes.module_entry(entry), path
            _refused_everywhere(entry, shapes.module_entry, tried)
    for prefix, valid in (("check-solved", shapes.check_solved), ("solved", shapes.plugin_solved)):
        for path, _, value in _blobs(corpus_cache, "s", _starting(prefix)):
            assert valid(value), path
            _refused_everywhere(value, valid, tried)
    assert len(tried) > 60  # the kinds of place tried: every field of a summary, a result, a finding, seeds


def test_a_field_read_alone_is_checked_alone(corpus_cache: Path, tmp_path: Path) -> None:
    """The flake8 plugin's warm run reads a module's findings alone (`load(..., only=("findings",))`): a
    wrong leaf in its findings is a miss, as a wrong leaf anywhere is for the whole entry; one in the summary,
    which that read neither takes nor checks, leaves the findings read."""
    from flake8_http_pool import cache_shapes as shapes
    from flake8_http_pool.project_cache import ProjectCache

    found = [pickle.loads(path.read_bytes()) for path in sorted((corpus_cache / "m").rglob("*")) if path.is_file()]
    found = [entry for entry in found if entry.get("findings") and entry["findings"][1] and entry.get("summary")]
    assert found
    tried: Dict[Tuple[Any, ...], int] = {}
    for entry in found:
        _refused_everywhere(entry["findings"], shapes.module_entry_field("findings"), tried)
    entry = found[0]
    cache = ProjectCache(str(tmp_path / "cache"))
    module = tmp_path / "m.py"
    broken_summary = dict(entry, summary={"functions": 3})
    cache.store(str(module), "options", "digest", broken_summary)
    assert cache.load(str(module), "options", "digest") == {}
    assert cache.load(str(module), "options", "digest", only=("findings",)) == {"findings": entry["findings"]}
    broken_findings = dict(entry, findings=(entry["findings"][0], [None]))
    cache.store(str(module), "options", "digest", broken_findings)
    assert cache.load(str(module), "options", "digest", only=("findings",)) == {}


def _control_characters(entry: Dict[str, Any]) -> None:
    if entry.get("findings") and entry["findings"][1]:
        kept = entry["findings"][1]
        entry["findings"] = (entry["findings"][0], [found._replace(message="\x1b[2J\r\nforged.py:1:1: HTP101 \x00")
                                                    for found in kept])
    for field in ("results", "seeded"):
        for key, result in entry.get(field, {}).items():
            entry[field][key] = result._replace(findings=tuple(
                item._replace(finding=item.finding._replace(message="\x1b[2J\r\nforged.py:1:1: HTP101 \x00"))
                for item in result.findings))


@pytest.mark.parametrize("args", [(), ("--output-format", "json"), ("--output-format", "sarif")])
def test_a_forged_message_with_control_characters_cannot_crash(warm: Tuple[Path, Path], args: Tuple[str, ...]) -> None:
    """A message a committed entry carries is the repository's to forge (as its files' findings are); whatever
    characters it holds, the run ends with its findings and exit 1, never a traceback. (That every message is
    escaped on output is the output's business.)"""
    root, kept = warm
    for run in (lambda: _check(root, *args), lambda: _flake8(root)):
        shutil.rmtree(root / CACHE)
        shutil.copytree(kept, root / CACHE, symlinks=True)
        assert _in_entries(_control_characters, ("i", "s"))(root / CACHE) > 0
        done = run()
        assert_no_traceback(done)
        assert done.returncode == 1 and "internal error" not in done.stderr, done.stderr
        assert "forged.py" in done.stdout  # the forged message was read and shown (escaped or not)
