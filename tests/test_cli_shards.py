"""`check` and `fix` split across CI jobs, through the real command: a shard lists its files (`--files-from`) and
the whole project (`--project-from`), and the shards together report and change exactly what one run over all
the files does, each finding once and each file's change in one shard (docs/sharding.md)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Dict, List

import pytest

from cli_support import assert_no_traceback, run_cli
from project_trees import python_files, round_robin, sharded_tree

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each case runs the tree in
# shards and whole
pytestmark = pytest.mark.slow



@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return sharded_tree(tmp_path / "tree")


def _list(folder: Path, name: str, paths: List[str]) -> str:
    (folder / name).write_text("".join(path + "\n" for path in paths), encoding="utf-8")
    return name


def _records(tree: Path, *args: str) -> List[dict]:
    result = run_cli(["check", "--output-format", "json", *args], cwd=tree)
    assert_no_traceback(result)
    assert result.returncode in (0, 1, 2), result.stderr
    return json.loads(result.stdout)


def _key(record: dict) -> str:
    return json.dumps(record, sort_keys=True)


def test_a_shard_needs_the_project_to_find_what_other_modules_cause(tree: Path) -> None:
    """The wrapper's module alone is a project of one file: the loop calling it is another shard's."""
    _list(tree, "all.txt", python_files(tree))
    _list(tree, "shard.txt", ["app/http.py"])
    alone = _records(tree, "--files-from", "shard.txt", "--exit-zero")
    assert alone == []
    (found,) = _records(tree, "--files-from", "shard.txt", "--project-from", "all.txt")
    assert (found["path"], found["code"], found["line"]) == ("app/http.py", "HTP102", 5)
    assert (found["details"]["hot_file"], found["details"]["hot_line"]) == (str(tree / "app" / "sync.py"), 6)
    assert "called in a loop at app/sync.py:6" in found["message"]


@pytest.mark.parametrize("shards", [1, 2, 3, 0], ids=lambda n: f"{n} shards" if n else "a shard per file")
def test_the_shards_report_what_one_run_reports_each_finding_once(tree: Path, shards: int) -> None:
    paths = python_files(tree)
    _list(tree, "all.txt", paths)
    whole = _records(tree, "--files-from", "all.txt")
    assert {r["code"] for r in whole} == {"HTP101", "HTP102", "HTP104", "HTP203", "E999"}
    parts = round_robin(paths, shards or len(paths))
    union: List[dict] = []
    for number, part in enumerate(parts):
        union += _records(tree, "--files-from", _list(tree, f"shard{number}.txt", part), "--project-from", "all.txt")
    assert sorted(map(_key, union)) == sorted(map(_key, whole))
    assert max(Counter(map(_key, union)).values()) == 1
    # A warm cache (the shards wrote it) gives the same.
    again = _records(tree, "--files-from", "shard0.txt", "--project-from", "all.txt")
    assert sorted(map(_key, again)) == sorted(map(_key, union[:len(again)]))


def _chunks(diff: str) -> Dict[str, str]:
    """A `fix --diff` output per file (its `--- path` header to the next)."""
    chunks: Dict[str, str] = {}
    current = None
    for line in diff.splitlines(keepends=True):
        if line.startswith("--- "):
            current = line[4:].rstrip("\n")
            assert current not in chunks, f"{current} twice in one diff"
            chunks[current] = ""
        assert current is not None, diff
        chunks[current] += line
    return chunks


@pytest.mark.parametrize("shards", [2, pytest.param(3, marks=pytest.mark.slow),
                                    pytest.param(0, marks=pytest.mark.slow)],
                         ids=lambda n: f"{n} shards" if n else "a shard per file")
def test_the_shards_diffs_are_the_unsharded_diff(tree: Path, shards: int) -> None:
    paths = python_files(tree)
    _list(tree, "all.txt", paths)
    whole = run_cli(["fix", "--unsafe-fixes", "--diff", "--files-from", "all.txt"], cwd=tree)
    assert whole.returncode == 2, whole.stderr  # bad.py
    expected = _chunks(whole.stdout)
    # The change across modules (catalog/client.py, report.py, sync.py) is in it, with the per-file fixes.
    assert {"catalog/client.py", "report.py", "sync.py", "app/http.py", "streamed.py", "loop_é.py"} <= set(expected)
    union: Dict[str, str] = {}
    for number, part in enumerate(round_robin(paths, shards or len(paths))):
        shard = run_cli(["fix", "--unsafe-fixes", "--diff", "--files-from", _list(tree, f"s{number}.txt", part),
                         "--project-from", "all.txt"], cwd=tree)
        assert_no_traceback(shard)
        chunks = _chunks(shard.stdout)
        assert not set(chunks) & set(union), f"changed by two shards: {set(chunks) & set(union)}"
        union.update(chunks)
        if "catalog/client.py" in part:  # the change's first file: this shard makes all of it
            assert {"catalog/client.py", "report.py", "sync.py"} <= set(chunks), shard.stdout
    assert union == expected


def _files(folder: Path) -> Dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*.py"))
            if ".git" not in p.parts and ".flake8-http-pool-cache" not in p.parts}


def test_shards_writing_their_own_checkouts_change_what_one_run_changes(tree: Path, tmp_path: Path) -> None:
    """As CI runs them: each shard fixes its own copy of the tree; every file is changed in at most one copy, and
    the changed files put together are the tree one run leaves."""
    paths = python_files(tree)
    _list(tree, "all.txt", paths)
    original = _files(tree)
    whole = shutil.copytree(tree, tmp_path / "whole")
    assert run_cli(["fix", "--unsafe-fixes", "--no-progress", "--files-from", "all.txt"], cwd=whole).returncode == 2
    merged = dict(original)
    for number, part in enumerate(round_robin(paths, 2)):
        copy = shutil.copytree(tree, tmp_path / f"shard{number}")
        result = run_cli(["fix", "--unsafe-fixes", "--no-progress", "--files-from", _list(copy, "s.txt", part),
                          "--project-from", "all.txt"], cwd=copy)
        assert_no_traceback(result)
        changed = {path: data for path, data in _files(copy).items() if data != original[path]}
        assert not {p for p in changed if merged[p] != original[p]}, "a file changed by two shards"
        merged.update(changed)
    assert merged == _files(whole) != original


def _held(stderr: str) -> "Counter[str]":
    """The summary's `N unsafe fixes not applied (HTP101: 1, ...)` counts."""
    held: "Counter[str]" = Counter()
    for line in stderr.splitlines():
        if "unsafe fix" in line and "not applied (" in line:
            for part in line.split("(", 1)[1].split(")", 1)[0].split(", "):
                code, count = part.split(": ")
                held[code] += int(count)
    return held


