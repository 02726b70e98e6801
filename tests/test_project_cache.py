"""The project model's disk cache, through the real `check` command: where it lives, what it holds, that a warm
run parses nothing, that it never changes a finding, and that it survives corruption, concurrency and a folder
it cannot write."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from project_expectations import project_folders, project_root
from project_trees import (CACHE, LOOP as _LOOP, WRAPPER as _WRAPPER, age_tree, edit_keeping_size_and_mtime,
                           write_tree as _write)

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each case runs the commands
# cold and warm
pytestmark = pytest.mark.slow


_ONCE = "from app.http import get_json\n\n\ndef sync(url):\n    return get_json(url)\n"


# A test module that patches: the fix class of every finding depends on it (fix_facts.project_patches).
_PATCHES = "from unittest import mock\n\n\n@mock.patch('app.http.requests.get')\ndef test_get(get):\n    pass\n"


def _project(root: Path, loop: bool = True) -> Path:
    _write(root, {"pyproject.toml": "", "app/__init__.py": "", "app/http.py": _WRAPPER,
                  "app/sync.py": _LOOP if loop else _ONCE, "app/plain.py": "def add(a, b):\n    return a + b\n",
                  "tests/test_http.py": _PATCHES})
    return root


def _check(root: Path, *args: str, parse_log: Optional[Path] = None,
           env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    environment = dict(os.environ)
    environment.pop("FLAKE8_HTTP_POOL_CACHE_DIR", None)
    if parse_log is not None:
        environment["FLAKE8_HTTP_POOL_PARSE_LOG"] = str(parse_log)
    environment.update(env or {})
    return subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "--isolated", "-q", *args, "."],
                          cwd=root, capture_output=True, text=True, timeout=180, env=environment)


def _parsed(log: Path) -> List[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_the_folder_is_made_at_the_project_root_with_its_tag_and_gitignore(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj")
    _write(root, {"app/deep/x.py": "x = 1\n"})
    done = _check(root / "app" / "deep")  # checked from below: the cache still goes to the root
    assert done.returncode == 0, done.stderr
    folder = root / CACHE
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (folder / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert not (root / "app" / "deep" / CACHE).exists()


def test_a_warm_run_over_an_unchanged_tree_parses_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    log = tmp_path / "parsed.txt"
    cold = _check(root, parse_log=log)
    assert cold.returncode == 1 and "called in a loop at app/sync.py:6" in cold.stdout, cold.stdout + cold.stderr
    assert len(_parsed(log)) >= 4 and "(solve)" in _parsed(log)  # every module, once at least; and the solve
    log.unlink()
    warm = _check(root, parse_log=log)
    assert (warm.stdout, warm.returncode) == (cold.stdout, cold.returncode)
    assert _parsed(log) == []  # no module parsed, and the project not solved again either
    # Without the cache the same run parses every module again (so the assertion above can fail).
    bypassed = _check(root, "--no-cache", parse_log=log)
    assert bypassed.stdout == cold.stdout and len(_parsed(log)) >= 4


def test_an_edit_in_one_module_changes_another_modules_findings_on_the_warm_run(tmp_path: Path) -> None:
    root = _project(tmp_path, loop=False)
    first = _check(root)
    assert (first.returncode, first.stdout) == (0, ""), first.stderr
    log = tmp_path / "parsed.txt"
    _write(root, {"app/sync.py": _LOOP})  # the wrapper of http.py is now called in a loop in sync.py
    second = _check(root, parse_log=log)
    assert second.returncode == 1, second.stderr
    assert "./app/http.py:5:12: HTP102" in second.stdout and "called in a loop at app/sync.py:6" in second.stdout
    assert second.stdout == _check(root, "--no-cache").stdout
    parsed = {os.path.basename(path) for path in _parsed(log)}
    assert "sync.py" in parsed and "plain.py" not in parsed  # only what changed, and what its change seeds
    assert "(solve)" in parsed  # a changed module: the project is solved again
    _write(root, {"app/sync.py": _ONCE})  # and back: the finding goes away
    third = _check(root)
    assert (third.returncode, third.stdout) == (0, ""), third.stderr


_BLOCKS = "import requests\n\n\ndef {0}(u):\n    return requests.get(u).text\n\n\ndef {1}(u):\n    return u\n"
_ASYNC_CALLER = ("from app.helper import fetch, other\n\n\nasync def handle(u):\n    a = fetch(u)\n    b = other(u)\n"
                 "    return a, b\n")


def test_a_warm_run_follows_a_change_of_any_kind_of_seed(tmp_path: Path) -> None:
    # Only the blocking seeds of bot.py change (which helper blocks): a cached check under the old seeds must
    # not be taken for one under the new.
    _write(tmp_path, {"pyproject.toml": "", "app/__init__.py": "", "app/helper.py": _BLOCKS.format("fetch", "other"),
                      "app/bot.py": _ASYNC_CALLER})
    first = _check(tmp_path)
    assert "./app/bot.py:5:" in first.stdout and "HTP403" in first.stdout, first.stdout + first.stderr
    _write(tmp_path, {"app/helper.py": _BLOCKS.format("other", "fetch")})
    second = _check(tmp_path)
    assert "./app/bot.py:6:" in second.stdout and "./app/bot.py:5:" not in second.stdout, second.stdout
    assert second.stdout == _check(tmp_path, "--no-cache").stdout


def test_a_warm_run_marks_a_fix_as_the_project_now_allows(tmp_path: Path) -> None:
    # The fix mark of loop.py's finding depends on another file (a test that patches the name the fix would
    # rewrite makes it report only): the cached mark must follow that file, though loop.py did not change.
    _write(tmp_path, {"pyproject.toml": "", "app/__init__.py": "",
                      "app/loop.py": "import requests\n\n\ndef run(us):\n    for u in us:\n        requests.get(u)\n"})
    first = _check(tmp_path, "--output-format", "json")
    assert [record["fix"] for record in json.loads(first.stdout)] == ["unsafe"], first.stdout + first.stderr
    _write(tmp_path, {"tests/test_loop.py": "from unittest import mock\n\n\n@mock.patch('app.loop.requests.get')\n"
                                            "def test_run(get):\n    pass\n"})
    second = _check(tmp_path, "--output-format", "json")
    assert [record["fix"] for record in json.loads(second.stdout)] == [None], second.stdout
    assert second.stdout == _check(tmp_path, "--output-format", "json", "--no-cache").stdout
    # The patch goes (an edit, not a new file: the project's files keep their names): the fix is back.
    _write(tmp_path, {"tests/test_loop.py": "def test_run():\n    pass\n"})
    third = _check(tmp_path, "--output-format", "json")
    assert [record["fix"] for record in json.loads(third.stdout)] == ["unsafe"], third.stdout


@pytest.mark.slow
@pytest.mark.parametrize("folder", project_folders(), ids=[p.name for p in project_folders()])
def test_cold_and_warm_runs_report_the_same_on_every_fixture_project(folder: Path, tmp_path: Path) -> None:
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__", CACHE))
    root = project_root(copy)
    log = tmp_path / "parsed.txt"
    bypassed = _check(root, "--no-cache")
    cold = _check(root)
    warm = _check(root, parse_log=log)
    assert bypassed.stdout == cold.stdout == warm.stdout
    assert bypassed.returncode == cold.returncode == warm.returncode
    assert _parsed(log) == []


def _entries(root: Path) -> List[Path]:
    return [path for path in (root / CACHE / "m").rglob("*") if path.is_file()]


def test_a_corrupt_or_truncated_entry_is_ignored_and_rewritten(tmp_path: Path) -> None:
    root = _project(tmp_path)
    cold = _check(root)
    entries = _entries(root)
    assert len(entries) >= 4
    for number, entry in enumerate(entries):
        data = entry.read_bytes()
        entry.write_bytes(data[: len(data) // 2] if number % 2 else b"\x80\x05not a pickle at all")
    again = _check(root)
    assert (again.stdout, again.returncode, again.stderr) == (cold.stdout, cold.returncode, "")
    for entry in _entries(root):
        with entry.open("rb") as stream:
            assert isinstance(pickle.load(stream), dict)  # rewritten whole
    log = tmp_path / "parsed.txt"
    assert _check(root, parse_log=log).stdout == cold.stdout and _parsed(log) == []


class _Planted:
    """What a hostile repository could commit as a cache entry: unpickling it would create `marker`."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (open, (self.marker, "w"))


