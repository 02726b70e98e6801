"""The files of one `check` run, and what became of each, on disk (ondisk.py): discovery streams into it, the
workers' outcomes are written back to it, the project model reads its Python files from it, and the report is
read out of it in order. A run holds a few rows at a time, whatever the size of the tree.

Rows are numbered in the order the files came (`n`): the run's own files first, then the rest of the project
it only reads (`reported` 0: a shard's other files, or the project of an editor's buffer). `ord` is a Python
file's place in the project's order when the run was given one (shards.py); the model solves its files in
(`ord`, `n`) order.
"""

from __future__ import annotations

import os
import pickle
from typing import Any, Dict, Iterable, Iterator, Optional, Sequence, Tuple

from . import ondisk
from .discovery import Candidate
from .ondisk import blob, text

# Outcome places, as project_check names them: past phase 1 of the gate, not, or not a Python module.
FIRST, REST, OTHER = "first", "rest", "other"


class FileTable(ondisk.RunFiles):
    """One run's candidates (discovery.Candidate) and their outcomes."""

    def __init__(self) -> None:
        super().__init__()
        self.db.execute("CREATE TABLE files(n INTEGER PRIMARY KEY, path BLOB NOT NULL, absolute BLOB NOT NULL, "
                        "kind TEXT NOT NULL, key INTEGER NOT NULL, reported INTEGER NOT NULL, ord INTEGER)")
        # Phase 1's outcome of each file: its place in the gate, its content hash (with a cache), its summary
        # (packed; `held`: kept in the cache instead), and its report when it is not a clean Python file's.
        self.db.execute("CREATE TABLE outcomes(n INTEGER PRIMARY KEY, place TEXT NOT NULL, digest TEXT, "
                        "held INTEGER NOT NULL DEFAULT 0, summary BLOB, report BLOB)")
        self._indexed = False
        self.own = 0  # the run's own files
        self.context = 0  # the project's other files (those the run does not hold itself)

    # -- filling it ------------------------------------------------------------------------------------
    def add(self, candidates: Iterable[Candidate]) -> None:
        """The run's own files, as discovery gives them."""
        from .project import absolute_path

        assert not self.context, "the run's own files come first"
        self.own += ondisk.insert_all(
            self.db, "INSERT INTO files(path, absolute, kind, key, reported) VALUES (?, ?, ?, ?, 1)",
            ((blob(c.path), blob(absolute_path(c.path)), c.kind, self.number(c.key)) for c in candidates))

    def add_context(self, candidates: Iterable[Candidate]) -> None:
        """The rest of the project (Python files), read for the model and never reported, in the project's
        order: a file the run holds itself is not added again, but takes its place in that order.

        The candidates are written as they come, a batch at a time, and placed by three statements over all of
        them: a statement per file (its place asked of the table one at a time) was half of a shard's listing
        of a 100,000-file project."""
        self._index()
        self.db.execute("CREATE TEMP TABLE context(seq INTEGER PRIMARY KEY, path BLOB NOT NULL, "
                        "absolute BLOB NOT NULL, kind TEXT NOT NULL, key INTEGER NOT NULL)")
        ondisk.insert_all(self.db, "INSERT INTO context(path, absolute, kind, key) VALUES (?, ?, ?, ?)",
                          ((blob(c.path), blob(os.path.abspath(c.path)), c.kind, self.number(c.key))
                           for c in candidates))
        self.db.execute("CREATE INDEX temp.context_absolute ON context(absolute, seq)")
        self.db.execute("BEGIN")
        try:
            self.db.execute(
                "INSERT INTO files(path, absolute, kind, key, reported) SELECT path, absolute, kind, key, 0 FROM "
                "context WHERE NOT EXISTS (SELECT 1 FROM files WHERE files.absolute = context.absolute AND "
                "files.reported = 1 AND files.kind = 'python') ORDER BY seq")
            # The files the project lists, in its order (a file listed twice: where it came first); the others
            # after them, as they came.
            self.db.execute("UPDATE files SET ord = COALESCE((SELECT MIN(seq) FROM context WHERE context.absolute = "
                            "files.absolute), (SELECT COALESCE(MAX(seq), 0) + 1 FROM context)) "
                            "WHERE kind = 'python'")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")
        self.context = int(self.db.execute("SELECT COUNT(*) FROM files WHERE reported = 0").fetchone()[0])
        self.db.execute("DROP TABLE context")

    def _index(self) -> None:
        if not self._indexed:
            self.db.execute("CREATE INDEX files_absolute ON files(absolute)")
            self._indexed = True

    # -- reading it ------------------------------------------------------------------------------------
    def candidate(self, row: Sequence[Any], hot: Any = None) -> Candidate:
        """The candidate of a row (n, path, kind, key number, ...), its path as it was given."""
        return Candidate(row[1], row[2], self.keys[row[3]], hot)

    def everything(self) -> Iterator[Tuple[int, str, str, int, str, int]]:
        """Every row: (n, path, kind, key number, absolute path, reported), in order."""
        return ((n, text(path), kind, key, text(absolute), reported) for n, path, kind, key, absolute, reported
                in ondisk.rows(self.db, "SELECT n, path, kind, key, absolute, reported FROM files ORDER BY n"))

    def python_paths(self) -> Iterator[str]:
        """The paths of the Python files, the run's and the project's."""
        return (text(row[0]) for row in ondisk.rows(self.db, "SELECT path FROM files WHERE kind = 'python' "
                                                             "ORDER BY n"))

    def has_python(self) -> bool:
        return self.db.execute("SELECT 1 FROM files WHERE kind = 'python' LIMIT 1").fetchone() is not None

    def record(self, outcomes: Iterable[Tuple[int, str, Optional[str], bool, Optional[bytes], Any]]) -> None:
        """Phase 1's outcomes: (n, place, digest, held, packed summary, report or None)."""
        ondisk.insert_all(self.db, "INSERT OR REPLACE INTO outcomes VALUES (?, ?, ?, ?, ?, ?)",
                          ((n, place, digest, int(held), summary, _dumped(report))
                           for n, place, digest, held, summary, report in outcomes))

    def set_report(self, reports: Iterable[Tuple[int, Any]]) -> None:
        ondisk.insert_all(self.db, "UPDATE outcomes SET report = ? WHERE n = ?",
                          ((_dumped(report), n) for n, report in reports))

    def report(self, n: int) -> Any:
        row = self.db.execute("SELECT report FROM outcomes WHERE n = ?", (n,)).fetchone()
        return _loaded(row[0]) if row else None

    def modules(self) -> "Modules":
        self._index()
        return Modules(self)


