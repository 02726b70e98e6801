"""The seeds of a few files from the modules that can matter to them, not from a pass over the whole project.

A cold whole-project solve summarizes every module that names an HTTP library before it answers for one file:
on a project where every module does (an API client, a scraper, a bot), `flake8 one_file.py` with a cold cache
cost the whole project. A file's seeds come from two directions, and the gate of `project._solve_gated`
already follows one of them:

- down, to what the file calls: the modules it imports, and theirs, each followed through its imports (a
  wrapper of another module, a blocking helper, a writer, a factory, a base class holding a client). Phase 1
  here is those modules (the ones that pass its gate), not every module that names a library;
- up, to what calls it: phase 2 searches every other module's bytes for the functions that can matter, and
  their callers' in turn, as it does for a whole project; a module left out of phase 1 is one it may find.

What this leaves out: a module neither imported on the way down nor naming, on the way up, a function that can
matter. Nothing it holds reaches the files asked for (tests/test_focus.py compares, for every file of the
fixture projects and of the shared corpus, these seeds with the whole project's).

Imports are read from the bytes (`import a.b`, `from .c import d, e`, wherever they are): a name read that
is no import at all (in a string, a comment) only brings one more module in.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple

from .options import Options

# `import a.b as c, d` and `from ..a import (b, c as d)` (over several lines): the module names they may load.
_IMPORT = re.compile(
    rb"(?:^|[:;])[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\n#;]*)|import[ \t]+([^\n#;]+))",
    re.MULTILINE)
_NAME = re.compile(rb"[A-Za-z_][\w.]*|\*")
# The search rounds that read the rest of the project before its words are indexed (project._solve_gated): an
# index of every file's words cost a focused solve more than the few rounds its needles need.
PLAIN_ROUNDS = 8


def imported_names(data: bytes) -> Iterator[Tuple[str, List[str]]]:
    """The source's import statements as (module, names): `("a.b", [])` for `import a.b`, `(".c", ["d", "e"])`
    for `from .c import d, e` (a name imported from a package may be a submodule of it)."""
    for match in _IMPORT.finditer(data):
        base, names, plain = match.groups()
        if plain is not None:
            for item in plain.split(b","):
                words = _NAME.findall(item)
                if words and words[0] != b"*":
                    yield words[0].decode("ascii", "replace"), []
            continue
        found = []
        for item in names.strip(b"()").split(b","):
            words = _NAME.findall(item)
            if words:
                found.append(words[0].decode("ascii", "replace"))
        yield base.decode("ascii", "replace"), found


def reached(starts: Iterable[str], modules: Any, read: Callable[[str], Optional[bytes]]) -> Set[str]:
    """The files `starts` and every project file their imports name, followed through theirs.

    Importing `a.b.c` runs `a/__init__.py` and `a/b/__init__.py` first: they are reached, but what they import
    is followed only when a name is imported from them that is not a module of their own (`from a import f`,
    not `from a import submodule`), since the names a module uses come from the modules it names (a package that
    imports all its modules in its `__init__.py` otherwise brought the whole package in for any file below it)."""
    seen: Dict[str, bool] = {}  # path -> whether its imports are followed
    todo: List[str] = []

    def add(path: Optional[str], follow: bool) -> None:
        if path is None or seen.get(path) or not modules.known(path):
            return
        if path not in seen or follow:
            seen[path] = follow
            if follow:
                todo.append(path)

    for path in starts:
        add(path, True)
    while todo:
        path = todo.pop()
        data = read(path)
        if data is None:
            continue
        for name, names in imported_names(data):
            absolute = modules.absolute(name, path) if name.startswith(".") else name
            if not absolute:
                continue
            parts = absolute.split(".")
            for end in range(1, len(parts)):
                add(modules.module(".".join(parts[:end]), path), False)
            module = modules.module(absolute, path)
            if not names:  # `import a.b`
                add(module, True)
                continue
            add(module, False)
            for imported in names:
                submodule = modules.module(f"{absolute}.{imported}", path) if imported != "*" else None
                if submodule is not None:
                    add(submodule, True)
                else:  # a name the module defines or imports in turn (or all of them, `*`)
                    add(module, True)
    return set(seen)


Phase1 = Callable[[List[str]], Tuple[Dict[str, Any], List[str]]]


def focused_first(targets: Iterable[str], modules: Any, first: Phase1,
                  read: Callable[[str], Optional[bytes]]) -> Phase1:
    """Phase 1 (`first`, project.First) over the modules `targets` reach on the way down; every other module
    is left to phase 2's search, in the order given."""
    down = reached(targets, modules, read)

    def run(paths: Iterable[str]) -> Tuple[Dict[str, Any], List[str]]:
        given = list(paths)
        found, rest = first([path for path in given if path in down])
        passed = set(rest)
        return found, [path for path in given if path in passed or path not in down]  # in the order given

    return run


def focused_seeds(targets: Iterable[str], paths: List[str], options_of: Callable[[str], Options],
                  cache: Any = None, findings: bool = False) -> Dict[str, Any]:
    """`project.project_seeds` for the files `targets` (absolute paths among `paths`): the same seeds for
    them, from the modules that can matter to them; the seeds of other files are not to be used.

    `findings`: the targets' cache entries keep their unseeded findings too (LocalModules); the other modules
    summarized on the way are not reported by this run, and their rules would have cost as much again as
    their summaries (a run that reports one of them later walks it then)."""
    from .project import ModuleMap, _solve_gated, absolute_path, project_root
    from .project_cache import LocalModules
    from .source_files import read_or_none

    absolute = [absolute_path(path) for path in paths]
    modules = ModuleMap(absolute, project_root(absolute))
    wanted = [absolute_path(path) for path in targets]
    local = LocalModules(options_of, cache, findings=frozenset(wanted) if findings else False)
    first = focused_first(wanted, modules, local.first,
                          lambda path: read_or_none(path, options_of(path).max_file_size))
    return _solve_gated(absolute, first, local.search, local.summary, local.words,  # type: ignore[arg-type]
                        plain_rounds=PLAIN_ROUNDS, modules=modules)