def test_a_planted_entry_that_would_run_code_is_read_as_a_miss(tmp_path: Path) -> None:
    """A cache folder committed into someone else's repository (`git add -f` beats its `.gitignore`) must not
    make `check` or flake8 execute code: every entry and solved blob is replaced by a pickle whose loading calls
    `open(marker, "w")`; both tools give the findings of a cold run, and the marker is never created."""
    root = _project(tmp_path / "tree")
    cold = _check(root)
    flake8 = [sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", "."]
    cold_flake8 = subprocess.run(flake8, cwd=root, capture_output=True, text=True, timeout=180)
    marker = tmp_path / "code-ran"
    planted = [path for path in (root / CACHE).rglob("*") if path.is_file() and path.parent != root / CACHE]
    assert len(planted) >= 4
    hostile = pickle.dumps({"hash": "x", "evil": _Planted(marker)})
    for path in planted:
        path.write_bytes(hostile)
    again = _check(root)
    again_flake8 = subprocess.run(flake8, cwd=root, capture_output=True, text=True, timeout=180)
    assert not marker.exists()
    assert (again.stdout, again.returncode) == (cold.stdout, cold.returncode) and "HTP102" in cold.stdout
    assert again_flake8.stdout == cold_flake8.stdout and "HTP102" in cold_flake8.stdout
    # The planted bytes are live (the runs rewrote the entries they read as misses): a plain pickle.loads of
    # them does create the marker.
    pickle.loads(hostile)
    assert marker.exists()


def test_two_runs_at_once_on_one_tree_are_both_right_and_leave_a_readable_cache(tmp_path: Path) -> None:
    root = _project(tmp_path)
    for number in range(30):  # enough modules for the two runs to overlap in their writes
        _write(root, {f"app/mod{number}.py": f"from app.http import get_json\n\n\ndef f{number}(u):\n"
                                              "    return [get_json(x) for x in u]\n"})
    expected = _check(root, "--no-cache").stdout
    assert "mapped over items" in expected or "called in a loop" in expected
    environment = dict(os.environ, FLAKE8_HTTP_POOL_CACHE_DIR="")
    runs = [subprocess.Popen([sys.executable, "-m", "flake8_http_pool", "check", "--isolated", "-q", "."], cwd=root,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
            for _ in range(2)]
    outputs = [run.communicate(timeout=180) for run in runs]
    for stdout, stderr in outputs:
        assert (stdout, stderr) == (expected, "")
    log = tmp_path / "parsed.txt"
    assert _check(root, parse_log=log).stdout == expected
    assert _parsed(log) == []
    assert not [p for p in (root / CACHE).rglob(".tmp-*")]  # no temporary file left behind


def test_an_unwritable_cache_folder_means_no_cache_one_note_and_the_same_findings(tmp_path: Path) -> None:
    root = _project(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    expected = _check(root, "--no-cache")
    done = _check(root, "--cache-dir", str(blocker / "cache"))
    assert (done.stdout, done.returncode) == (expected.stdout, expected.returncode)
    notes = done.stderr.splitlines()
    assert len(notes) == 1 and "running without a cache" in notes[0], done.stderr
    # The default folder's place taken by a file: the same.
    (root / CACHE).write_text("in the way\n")
    done = _check(root)
    assert (done.stdout, done.returncode) == (expected.stdout, expected.returncode)
    assert len(done.stderr.splitlines()) == 1


def test_no_cache_writes_nothing_and_cache_dir_env_and_config_choose_the_folder(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj")
    assert _check(root, "--no-cache").returncode == 1
    assert not (root / CACHE).exists()
    _check(root, "--cache-dir", str(tmp_path / "flag"))
    assert (tmp_path / "flag" / "CACHEDIR.TAG").exists() and not (root / CACHE).exists()
    _check(root, env={"FLAKE8_HTTP_POOL_CACHE_DIR": str(tmp_path / "env")})
    assert (tmp_path / "env" / "CACHEDIR.TAG").exists() and not (root / CACHE).exists()
    _write(root, {"pyproject.toml": '[tool.flake8-http-pool]\ncache-dir = "../configured"\n'})
    done = subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "-q", "."], cwd=root,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 1 and "warning" not in done.stderr, done.stderr
    assert (tmp_path / "configured" / "CACHEDIR.TAG").exists() and not (root / CACHE).exists()


def test_a_changed_setting_is_a_miss_not_a_stale_finding(tmp_path: Path) -> None:
    root = _project(tmp_path, loop=False)
    _write(root, {"app/sync.py": "from app.http import get_json\n\n\n@every_minute\ndef sync(url):\n"
                                 "    return get_json(url)\n"})
    assert _check(root).stdout == ""
    hot = _check(root, "--hot-decorators", "every_minute")
    assert "decorated with @every_minute at app/sync.py:4" in hot.stdout, hot.stdout + hot.stderr
    assert _check(root).stdout == ""


def test_a_cached_result_shows_the_path_as_given_this_time(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert "./app/http.py:5:12: HTP102" in _check(root).stdout  # cached under `./app/http.py`
    environment = dict(os.environ)
    environment.pop("FLAKE8_HTTP_POOL_CACHE_DIR", None)
    named = subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "--isolated", "-q", "app/http.py",
                            "app/sync.py"], cwd=root, capture_output=True, text=True, timeout=180, env=environment)
    assert named.stdout.startswith("app/http.py:5:12: HTP102"), named.stdout + named.stderr


def _drop_entries(root: Path) -> None:
    """The cache's per-module entries removed: what is left is the stat indexes and the solve."""
    shutil.rmtree(root / CACHE / "m")


def test_a_warm_run_takes_unchanged_files_from_the_stat_index_without_reading_their_entries(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj")
    age_tree(root)
    cold = _check(root)
    assert cold.returncode == 1 and "called in a loop at app/sync.py:6" in cold.stdout, cold.stdout + cold.stderr
    _drop_entries(root)
    log = tmp_path / "parsed.txt"
    warm = _check(root, parse_log=log)
    assert (warm.stdout, warm.returncode) == (cold.stdout, cold.returncode), warm.stderr
    assert _parsed(log) == []  # the entries are gone: only the index can have given every finding
    # A file changed just now is not vouched for by the index: it is read (and, its entry gone, parsed) again.
    _write(root, {"app/sync.py": _LOOP})
    _drop_entries(root)
    again = _check(root, parse_log=log)
    assert again.stdout == cold.stdout and [os.path.basename(p) for p in _parsed(log)] == ["sync.py"], _parsed(log)


def test_an_edit_that_keeps_the_size_and_modification_time_is_still_seen(tmp_path: Path) -> None:
    # An editor or a checkout that puts back the old mtime with a same-sized text: the change time and the
    # inode still tell (as they tell git).
    root = _project(tmp_path / "proj")
    age_tree(root)
    first = _check(root)
    assert "called in a loop at app/sync.py:6" in first.stdout, first.stdout + first.stderr
    edit_keeping_size_and_mtime(root)
    second = _check(root)
    assert (second.returncode, second.stdout) == (0, ""), second.stdout + second.stderr


@pytest.mark.parametrize("aged", [False, True], ids=["files-just-written", "files-settled"])
def test_a_warm_run_after_an_edit_reads_only_the_edited_file(tmp_path: Path, aged: bool) -> None:
    # Phase 2 of the gate and the patch facts of the tests are kept per file too: one edit reads one file.
    root = _project(tmp_path / "proj", loop=False)
    _write(root, {f"app/other_{n}.py": f"def f{n}(x):\n    return x\n" for n in range(5)})
    if aged:
        age_tree(root)
    assert _check(root).stdout == ""
    _write(root, {"app/sync.py": _LOOP})
    log = tmp_path / "parsed.txt"
    second = _check(root, parse_log=log)
    assert second.stdout == _check(root, "--no-cache").stdout and "HTP102" in second.stdout, second.stderr
    parsed = {os.path.basename(path) for path in _parsed(log)}
    assert not any(name.startswith("other_") for name in parsed), parsed
    if aged:
        # Settled files are not even read: their entries dropped, nothing but the edited file (and the one its
        # change seeds) is parsed, and the test module's patch facts come from the index.
        _write(root, {"app/sync.py": _ONCE})
        _drop_entries(root)
        log.unlink()
        third = _check(root, parse_log=log)
        assert (third.returncode, third.stdout) == (0, ""), third.stdout + third.stderr
        assert {os.path.basename(path) for path in _parsed(log) if path != "(solve)"} <= {"sync.py", "http.py"}, \
            _parsed(log)


@pytest.mark.parametrize("codes", [None, pytest.param(("HTP101",), marks=pytest.mark.slow),
                                   pytest.param(("HTP203", "HTP402"), marks=pytest.mark.slow)],
                         ids=["all", "one", "two"])
def test_a_summary_from_a_fix_plan_s_analysis_is_the_summary(codes) -> None:
    """`fix --check` summarizes a module from the Analysis its plan built (LocalModules.summary_of_read), whatever
    rules the plan ran: the summary is the one a parse of its own gives."""
    from flake8_http_pool.fixing import planned_fixes
    from flake8_http_pool.options import Options
    from flake8_http_pool.project_cache import LocalModules, passes_gate, summary_of_text
    from flake8_http_pool.source_files import SourceError, decode_source

    options = Options()
    local = LocalModules(lambda _: options, None)
    compared = 0
    for path in sorted((Path(__file__).parent / "fixtures").rglob("*.py")):
        data = path.read_bytes()
        try:
            text = decode_source(data)
        except SourceError:
            continue
        if not passes_gate(data, text, options):
            continue
        held: list = []
        planned_fixes(text, options, codes, filename=str(path), on_analysis=held.append)
        if not held:
            continue
        compared += 1
        assert local.summary_of_read(str(path), options, data, text, held[0]) == \
            summary_of_text(str(path), text, options), path
    assert compared > 100


def test_phase_one_passes_over_exactly_what_the_gate_fails_without_a_cache_lookup(tmp_path: Path) -> None:
    """LocalModules.first reads ASCII bytes naming no HTTP library as failing the gate before any decoding,
    hashing or cache lookup; everything else goes through the entry. Its answer must be passes_gate's on every
    file: the shapes a gate reads differently, and a sample of the standard library."""
    import shutil
    import sysconfig

    from flake8_http_pool.checking import mentions_a_library
    from flake8_http_pool.options import Options
    from flake8_http_pool.project_cache import LocalModules, ProjectCache, passes_gate, read_module

    files = {"fullwidth.py": "import \uff52\uff45\uff51\uff55\uff45\uff53\uff54\uff53\n",
             "named_only.py": 'LIBRARY = "requests"\n', "imports.py": "import httpx\n",
             "accents.py": "# caf\u00e9\nVALUE = 1\n", "plain.py": "VALUE = 1\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "nul.py").write_bytes(b"VALUE = 1\x00\n")
    (tmp_path / "utf16_cookie.py").write_bytes(b"# coding: utf-16\nimport requests\n")
    for source in sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[::4]:
        shutil.copyfile(source, tmp_path / ("stdlib_" + source.name))
    paths = sorted(str(path) for path in tmp_path.glob("*.py"))
    options = Options()
    for cache in (None, ProjectCache(str(tmp_path / "cache"))):
        lookups = []
        local = LocalModules(lambda _: options, cache)
        if cache is not None:
            load = cache.load
            cache.load = lambda path, *rest: lookups.append(path) or load(path, *rest)  # type: ignore[method-assign]
        found, rest = local.first(paths)
        read = {path: read_module(path, options) for path in paths}
        gated = {path for path, got in read.items() if got is not None and passes_gate(got[0], got[1], options)}
        assert set(found) == gated and str(tmp_path / "imports.py") in gated
        assert str(tmp_path / "fullwidth.py") in gated
        # The rest: what failed the gate, and the undecodable ASCII file phase 2 leaves out in its turn.
        assert set(rest) == {path for path in paths if path not in gated and read[path] is not None} | {
            str(tmp_path / "nul.py")}
        if cache is not None:
            # Looked up: the decodable files whose bytes are not ASCII or name a library, and no other.
            looked = {path for path in paths if read[path] is not None and (
                not read[path][0].isascii() or mentions_a_library(read[path][0]))}
            assert set(lookups) == looked and str(tmp_path / "named_only.py") in looked
            assert str(tmp_path / "plain.py") not in looked and len(looked) < len(paths) // 2
