"""Running the project model for a command: the seeds each Python file gets, shared by `check` and `fix`.

`check` and `fix` must see the same functions made hot by other modules and the same factory calls, or `fix`
would rewrite what `check` does not report (or miss what it does). `fix` calls `project_seeds` here (in this
process, through the disk cache); `check` runs the same model in its workers (project_check.py).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from .engine import ModuleSeeds


def project_seeds(files: Sequence[Tuple[str, Any]], overrides: Any, note: Callable[[str], None],
                  cache: Any = None, jobs: int = 1) -> Dict[str, ModuleSeeds]:
    """Per absolute path, what the project model found about that module because of the others.

    `files` are the Python files of the run, each with its settings key (settings.Key); `overrides` are the
    command line's (settings.resolved). A file missing from the answer gets nothing from other modules.
    A failure of the model itself (an engine bug, or running out of recursion or memory) costs the findings
    across modules, said in one line through `note`; each file is still analysed on its own.
    """
    from .project import project_seeds as solve_project
    from .settings import resolved

    keys = {os.path.abspath(path): key for path, key in files}
    if len(keys) < 2:
        return {}  # one module: nothing to find across modules

    options_by_key: Dict[Any, Any] = {}  # many files share a settings key: resolve each key once

    def options_of(path: str) -> Any:
        key = keys[path]
        if key not in options_by_key:
            options_by_key[key] = resolved(overrides, key).options
        return options_by_key[key]

    first = search = None
    if jobs > 1 and len(keys) >= POOL_AT_FILES:
        from .parallel_gate import ResolvedOptions, parallel_first, parallel_search

        folder = cache.folder if cache is not None else None
        first = parallel_first(keys, ResolvedOptions(overrides), folder, jobs)
        search = parallel_search(keys, ResolvedOptions(overrides), folder, jobs, POOL_AT_FILES)
    try:
        return dict(solve_project(list(keys), options_of, cache=cache, first=first, search=search) or {})
    except (RecursionError, MemoryError) as error:
        note(f"the project model ran out of resources ({type(error).__name__}): findings across modules are left out")
    except Exception as error:  # noqa: BLE001 - see the docstring
        note(f"internal error in the project model ({type(error).__name__}: {error}): findings across modules "
             "are left out")
    return {}


# From this many Python files, the gate's phases run in worker processes (parallel_gate.py).
POOL_AT_FILES = 200


_DEFINED = re.compile(rb"^[ \t]*(?:async[ \t]+def|def|class)[ \t]+([^\W\d]\w*)", re.MULTILINE)
_WORD = re.compile(rb"[^\W\d]\w*")


def names_used_elsewhere(paths: Sequence[str], max_size: int = 0, fixable: Optional[Set[str]] = None,
                         jobs: int = 1) -> Dict[str, FrozenSet[str]]:
    """Per absolute path, the names it defines (`def`, `class`, at any depth) that another of `paths` names.

    What `fix` needs before it changes a signature: a word in another module's text may be a call, an import
    or a reference to the function, which that module's own plan would not edit. Bytes only, no parse: a name
    in a comment or a string counts too, which costs a fix, never a caller. A file that cannot be read is
    left out (its own fix reports it); `max_size` (0: none) skips the text of larger files the same way.

    Only a file that may be fixed needs its names: with `fixable` (the paths the project model seeds), one of
    those or one naming an HTTP library; None: every file. Every file's words are then searched for those
    names, in `jobs` worker processes from POOL_AT_FILES files on.
    """
    from .runner import Runner

    unique = sorted({os.path.abspath(p) for p in paths})
    workers = jobs if len(unique) >= POOL_AT_FILES else 1
    defined: Dict[str, Set[bytes]] = {}
    readable: List[str] = []
    items = [(path, fixable is None or path in fixable) for path in unique]
    for (path, _), names in zip(items, Runner(_defined_job, max_size, lambda item: None, workers).run(items)):
        if names is not None:
            readable.append(path)
            if names:
                defined[path] = names
    wanted = frozenset(name for names in defined.values() for name in names)
    if not wanted:
        return {}
    counts: "Counter[bytes]" = Counter()  # per name, how many files name it
    for named in Runner(_named_job, (wanted, max_size), lambda path: (), workers).run(readable):
        counts.update(named)
    found: Dict[str, FrozenSet[str]] = {}
    for path, names in defined.items():
        # Its own text names each of its defs once at least: another file's naming makes the count pass 1.
        elsewhere = {name.decode("utf-8", "replace") for name in names if counts[name] > 1}
        if elsewhere:
            found[path] = frozenset(elsewhere)
    return found


def _read(path: str, max_size: int) -> Optional[bytes]:
    try:
        with open(path, "rb") as stream:
            data = stream.read(max_size + 1 if max_size else -1)
    except OSError:
        return None
    return None if max_size and len(data) > max_size else data


def _defined_job(max_size: int, item: Tuple[str, bool]) -> Optional[Set[bytes]]:
    """In a worker: the names a file defines when it may be fixed (`item`: its path, and whether the model
    seeds it), else an empty set; None when it cannot be read."""
    from .checking import mentions_a_library

    path, fixable = item
    data = _read(path, max_size)
    if data is None:
        return None
    return defined_names(data) if fixable or mentions_a_library(data) else set()


def _named_job(shared: Tuple[FrozenSet[bytes], int], path: str) -> Tuple[bytes, ...]:
    """In a worker: which of the wanted names the file's text holds as words."""
    wanted, max_size = shared
    data = _read(path, max_size)
    return tuple(words_of(data) & wanted) if data is not None else ()


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
_DEF_AT = re.compile(rb"(?:async[ \t]+def|def|class)[ \t]+([^\W\d]\w*)")


def defined_names(data: bytes) -> Set[bytes]:
    """`set(_DEFINED.findall(data))`, trying the pattern only where `def` or `class` occurs (re tries a `^`
    pattern at every byte of the file)."""
    names: Set[bytes] = set()
    for keyword in (b"def", b"class"):
        at = data.find(keyword)
        while at != -1:
            line = data.rfind(b"\n", 0, at) + 1
            head = data[line:at]
            stripped = head.lstrip(b" \t")
            start = line + (len(head) - len(stripped))
            if keyword == b"def" and stripped:
                # `async def`: the pattern starts at `async`, after the indentation.
                if stripped.startswith(b"async") and not stripped[5:].strip(b" \t") and len(stripped) > 5:
                    found = _DEF_AT.match(data, start)
                    if found is not None:
                        names.add(found.group(1))
            elif not stripped:
                found = _DEF_AT.match(data, start)
                if found is not None and found.group(0).startswith(keyword):
                    names.add(found.group(1))
            at = data.find(keyword, at + len(keyword))
    return names

