"""The files of one `fix` run, on disk (ondisk.py), as check's file_table.py holds check's: the run goes through
them as often as it needs, a few rows at a time, and each comes out as a fix_command.FixTarget with what the
project model found about its module (`seeds`). Plans made in phase 1 (`fix --check`) are kept here too.

Rows are numbered in the order the files came (`n`): the run's own files first, then, in one shard of a run,
the rest of the project it only reads (`own` 0); `ord` is a file's place in the project list's order.
"""

from __future__ import annotations

import os
import pickle
from typing import Any, Dict, FrozenSet, Iterable, Iterator, Optional, Sequence, Set, Tuple

from . import ondisk
from .ondisk import blob, text

_ROW = "SELECT path, root, explicit, key, absolute FROM targets"
_ORDER = "ORDER BY ord, n"
_MISSING = object()


class TargetTable(ondisk.RunFiles):
    """One run's targets (fix_command.FixTarget) and the plans kept for them."""

    def __init__(self) -> None:
        super().__init__()
        self.db.execute("CREATE TABLE targets(n INTEGER PRIMARY KEY, path BLOB NOT NULL, absolute BLOB NOT NULL, "
                        "root BLOB NOT NULL, explicit INTEGER NOT NULL, key INTEGER NOT NULL, "
                        "own INTEGER NOT NULL, ord INTEGER)")
        # A plan of `fix --check`'s phase 1 (fix_command._planning_first), by absolute path: NULL for one that
        # changes nothing.
        self.db.execute("CREATE TABLE planned(absolute BLOB PRIMARY KEY, result BLOB) WITHOUT ROWID")
        self.seeds: Dict[str, Any] = {}  # absolute path -> engine.ModuleSeeds, the files the model gave any
        self.sharded = False  # the rest of a project was added (`own` then tells the run's files)
        self._roots: Dict[bytes, str] = {}

    def add(self, targets: Iterable[Any]) -> "TargetTable":
        """The run's own files (fix_command.FixTarget), as discovery gives them."""
        self._insert(targets, own=True)
        self.db.execute("CREATE INDEX targets_absolute ON targets(absolute)")
        # The run's order, read from an index: a statement that sorts the table holds about 1 MiB of SQLite's
        # memory while it is read, and two are read side by side (fix_command._planned_or_run).
        self.db.execute("CREATE INDEX targets_order ON targets(ord, n)")
        return self

    def _insert(self, targets: Iterable[Any], own: bool, unless_held: bool = False) -> int:
        from .project import absolute_path

        sql = "INSERT INTO targets(path, absolute, root, explicit, key, own) VALUES (?, ?, ?, ?, ?, ?)"
        if unless_held:
            sql = ("INSERT INTO targets(path, absolute, root, explicit, key, own) SELECT ?, ?, ?, ?, ?, ? WHERE NOT "
                   "EXISTS (SELECT 1 FROM targets WHERE absolute = ?)")
        rows = ((blob(t.path), blob(absolute_path(t.path)), blob(t.root), int(t.explicit), self.number(t.key),
                 int(own)) for t in targets)
        if unless_held:
            rows = (row + (row[1],) for row in rows)
        return ondisk.insert_all(self.db, sql, rows)

    def add_project(self, targets: Iterable[Any], paths: Sequence[str]) -> None:
        """The rest of the project (shards.py): `targets` the run does not hold already, read for the model and
        never fixed alone; every target then in the order of the project's `paths`, those it does not list
        after them as they came."""
        self.sharded = True
        self._insert(targets, own=False, unless_held=True)
        self.db.execute("CREATE TEMP TABLE listed(absolute BLOB PRIMARY KEY, pos INTEGER NOT NULL) WITHOUT ROWID")
        position = 0
        for path in paths:
            if self.db.execute("INSERT OR IGNORE INTO listed VALUES (?, ?)",
                               (blob(os.path.abspath(path)), position)).rowcount:
                position += 1
        self.db.execute("UPDATE targets SET ord = COALESCE((SELECT pos FROM listed WHERE listed.absolute = "
                        "targets.absolute), ?)", (position,))
        self.db.execute("DROP TABLE listed")

    # -- reading it ------------------------------------------------------------------------------------
    def _target(self, row: Sequence[Any]) -> Any:
        from .fix_command import FixTarget

        root = self._roots.get(row[1])
        if root is None:
            root = self._roots[row[1]] = text(row[1])  # one string per root: a few for a whole run
        seeds = self.seeds.get(text(row[4])) if self.seeds else None
        return FixTarget(text(row[0]), root, bool(row[2]), self.keys[row[3]], seeds)

    def all(self) -> "Targets":
        """Every target, in order."""
        return Targets(self)

    def left(self, done: Set[str], own_only: bool) -> "Targets":
        """The targets not in `done` (absolute paths), and with `own_only` the run's own files only."""
        return Targets(self, frozenset(done), own_only)

    def own(self) -> Optional["Own"]:
        """The absolute paths the run fixes, as a set to ask of, in one shard of a run; None otherwise."""
        return Own(self) if self.sharded else None

    def get(self, absolute: str) -> Optional[Any]:
        """The target at this absolute path, or None."""
        row = self.db.execute(_ROW + " WHERE absolute = ? ORDER BY n LIMIT 1", (blob(absolute),)).fetchone()
        return self._target(row) if row else None

    def get_many(self, paths: Sequence[str]) -> Dict[str, Any]:
        """Absolute path -> target, for those of `paths` (absolute) that are targets."""
        found: Dict[str, Any] = {}
        for row in ondisk.rows_in(self.db, _ROW + " WHERE absolute IN ({marks}) ORDER BY n", paths):
            found.setdefault(text(row[4]), self._target(row))
        return found

    def keys_by_path(self) -> "KeysByPath":
        """Absolute path -> settings key, as project_run.project_seeds reads it."""
        return KeysByPath(self)

    def paths(self) -> Iterator[str]:
        """The targets' paths as given, in order."""
        return (text(row[0]) for row in ondisk.rows(self.db, f"SELECT path FROM targets {_ORDER}"))

    def path_list(self) -> "Paths":
        """The targets' paths as given, to go through as often as asked."""
        return Paths(self)

    def absolute_paths(self, sort: bool = False) -> Iterator[str]:
        """The targets' absolute paths, each once, in order (or sorted)."""
        order = "ORDER BY absolute" if sort else "ORDER BY MIN(ord), MIN(n)"
        return (text(row[0]) for row in ondisk.rows(self.db, f"SELECT absolute FROM targets GROUP BY absolute "
                                                             f"{order}"))

    def __len__(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM targets").fetchone()[0])

    def holds(self, absolute: str) -> bool:
        return self.db.execute("SELECT 1 FROM targets WHERE absolute = ?", (blob(absolute),)).fetchone() is not None

    # -- plans -----------------------------------------------------------------------------------------
    def plan(self, plans: Iterable[Tuple[str, Any]]) -> None:
        """Keep plans: (absolute path, the plan; None when it changes nothing)."""
        ondisk.insert_all(self.db, "INSERT OR REPLACE INTO planned VALUES (?, ?)", (
            (blob(absolute), None if result is None else pickle.dumps(result, pickle.HIGHEST_PROTOCOL))
            for absolute, result in plans))

    def planned(self, absolute: str) -> Any:
        """The plan kept (None: it changes nothing), or `NOT_PLANNED`."""
        return self.planned_many([absolute])[absolute]

    def planned_many(self, paths: Sequence[str]) -> Dict[str, Any]:
        """Absolute path -> the plan kept (None: it changes nothing) or `NOT_PLANNED`, for each of `paths`."""
        found: Dict[str, Any] = {path: NOT_PLANNED for path in paths}
        for absolute, result in ondisk.rows_in(
                self.db, "SELECT absolute, result FROM planned WHERE absolute IN ({marks})", paths):
            found[text(absolute)] = None if result is None else pickle.loads(result)
        return found


NOT_PLANNED = _MISSING


class Targets:
    """A table's targets, gone through in order as often as asked: every one, or those left (TargetTable.left)."""

    def __init__(self, table: TargetTable, done: FrozenSet[str] = frozenset(), own_only: bool = False) -> None:
        self.table = table
        self.done = done
        self.own_only = own_only

    def __iter__(self) -> Iterator[Any]:
        return (target for target, _ in self.with_absolute())

    def with_absolute(self) -> Iterator[Tuple[Any, str]]:
        """Each target with its absolute path (held beside it: worked out again, it cost a `getcwd` each)."""
        where = "WHERE own = 1 " if self.own_only else ""
        for row in ondisk.rows(self.table.db, f"{_ROW} {where}{_ORDER}"):
            absolute = text(row[4])
            if self.done and absolute in self.done:
                continue
            yield self.table._target(row), absolute

    def __len__(self) -> int:
        if not self.done and not self.own_only:
            return len(self.table)
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return next(iter(self), None) is not None


class Paths:
    """A table's paths as given, in order, each time gone through from the start (TargetTable.path_list)."""

    def __init__(self, table: TargetTable) -> None:
        self.table = table

    def __iter__(self) -> Iterator[str]:
        return self.table.paths()

    def __len__(self) -> int:
        return len(self.table)


class Own:
    """The absolute paths of the run's own files, in one shard of a run (fix_command's `own`)."""

    def __init__(self, table: TargetTable) -> None:
        self.table = table

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.table.db.execute(
            "SELECT 1 FROM targets WHERE absolute = ? AND own = 1", (blob(path),)).fetchone() is not None


class KeysByPath:
    """Absolute path -> settings key of the targets (a Mapping as project_run.project_seeds reads it): gone
    through in the run's order, each path once; looked up a batch of the next paths at a time."""

    def __init__(self, table: TargetTable) -> None:
        self.table = table

    def __len__(self) -> int:
        return int(self.table.db.execute("SELECT COUNT(DISTINCT absolute) FROM targets").fetchone()[0])

    def __iter__(self) -> Iterator[str]:
        return self.table.absolute_paths()

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and self.table.holds(path)

    def get(self, path: str, default: Any = None) -> Any:
        target = self.table.get(path)
        return default if target is None else target.key

    def keyed(self, paths: Iterable[str]) -> Iterator[Tuple[str, Any]]:
        """(path, key) of each of `paths`, looked up a batch at a time (parallel_gate's items)."""
        keys = self.table.keys
        for part in ondisk.batches(paths, ondisk.IN_AT_ONCE):
            found = {text(absolute): keys[key] for absolute, key in ondisk.rows_in(
                self.table.db, "SELECT absolute, key FROM targets WHERE absolute IN ({marks}) ORDER BY n DESC", part)}
            for path in part:
                yield path, found.get(path)

    def __getitem__(self, path: str) -> Any:
        found = self.get(path, _MISSING)
        if found is _MISSING:
            raise KeyError(path)
        return found
