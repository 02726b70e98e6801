"""The tables a run keeps its files in (ondisk.py, file_table.py, target_table.py), and the runner's renewed pools.

Their users are tested end to end elsewhere (`check` and `fix` give the same reports as before they kept their
files on disk); these tests pin what the tables promise on their own: the order the files come back in, a path
any file system can hold, one file met twice, a shard's project order, and a pool replaced after so many items.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable, Iterator, List

import pytest

from flake8_http_pool import ondisk, target_table
from flake8_http_pool.discovery import PYTHON, Candidate
from flake8_http_pool.file_table import FileTable
from flake8_http_pool.fix_command import FixTarget
from flake8_http_pool.runner import Runner
from flake8_http_pool.target_table import NOT_PLANNED, TargetTable


@pytest.mark.parametrize("path", ["/a/b.py", "/a/caf\u00e9.py", "/a/\udcff\udcfe.py", "/a/\ud800.py"])
def test_a_path_comes_back_as_it_went_in(path: str) -> None:
    db = ondisk.database()
    db.execute("CREATE TABLE t(path BLOB)")
    db.execute("INSERT INTO t VALUES (?)", (ondisk.blob(path),))
    assert ondisk.text(db.execute("SELECT path FROM t").fetchone()[0]) == path


def test_paths_sort_on_disk_as_they_sort_in_python() -> None:
    paths = ["/a/z.py", "/a/\u00e9.py", "/a/\udcff.py", "/a/B.py", "/a/\U0001f600.py", "/a/a.py"]
    db = ondisk.database()
    db.execute("CREATE TABLE t(path BLOB)")
    ondisk.insert_all(db, "INSERT INTO t VALUES (?)", ((ondisk.blob(p),) for p in paths))
    assert [ondisk.text(row[0]) for row in db.execute("SELECT path FROM t ORDER BY path")] == sorted(paths)


def test_pages_let_the_reader_write_to_the_table_it_reads() -> None:
    db = ondisk.database()
    db.execute("CREATE TABLE t(n INTEGER PRIMARY KEY, v INTEGER)")
    count = ondisk.BATCH * 2 + 7
    ondisk.insert_all(db, "INSERT INTO t(v) VALUES (?)", ((n,) for n in range(count)))
    seen = []
    for n, v in ondisk.pages(db, "SELECT n, v FROM t WHERE n > ? ORDER BY n LIMIT ?"):
        seen.append(v)
        db.execute("UPDATE t SET v = ? WHERE n = ?", (-v, n))
    assert seen == list(range(count))
    assert [row[0] for row in db.execute("SELECT v FROM t ORDER BY n")] == [-v for v in range(count)]


def _sqlite_memory_used() -> "Callable[[], int]":
    """SQLite's own count of the memory it holds, from the library this process loaded (skipped where Python
    carries its own copy of SQLite inside the module, with no library to ask)."""
    import ctypes

    with open("/proc/self/maps") if os.path.exists("/proc/self/maps") else open(os.devnull) as maps:
        libraries = sorted({line.split()[-1] for line in maps if "libsqlite3" in line})
    if not libraries:
        pytest.skip("SQLite is not a shared library this process loaded")
    used = ctypes.CDLL(libraries[0]).sqlite3_memory_used
    used.restype = ctypes.c_int64
    return lambda: int(used())


def test_temp_tables_keep_to_the_cache_size_asked() -> None:
    # Setting temp_store after the TEMP cache size dropped that size: TEMP tables then had SQLite's 2 MiB
    # default, whatever CACHE_KIB said.
    used = _sqlite_memory_used()
    db = ondisk.database()
    db.execute("CREATE TEMP TABLE t(n INTEGER PRIMARY KEY, data BLOB)")
    before = used()
    ondisk.insert_all(db, "INSERT INTO t(data) VALUES (?)", ((bytes(300),) for _ in range(20000)))  # 6 MB
    grown = used() - before
    assert db.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 20000
    assert grown < (ondisk.CACHE_KIB + 512) * 1024, grown


def test_targets_come_in_the_run_s_order_without_a_sort(tmp_path: Path) -> None:
    # A sort held about 1 MiB of SQLite's memory for as long as its rows were read, and fix reads two at once.
    table = TargetTable().add([FixTarget(str(tmp_path / "a.py"), str(tmp_path), False, None)])
    for where in ("", "WHERE own = 1 "):
        plan = table.db.execute(f"EXPLAIN QUERY PLAN {target_table._ROW} {where}{target_table._ORDER}").fetchall()
        assert not any("TEMP B-TREE" in row[-1] for row in plan), plan


def test_batches_cut_in_lists_of_the_size_asked() -> None:
    assert list(ondisk.batches(range(7), 3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(ondisk.batches([], 3)) == []


def test_the_file_table_gives_the_run_its_files_in_order_and_each_inode_once(tmp_path: Path) -> None:
    table = FileTable()
    assert table.remember(1 << 130 | 5) and not table.remember(1 << 130 | 5) and table.remember(5)
    names = [str(tmp_path / f"m{n}.py") for n in range(ondisk.BATCH + 3)]
    table.add(Candidate(name, PYTHON, ("config", ())) for name in names)
    assert [row[1] for row in table.everything()] == names
    assert list(table.python_paths()) == names and table.keys == [("config", ())]


def test_a_shard_solves_its_files_in_the_project_order(tmp_path: Path) -> None:
    """The run's own files, then the project's others it does not hold; the model takes them in the order of
    the project list, files the list does not name last, as they came (shards.py)."""
    own = [str(tmp_path / name) for name in ("c.py", "x.py", "a.py")]
    listed = [str(tmp_path / name) for name in ("a.py", "b.py", "c.py", "a.py")]
    table = FileTable()
    table.add(Candidate(path, PYTHON, None) for path in own)
    table.add_context(Candidate(path, PYTHON, None) for path in listed)
    assert [(os.path.basename(row[1]), row[5]) for row in table.everything()] == [
        ("c.py", 1), ("x.py", 1), ("a.py", 1), ("b.py", 0)]
    table.record((row[0], "rest", None, False, None, None) for row in list(table.everything()))
    assert [os.path.basename(path) for path in table.modules()] == ["a.py", "b.py", "c.py", "x.py"]


def _targets(tmp_path: Path, names: List[str]) -> List[FixTarget]:
    return [FixTarget(str(tmp_path / name), str(tmp_path), False, ("config", ())) for name in names]


def test_the_target_table_gives_fix_what_it_asks(tmp_path: Path) -> None:
    table = TargetTable().add(_targets(tmp_path, ["b.py", "a.py", "c.py"]))
    a, b = str(tmp_path / "a.py"), str(tmp_path / "b.py")
    assert [t.path for t in table.all()] == [b, a, str(tmp_path / "c.py")] and len(table.all()) == 3
    assert [t.path for t in table.left({a}, own_only=False)] == [b, str(tmp_path / "c.py")]
    assert table.own() is None and table.holds(a) and not table.holds(str(tmp_path / "d.py"))
    assert list(table.absolute_paths(sort=True)) == sorted([a, b, str(tmp_path / "c.py")])
    table.seeds = {a: "seeds of a"}
    assert table.get(a).seeds == "seeds of a" and table.get(b).seeds is None and table.get("/none.py") is None
    keys = table.keys_by_path()
    assert len(keys) == 3 and keys[a] == ("config", ()) and keys.get("/none.py", "no") == "no"
    assert table.planned(a) is NOT_PLANNED
    table.plan([(a, None), (b, FixTarget("x", "y", True))])
    assert table.planned(a) is None and table.planned(b) == FixTarget("x", "y", True)
    assert table.planned_many([b, "/none.py"]) == {b: FixTarget("x", "y", True), "/none.py": NOT_PLANNED}
    assert list(keys.keyed([a, "/none.py"])) == [(a, ("config", ())), ("/none.py", None)]


def test_a_shard_of_fix_fixes_its_own_files_in_the_project_order(tmp_path: Path) -> None:
    table = TargetTable().add(_targets(tmp_path, ["c.py", "a.py"]))
    table.add_project(_targets(tmp_path, ["a.py", "b.py", "d.py"]), [str(tmp_path / n) for n in ("b.py", "a.py")])
    assert [os.path.basename(t.path) for t in table.all()] == ["b.py", "a.py", "c.py", "d.py"]
    own = table.own()
    assert own is not None and str(tmp_path / "a.py") in own and str(tmp_path / "b.py") not in own
    assert [os.path.basename(t.path) for t in table.left(set(), own_only=True)] == ["a.py", "c.py"]


def _pid(shared: object, item: int) -> tuple:
    return item, os.getpid()


def _die_on(shared: int, item: int) -> int:
    if item == shared:
        os._exit(3)
    return item


@pytest.mark.skipif(sys.platform == "win32", reason="the pools fork")
def test_a_renewed_pool_gives_every_result_in_order_from_new_workers() -> None:
    results = list(Runner(_pid, None, lambda item: (item, None), 2, chunk_size=4, renew_after=8).run(range(40)))
    assert [item for item, _ in results] == list(range(40))
    workers = {pid for _, pid in results}
    assert os.getpid() not in workers and len(workers) > 2  # 5 pools of 2 workers: more than one pool's


@pytest.mark.skipif(sys.platform == "win32", reason="the pools fork")
def test_a_pool_is_renewed_by_the_weight_of_its_results_when_given_one() -> None:
    """check's phase 1 counts only the files it parsed towards a renewal: one read and passed over by the
    gate costs a worker's heap nothing, and each renewal stalls every worker."""
    light = list(Runner(_pid, None, lambda item: (item, None), 2, chunk_size=4, renew_after=8,
                        weight=lambda result: 0).run(range(40)))
    assert [item for item, _ in light] == list(range(40)) and len({pid for _, pid in light}) <= 2
    heavy = list(Runner(_pid, None, lambda item: (item, None), 2, chunk_size=4, renew_after=8,
                        weight=lambda result: 1 if result[0] % 2 else 0).run(range(80)))
    assert [item for item, _ in heavy] == list(range(80)) and len({pid for _, pid in heavy}) > 2


