"""What a run keeps per file, out of memory: a private SQLite database in a temporary file.

A run over a big tree held a path, a tuple and a few dictionary entries for every file it was given (about 780
bytes a file, most of `check`'s memory at 100,000 files, and every worker forked from that process started
with it). The tables here hold them instead: SQLite keeps a small cache of pages in memory (`CACHE_KIB`) and
the rest in a temporary file that it deletes itself when the connection closes (or the process ends), so the
memory a run needs does not grow with the number of files.

Only the process that opened a database uses it: worker processes forked while it is open never touch it.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Dict, Iterable, Iterator, List, Sequence, Tuple

# The page cache of each database, in KiB: a run opens two (its file table and the project model's).
CACHE_KIB = 512
# Rows written in one statement, and read in one fetch.
BATCH = 1024


def blob(path: str) -> bytes:
    """A path as the tables hold it: SQLite's text is UTF-8, and a path may hold any name the file system
    does (`os.fsdecode` turns undecodable bytes into lone surrogates). Bytes sort as the code points do."""
    return path.encode("utf-8", "surrogatepass")


def text(data: bytes) -> str:
    """What `blob` was given."""
    return data.decode("utf-8", "surrogatepass")


def database() -> sqlite3.Connection:
    """A new private database on disk, deleted when it is closed. No journal (nothing here outlives the run)
    and no sync (a crash loses the run, never a user's file)."""
    # An empty name is SQLite's private temporary database: a file only it knows, removed when closed.
    connection = sqlite3.connect("", isolation_level=None, check_same_thread=False)
    # First: changing temp_store drops the TEMP schema, and its cache size with it (it was then SQLite's 2 MiB
    # default: a run's TEMP tables grew the process by that much whatever was asked).
    connection.execute("PRAGMA temp_store=FILE")  # sorts and temporary indexes spill to disk too
    connection.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
    connection.execute(f"PRAGMA temp.cache_size=-{CACHE_KIB}")  # TEMP tables have their own cache
    connection.execute("PRAGMA journal_mode=OFF")
    connection.execute("PRAGMA synchronous=OFF")
    return connection


def insert_all(connection: sqlite3.Connection, sql: str, rows: Iterable[Sequence[Any]]) -> int:
    """Run `sql` over `rows` in batches, in one transaction per batch; the number of rows."""
    count = 0
    batch: List[Sequence[Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH:
            _write(connection, sql, batch)
            count += len(batch)
            batch = []
    if batch:
        _write(connection, sql, batch)
        count += len(batch)
    return count


def _write(connection: sqlite3.Connection, sql: str, batch: List[Sequence[Any]]) -> None:
    connection.execute("BEGIN")
    try:
        connection.executemany(sql, batch)
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def rows(connection: sqlite3.Connection, sql: str, parameters: Sequence[Any] = ()) -> Iterator[Tuple[Any, ...]]:
    """The rows of a query, fetched a batch at a time. The statement stays open between batches: write only to
    other tables while reading (SQLite leaves the rows a statement reads undefined when their table changes)."""
    cursor = connection.execute(sql, parameters)
    try:
        while True:
            batch = cursor.fetchmany(BATCH)
            if not batch:
                return
            yield from batch
    finally:
        try:
            cursor.close()
        except sqlite3.ProgrammingError:
            pass  # a reader left half-way by a run that stopped (out of memory) is closed after its database


# SQLite's default limit on a statement's parameters is 999 (before 3.32).
IN_AT_ONCE = 500


def rows_in(connection: sqlite3.Connection, sql: str, paths: Sequence[str]) -> Iterator[Tuple[Any, ...]]:
    """The rows of `sql` for `paths`, whose `{marks}` is where their list of `?` goes (`... absolute IN
    ({marks})`), the paths given as `blob`s at most IN_AT_ONCE to a statement."""
    for start in range(0, len(paths), IN_AT_ONCE):
        part = [blob(path) for path in paths[start:start + IN_AT_ONCE]]
        yield from connection.execute(sql.format(marks=",".join("?" * len(part))), part)


def batches(items: Iterable[Any], size: int = BATCH) -> Iterator[List[Any]]:
    """`items` in lists of `size` (the last one shorter)."""
    batch: List[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class RunFiles:
    """What a table of a run's files shares (file_table.FileTable, target_table.TargetTable): its database,
    the files discovery has met (`remember`), and the settings keys by number (many files share one)."""

    def __init__(self) -> None:
        self.db = database()
        self.db.execute("CREATE TABLE seen(inode TEXT PRIMARY KEY) WITHOUT ROWID")
        self.keys: List[Any] = []
        self._numbers: Dict[Any, int] = {}

    def remember(self, inode: int) -> bool:
        """discovery.Discovery's files-seen-once rule: True the first time `inode` is met."""
        return self.db.execute("INSERT OR IGNORE INTO seen VALUES (?)", (str(inode),)).rowcount == 1

    def number(self, key: Any) -> int:
        """The number of a settings key (`keys[number]` is the key)."""
        number = self._numbers.get(key)
        if number is None:
            number = self._numbers[key] = len(self.keys)
            self.keys.append(key)
        return number


def pages(connection: sqlite3.Connection, sql: str, parameters: Sequence[Any] = ()) -> Iterator[Tuple[Any, ...]]:
    """The rows of `sql`, a query ordered by its first column (an integer key, unique) with `?` for the last key
    read (`... WHERE n > ? ... ORDER BY n LIMIT ?`, the first parameters being `parameters`), a page at a time:
    no statement stays open between pages, so the caller may write to the same table as it goes."""
    last = -1
    while True:
        page = connection.execute(sql, (*parameters, last, BATCH)).fetchall()
        if not page:
            return
        yield from page
        last = page[-1][0]
