"""Running the project model for a command: the seeds each Python file gets, shared by `check` and `fix`.

`check` and `fix` must see the same functions made hot by other modules and the same factory calls, or `fix`
would rewrite what `check` does not report (or miss what it does). `fix` calls `project_seeds` here (in this
process, through the disk cache); `check` runs the same model in its workers (project_check.py).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from typing import Any, Callable, Dict, FrozenSet, Sequence, Set, Tuple

from .engine import ModuleSeeds


def project_seeds(files: Sequence[Tuple[str, Any]], overrides: Any, note: Callable[[str], None],
                  cache: Any = None) -> Dict[str, ModuleSeeds]:
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

    try:
        return dict(solve_project(list(keys), options_of, cache=cache) or {})
    except (RecursionError, MemoryError) as error:
        note(f"the project model ran out of resources ({type(error).__name__}): findings across modules are left out")
    except Exception as error:  # noqa: BLE001 - see the docstring
        note(f"internal error in the project model ({type(error).__name__}: {error}): findings across modules "
             "are left out")
    return {}


_DEFINED = re.compile(rb"^[ \t]*(?:async[ \t]+def|def|class)[ \t]+([^\W\d]\w*)", re.MULTILINE)
_WORD = re.compile(rb"[^\W\d]\w*")


def names_used_elsewhere(paths: Sequence[str], max_size: int = 0) -> Dict[str, FrozenSet[str]]:
    """Per absolute path, the names it defines (`def`, `class`, at any depth) that another of `paths` names.

    What `fix` needs before it changes a signature: a word in another module's text may be a call, an import
    or a reference to the function, which that module's own plan would not edit. Bytes only, no parse: a name
    in a comment or a string counts too, which costs a fix, never a caller. A file that cannot be read is
    left out (its own fix reports it); `max_size` (0: none) skips the text of larger files the same way.
    """
    defined: Dict[str, Set[bytes]] = {}
    counts: "Counter[bytes]" = Counter()  # per word, how many files name it
    for path in {os.path.abspath(p) for p in paths}:
        try:
            with open(path, "rb") as stream:
                data = stream.read(max_size + 1 if max_size else -1)
        except OSError:
            continue
        if max_size and len(data) > max_size:
            continue
        words = set(_WORD.findall(data))
        counts.update(words)
        defined[path] = set(_DEFINED.findall(data))
    found: Dict[str, FrozenSet[str]] = {}
    for path, names in defined.items():
        # Its own text names each of its defs once at least: another file's naming makes the count pass 1.
        elsewhere = {name.decode("utf-8", "replace") for name in names if counts[name] > 1}
        if elsewhere:
            found[path] = frozenset(elsewhere)
    return found
