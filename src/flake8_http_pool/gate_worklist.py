"""Which modules the project gate grows next (project._solve_gated), without going over every module each pass.

The gate's fixpoint grew every summarized module, in their order, pass after pass until a pass changed nothing,
and again after every round of its search: with a chain of wrappers across modules, one round per link, each
growing every module so far, quadratic. A module's `grow` does something only when something it reads changed:
the module is new, a name it references became a needle, a function it calls became relevant, a module one of its
references went through without a summary joined, a name it re-exports or a module it star-imports got searched
for. `Watch` keeps who reads what; `Worklist` grows only the modules marked so, in the passes and the order the
loop over every module grew them (the order of the summaries; a module marked while one before it grows is
grown in the same pass, one marked by itself or a later one in the next). The grows it leaves out are those
that did nothing, so what the others do, modules read on demand taking their places in the order of the
summaries among it, happens in the same order as before, and the solve gives the same findings.
"""

from __future__ import annotations

import heapq
from typing import Any, Callable, Iterable, List, Optional, Set


class Worklist:
    """The places (project.Summaries.place) of the modules to grow, and the passes that grow them."""

    def __init__(self, summaries: Any) -> None:
        self.summaries = summaries
        self._now: List[int] = []  # this pass's, a heap
        self._queued: Set[int] = set()
        self._later: Set[int] = set()  # the next pass's
        self._cursor: Optional[int] = None  # the place of the module growing now
        self._last = -1  # the last place this pass goes to (one set during it comes next pass)
        self._every = False  # this pass grows every module

    def mark(self, place: int) -> None:
        """Grow the module at `place` in this pass if it comes later in it, else in the next."""
        if self._cursor is not None and self._cursor < place <= self._last:
            if not self._every and place not in self._queued:
                heapq.heappush(self._now, place)
                self._queued.add(place)
        else:
            self._later.add(place)

    def mark_path(self, path: str) -> None:
        place = self.summaries.place(path)
        if place is not None:
            self.mark(place)

    def run(self, grow: Callable[[str], bool], every: bool = False) -> bool:
        """Passes until one grows nothing new (`grow` True when something was new); whether any did. `every`: the
        first pass grows every module (the gate's first, over phase 1's)."""
        grew = False
        while True:
            self._last = self.summaries.last()
            changed = False
            if every:
                self._every = True
                for place, path in self.summaries.numbered():
                    self._cursor = place
                    changed = grow(path) or changed
                self._every = every = False
            else:
                for place in self._later:
                    heapq.heappush(self._now, place)
                self._queued.update(self._later)
                self._later = set()
                while self._now:
                    place = heapq.heappop(self._now)
                    self._queued.discard(place)
                    self._cursor = place
                    changed = grow(self.summaries.at(place)) or changed
            self._cursor = None
            if not changed:
                return grew
            grew = True


class Watch:
    """Who reads what, by place (project.Summaries.place), in tables of the project's database (ondisk.py). Added
    to only: a module marked for a reason gone is grown for nothing, never left out, and each (reason, module)
    marks once, so the marks of a whole solve grow with the project, not with its rounds."""

    def __init__(self, db: Any) -> None:
        self._db = db
        for table, key in (("watch_words", "word TEXT"), ("watch_exports", "name TEXT"),
                           ("watch_stars", "module BLOB"), ("watch_callers", "target INTEGER"),
                           ("watch_through", "module BLOB")):
            db.execute(f"CREATE TABLE {table}({key} NOT NULL, place INTEGER NOT NULL, UNIQUE({key.split()[0]}, "
                       "place))")

    def _add(self, table: str, place: int, keys: Iterable[Any]) -> None:
        self._db.executemany(f"INSERT OR IGNORE INTO {table} VALUES (?, ?)", ((key, place) for key in keys))

    def _places(self, table: str, column: str, key: Any) -> List[int]:
        return [row[0] for row in self._db.execute(f"SELECT place FROM {table} WHERE {column} = ?", (key,))]

    def words(self, place: int, words: Iterable[str]) -> None:
        """The module references these words (a reference naming a needle is resolved: `worth`)."""
        self._add("watch_words", place, words)

    def exports(self, place: int, names: Iterable[str]) -> None:
        self._add("watch_exports", place, names)

    def stars(self, place: int, modules: Iterable[bytes]) -> None:
        self._add("watch_stars", place, modules)

    def calls(self, place: int, targets: Iterable[int]) -> None:
        """The module calls (or re-exports) these functions (project._Targets numbers)."""
        self._add("watch_callers", place, targets)

    def through(self, place: int, modules: Iterable[bytes]) -> None:
        """A reference of the module was resolved through these modules while they had no summary."""
        self._add("watch_through", place, modules)

    def referencing(self, word: str) -> List[int]:
        return self._places("watch_words", "word", word)

    def exporting(self, name: str) -> List[int]:
        return self._places("watch_exports", "name", name)

    def starring(self, module: bytes) -> List[int]:
        return self._places("watch_stars", "module", module)

    def callers(self, target: int) -> List[int]:
        return self._places("watch_callers", "target", target)

    def resolved_through(self, module: bytes) -> List[int]:
        return self._places("watch_through", "module", module)