class Modules:
    """The Python files of the project, in the project's order: every one phase 1 kept (place FIRST or REST),
    and those it was not given (a shard's other files, which a focused solve reads only as it needs them:
    project_check.py)."""

    # Every Python file has a place (FIRST or REST) once phase 1 saw it; one it did not see has no outcome.
    _KEPT = "files.kind = 'python' AND (outcomes.place IS NULL OR outcomes.place != 'other')"
    ORDER = "FROM files LEFT JOIN outcomes USING (n) WHERE " + _KEPT + " ORDER BY files.ord, files.n"

    def __init__(self, table: FileTable) -> None:
        self.table = table
        self.db = table.db
        self._key_of: Dict[str, int] = {}

    def __len__(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM files LEFT JOIN outcomes USING (n) WHERE "
                                   + self._KEPT).fetchone()[0])

    def __iter__(self) -> Iterator[str]:
        return (text(row[0]) for row in ondisk.rows(self.db, "SELECT files.absolute " + self.ORDER))

    def with_state(self) -> Iterator[Tuple[str, Optional[str], int]]:
        """(absolute path, content hash, key number) of each, in path order."""
        return ((text(path), digest, key) for path, digest, key in ondisk.rows(
            self.db, "SELECT files.absolute, outcomes.digest, files.key FROM files JOIN outcomes USING (n) WHERE "
                     "files.kind = 'python' AND outcomes.place != 'other' ORDER BY files.absolute"))

    def placed(self, place: str) -> Iterator[Tuple[str, int, Optional[bytes]]]:
        """(absolute path, held, packed summary) of each in `place`, in the project's order."""
        return ((text(path), held, summary) for path, held, summary in ondisk.rows(
            self.db, "SELECT files.absolute, outcomes.held, outcomes.summary FROM files JOIN outcomes USING (n) "
                     "WHERE files.kind = 'python' AND outcomes.place = ? ORDER BY files.ord, files.n", (place,)))

    def summary_of(self, path: str) -> Tuple[int, Optional[bytes]]:
        """(held, packed summary) of one of these that phase 1 summarized (`placed(FIRST)`'s)."""
        row = self.db.execute("SELECT outcomes.held, outcomes.summary FROM files JOIN outcomes USING (n) WHERE "
                              "files.absolute = ? AND outcomes.place = ?", (blob(path), FIRST)).fetchone()
        return row[0], row[1]

    def state(self, paths: Sequence[str]) -> Dict[str, Tuple[Any, Optional[str]]]:
        """Path -> (settings key, content hash) of each of `paths` (absolute) that is one of these (no hash for
        a file phase 1 was not given)."""
        found: Dict[str, Tuple[Any, Optional[str]]] = {}
        for absolute, key, digest in ondisk.rows_in(
                self.db, "SELECT files.absolute, files.key, outcomes.digest FROM files LEFT JOIN outcomes USING (n) "
                         "WHERE " + self._KEPT + " AND files.absolute IN ({marks})", paths):
            found.setdefault(text(absolute), (self.table.keys[key], digest))
        return found

    def one(self, path: str) -> Tuple[Any, Optional[str]]:
        """(settings key, content hash) of one of these."""
        return self.state([path])[path]


def _dumped(report: Any) -> Optional[bytes]:
    return None if report is None else pickle.dumps(report, pickle.HIGHEST_PROTOCOL)


def _loaded(data: Optional[bytes]) -> Any:
    return None if data is None else pickle.loads(data)