@pytest.mark.skipif(sys.platform == "win32", reason="the pools fork")
def test_a_renewed_pool_still_isolates_a_crash() -> None:
    results = list(Runner(_die_on, 13, lambda item: -item, 2, chunk_size=2, renew_after=6).run(range(24)))
    assert results == [item if item != 13 else -13 for item in range(24)]


def _items_slowly_after_the_first_two() -> Iterator[int]:
    yield from (13, 1)
    time.sleep(1.0)  # the worker given 13 dies meanwhile: the pool is broken before the next chunk goes out
    yield from range(2, 6)


@pytest.mark.skipif(sys.platform == "win32", reason="the pools fork")
def test_a_chunk_sent_to_a_pool_a_worker_broke_is_run_again_not_raised() -> None:
    assert list(Runner(_die_on, 13, lambda item: -item, 2, chunk_size=1).run(_items_slowly_after_the_first_two())) \
        == [-13, 1, 2, 3, 4, 5]


def test_a_full_temporary_folder_is_said_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture) -> None:
    """SQLite spills the run's tables to the temporary folder: when it cannot, the user is told where, once."""
    import sqlite3

    from flake8_http_pool import cli

    def full(self: FileTable, candidates: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(FileTable, "add", full)
    (tmp_path / "a.py").write_text("x = 1\n")
    assert cli.main(["check", "--isolated", "--no-cache", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == ("flake8-http-pool: error: the run's temporary files could not be written (database or disk "
                   "is full); free space where TMPDIR points, or point it elsewhere\n")