def test_without_unsafe_fixes_the_change_across_modules_is_counted_once(tree: Path) -> None:
    paths = python_files(tree)
    _list(tree, "all.txt", paths)
    whole = run_cli(["fix", "--diff", "--files-from", "all.txt"], cwd=tree)
    assert _held(whole.stderr)["HTP104"] == 1, whole.stderr
    held: "Counter[str]" = Counter()
    for number, part in enumerate(round_robin(paths, len(paths))):
        shard = run_cli(["fix", "--diff", "--files-from", _list(tree, f"s{number}.txt", part),
                         "--project-from", "all.txt"], cwd=tree)
        held += _held(shard.stderr)
    assert held == _held(whole.stderr)


def test_project_from_errors(tree: Path) -> None:
    missing = run_cli(["check", "--files-from", "-", "--project-from", "nowhere.txt"], cwd=tree, stdin="bad.py\n")
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr == "flake8-http-pool: error: --project-from nowhere.txt: cannot read the file list: " \
                             "no such file or directory\n"
    both = run_cli(["fix", "--files-from", "-", "--project-from", "-"], cwd=tree, stdin="bad.py\n")
    assert both.returncode == 2
    assert "`--files-from -` and `--project-from -` both want standard input" in both.stderr
    # Problems with files the shard only reads for the model are the other shards' to report.
    _list(tree, "all.txt", [*python_files(tree), "gone.py"])
    quiet = run_cli(["check", "--files-from", "-", "--project-from", "all.txt"], cwd=tree, stdin="streamed.py\n")
    assert quiet.returncode == 1 and quiet.stderr == "", quiet.stderr
    assert quiet.stdout.startswith("streamed.py:5:9: HTP203")
