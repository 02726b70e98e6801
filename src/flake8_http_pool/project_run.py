"""Running the project model for a command: the seeds each Python file gets, shared by `check` and `fix`.

`check` and `fix` must see the same functions made hot by other modules and the same factory calls, or `fix`
would rewrite what `check` does not report (or miss what it does). `fix` calls `project_seeds` here (in this
process, through the disk cache); `check` runs the same model in its workers (project_check.py).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from itertools import chain
from typing import Any, Callable, Dict, FrozenSet, Iterator, NamedTuple, Sequence, Set, Tuple

from .engine import ModuleSeeds


def project_seeds(files: Sequence[Tuple[str, Any]], overrides: Any, note: Callable[[str], None],
                  cache: Any = None, jobs: int = 1, first: Any = None, keys: Any = None) -> Dict[str, ModuleSeeds]:
    """Per absolute path, what the project model found about that module because of the others.

    `files` are the Python files of the run, each with its settings key (settings.Key), or `keys` gives them:
    absolute path -> key, a mapping to go through and ask (`fix`'s target_table.KeysByPath, whose paths are
    not copied into memory); `overrides` are the command line's (settings.resolved). A file missing from the
    answer gets nothing from other modules.
    `first`: phase 1 of the gate as the caller runs it (project.First; `fix --check` plans each file in the
    same read and parse), else in `jobs` workers.
    A failure of the model itself (an engine bug, or running out of recursion or memory) costs the findings
    across modules, said in one line through `note`; each file is still analysed on its own.
    """
    from .project import absolute_path, project_seeds as solve_project
    from .settings import resolved

    if keys is None:
        keys = {absolute_path(path): key for path, key in files}
    if len(keys) < 2:
        return {}  # one module: nothing to find across modules

    options_by_key: Dict[Any, Any] = {}  # many files share a settings key: resolve each key once

    def options_of(path: str) -> Any:
        key = keys[path]
        if key not in options_by_key:
            options_by_key[key] = resolved(overrides, key).options
        return options_by_key[key]

    search = words = None
    if jobs > 1 and len(keys) >= POOL_AT_FILES:
        from .parallel_gate import ResolvedOptions, parallel_first, parallel_search, parallel_words

        folder = cache.folder if cache is not None else None
        first = first or parallel_first(keys, ResolvedOptions(overrides), folder, jobs)
        search = parallel_search(keys, ResolvedOptions(overrides), folder, jobs, POOL_AT_FILES)
        words = parallel_words(keys, ResolvedOptions(overrides), folder, jobs)
    try:
        return dict(solve_project(keys, options_of, cache=cache, first=first, search=search, words=words) or {})
    except Exception as error:  # noqa: BLE001 - see the docstring
        model_failed(error, note)
    return {}


def model_failed(error: Exception, note: Callable[[str], None]) -> None:
    """Say in one line that the project model failed (out of resources, or an engine bug): the run goes on
    without the findings across modules."""
    if isinstance(error, (RecursionError, MemoryError)):
        note(f"the project model ran out of resources ({type(error).__name__}): findings across modules are left out")
    else:
        note(f"internal error in the project model ({type(error).__name__}: {error}): findings across modules "
             "are left out")


# From this many Python files, the gate's phases run in worker processes (parallel_gate.py).
POOL_AT_FILES = 200


_WORD = re.compile(rb"[^\W\d]\w*")


class NamedWords(NamedTuple):
    """What `names_named` found: the names two or more files hold, and those a file outside the run holds."""

    twice: FrozenSet[str]
    outside: FrozenSet[str]


class RunPaths:
    """The files of a run, as names_named and the_rest_of ask of them: each absolute path once, sorted, and
    whether a path is one of them; from a list of paths, or from the run's target_table.TargetTable (whose
    paths are not copied into memory)."""

    @classmethod
    def of(cls, paths: Any) -> "RunPaths":
        """`paths` as a RunPaths (they may be one already)."""
        return paths if isinstance(paths, RunPaths) else cls(paths)

    def __init__(self, paths: Any) -> None:
        from .target_table import TargetTable

        self.table = paths if isinstance(paths, TargetTable) else None
        self._unique = None if self.table is not None else sorted({os.path.abspath(path) for path in paths})
        self._set = None if self._unique is None else set(self._unique)

    def sorted(self) -> Iterator[str]:
        return self.table.absolute_paths(sort=True) if self.table is not None else iter(self._unique or ())

    def __len__(self) -> int:
        return len(self.table.keys_by_path()) if self.table is not None else len(self._unique or ())

    def __contains__(self, path: object) -> bool:
        if self.table is not None:
            return isinstance(path, str) and self.table.holds(path)
        return path in (self._set or ())


def names_named(paths: "Sequence[str] | RunPaths", names: FrozenSet[str], outside: Sequence[str] = (),
                max_size: int = 0, jobs: int = 1) -> NamedWords:
    """Of `names` (the defs and classes a planner asked about, fix_facts.NamesElsewhere), those that more than
    one file of `paths` and `outside` holds as a word (the file defining a name holds it, so a second one names
    it elsewhere), and those that a file of `outside` holds: `paths` are the run's files, `outside` the rest of
    their projects, which the run does not edit.

    What `fix` needs before it changes a signature: a word in another module's text may be a call, an import
    or a reference to the function, which that module's own plan would not edit, and a module outside the run
    is not edited at all. Bytes only, no parse: a name in a comment or a string counts too, which costs a fix,
    never a caller. A file that cannot be read is passed over (its own fix reports it); `max_size` (0: none)
    passes larger files over the same way. A name that is not ASCII is taken as named both ways (words are
    found as ASCII runs, and a caller must not be missed). Searched in `jobs` worker processes from
    POOL_AT_FILES files on."""
    from .runner import Runner

    wanted = frozenset(name.encode("ascii") for name in names if name.isascii())
    unsure = frozenset(name for name in names if not name.isascii())
    twice, beyond = set(unsure), set(unsure)
    if wanted:
        mine = RunPaths.of(paths)
        others = sorted({absolute for absolute in map(os.path.abspath, outside) if absolute not in mine})
        counts: "Counter[bytes]" = Counter()  # per name, how many files hold it
        outside_counts: "Counter[bytes]" = Counter()  # per name, how many files outside the run hold it
        # Outside first: there one file is enough to settle a name.
        everything = chain(others, mine.sorted())
        workers = jobs if len(others) + len(mine) >= POOL_AT_FILES else 1
        found_in = Runner(_named_job, (wanted, max_size), lambda path: (), workers).run(everything)
        try:
            for index, found in enumerate(found_in):
                counts.update(found)
                if index < len(others):
                    outside_counts.update(found)
                if len(counts) == len(wanted) and min(counts.values()) > 1 and (
                        index >= len(others) - 1 or len(outside_counts) == len(wanted)):
                    break  # nothing left to read can change an answer (`get` is everywhere)
        finally:
            found_in.close()
        twice.update(name.decode("ascii") for name, count in counts.items() if count > 1)
        beyond.update(name.decode("ascii") for name in outside_counts)
    return NamedWords(frozenset(twice), frozenset(beyond))


# Past this many names asked, each file's words are found whole rather than each name looked for in turn.
_FEW_NAMES = 32


def _named_job(shared: Tuple[FrozenSet[bytes], int], path: str) -> Tuple[bytes, ...]:
    """In a worker: which of the wanted names the file's text holds as words."""
    from .source_files import bytes_as_parser_reads, read_or_none

    wanted, max_size = shared
    data = read_or_none(path, max_size)
    if data is None:
        return ()
    data = bytes_as_parser_reads(data)  # `ｆｅｔｃｈ(url)` calls `fetch` (NFKC, as the parser reads names)
    if len(wanted) <= _FEW_NAMES and not any(name in data for name in wanted):
        return ()
    return tuple(words_of(data) & wanted)


# Every byte but an ASCII letter, digit or underscore (what `\w` matches in bytes) made a space.
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_SPACES = bytes(byte if byte in _WORD_BYTES else 0x20 for byte in range(256))
_DIGITS = b"0123456789"


def words_of(data: bytes) -> Set[bytes]:
    """`set(_WORD.findall(data))`, found by C loops: the runs of word bytes, less any leading digits (`1e5`
    holds the word `e5`, as the pattern finds it)."""
    runs = set(data.translate(_SPACES).split())
    words = {run for run in runs if run[0] not in _DIGIT_CODES}
    words.update(run.lstrip(_DIGITS) for run in runs if run[0] in _DIGIT_CODES)
    words.discard(b"")
    return words


_DIGIT_CODES = frozenset(_DIGITS)
