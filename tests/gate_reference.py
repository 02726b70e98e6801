"""The project gate as it was before its worklist and word index (project._solve_gated at b3c116c, verbatim but for
its imports and the `matters` its solve is given since): every pass grows every summarized module, every round reads every remaining file. The tests hold
the new gate to the same summaries, in the same order, and the same seeds (tests/test_gate_linear.py)."""

# flake8: noqa
# mypy: ignore-errors

from __future__ import annotations

import os
from typing import Dict, Iterable, Optional, Set, Tuple

from flake8_http_pool.project import (_LATER, First, Load, ModuleMap, Needles, Project, Ref, Search, Seeds, Summaries,
                                      Summary, _Calls, _CallsTable, _Computed, _pairs, _Rest, _Targets,
                                      _worth_only, can_matter, project_root, solve)


def solve_gated(paths: Iterable[str], first: First, search: Search, load_summary: Load) -> Dict[str, Seeds]:
    """The two-phase gate over `paths`, then `solve`.

    Phase 1 (`first`) summarizes the files that import an HTTP library (or that the `unpooled-calls` patterns
    may match); phase 2 (`search`) only the files whose bytes name one of the functions that can matter
    (`can_matter`) or a class holding one, repeated while new ones join.
    """
    modules = ModuleMap(paths, project_root(paths))

    def load(path: str) -> Optional[Summary]:
        # Outside the project: never read. A module the gate left out holds no function that can matter; only
        # a package's `__init__.py` is read on demand, to follow what it re-exports (`from .http import *`).
        if os.path.basename(path) != "__init__.py" or not modules.known(path):
            return None
        return load_summary(path)

    gated, left = first(modules.paths)
    summaries = Summaries(gated.items(), db=modules.db)
    del gated
    rest = _Rest(left, modules.db)
    del left
    project = Project(modules, summaries, load)  # type: ignore[arg-type]

    def demand(path: str) -> Optional[Summary]:
        if not modules.known(path):
            return None  # outside the project: never read
        return load_summary(path)

    project.demand = demand

    # A file joins in phase 2 when its bytes name a function (or the class of a constructor) that can matter
    # AND the last part of that function's module name, which every import of it names (`from app.http import
    # f`, `from . import http`, `from .http import f`, `import helper`); a package re-exporting the function
    # is searched for under its own name (`from app import f`, see `grow`).
    needles: Dict[str, Set[str]] = {}  # name -> the modules where a function of that name can matter
    relevant: Set[Tuple[str, str]] = set()

    def pairs() -> Needles:
        """The needles of phase 2 (`_pairs`): each module's words worked out from its path as they are asked
        (held for every module needed, they were memory per module)."""
        folders: Dict[str, Set[str]] = {}  # folder -> the package folders it is below the project root

        def of(path: str) -> Tuple[Set[str], Set[str]]:
            """The words an import of the module names, and the package folders above it."""
            stem = os.path.splitext(os.path.basename(path))[0]
            folder = os.path.dirname(path)
            if stem == "__init__":
                stem, folder = os.path.basename(folder), os.path.dirname(folder)
            above = folders.get(folder)
            if above is None:
                relative = os.path.relpath(folder, modules.root)
                above = folders[folder] = set() if relative.startswith("..") or relative == "." else \
                    set(relative.split(os.sep))
            return {stem}, above

        return _pairs(needles, _Computed(lambda path: of(path)[0]), _Computed(lambda path: of(path)[1]))

    # path -> what the call sites of its functions name so far (_Calls); held as tuples of targets per function,
    # they were most of the gate's memory on a 100,000-file tree.
    resolved_calls = _CallsTable(modules.db)
    targets = _Targets()

    def worth(ref: Ref) -> bool:
        """Whether `ref` can name a function that can matter: another module's function is reached through
        its own name or its class's (see `grow`), so a reference naming none of the wanted names is left
        unresolved (resolving it could read a big package `__init__.py` for nothing)."""
        if ref[0] == "verbs":
            ref = ref[1]
        if ref[0] != "import":
            return ref[0] == "local"
        return any(word in needles for word in ref[1].split(".")) or any(word in needles for word in ref[2])

    def resolve_if_worth(ref: Ref, importer: str) -> Optional[Tuple[str, str]]:
        return project.resolve(ref, importer) if worth(ref) else _LATER

    def resolve_sites(sites: List[Any], path: str) -> Tuple[Iterable[Tuple[str, str]], bool]:
        named: Dict[Tuple[str, str], None] = {}
        pending = False
        for site in sites:
            target = resolve_if_worth(site[0], path)
            if target is None or target == _LATER:
                pending = True
            else:
                named[target] = None
        return named, pending

    def calls_of(summary: Summary, path: str, before: Optional[_Calls] = None) -> _Calls:
        """The module's calls resolved (those of its functions still pending, given what was resolved `before`)."""
        return _Calls.resolved(summary, path, targets, resolve_sites, before)

    def grow(path: str) -> bool:
        """Add the functions of `path` that can matter, and the names to search for; True when anything was new."""
        summary = summaries.get(path)
        if not summary:
            return False
        matter = can_matter(summary)
        calls = resolved_calls.get(path)
        if calls is None:
            calls = calls_of(summary, path)
        elif calls.searched_with != len(needles) and any(calls.pending):
            calls = calls_of(summary, path, calls)  # names were added since: resolve what they may name
        if calls.searched_with != len(needles):
            calls.searched_with = len(needles)
            resolved_calls[path] = calls
        keys = list(summary["functions"])
        # A function can matter if it is one `can_matter` names, or if it calls one that can matter, of this
        # module or of another (`relevant`).
        hit = [key in matter for key in keys]

        def reaches(target: int) -> bool:
            if target >= 0:
                return hit[target] or (path, keys[target]) in relevant
            other = targets.of(target)
            return other in relevant or (other[0] == path and other[1] in matter)

        changed = True
        while changed:
            changed = False
            for index in range(len(keys)):
                if not hit[index] and any(reaches(target) for target in calls.of(index)):
                    hit[index] = True
                    changed = True
        found = {(path, key) for key in matter}
        found.update((path, keys[index]) for index in range(len(keys)) if hit[index])
        new = found - relevant
        relevant.update(new)
        added = False
        for module, key in new:
            # Another module reaches a top-level def by its name, and a method of a top-level class through
            # the class (`Api().fetch()`, `api = Api()` then `api.fetch()`, `class Mine(Api)`, a view's
            # `ItemView.as_view()`): the resolver follows nothing else (`Project._in_module`), so a nested def
            # or a nested class's method is searched for nowhere.
            parts = key.split(".")
            if len(parts) == 1 and parts[0] in summary["defs"]:
                added = need(parts[0], module) or added
            elif len(parts) == 2 and parts[0] in summary["classes"]:
                added = need(parts[0], module) or added
        # A module that re-exports such a function or class (`from .http import get_json` in `__init__.py`) is
        # imported under its own name: `from app import get_json`.
        for name, target in summary["exports"].items():
            if path in needles.get(name, ()):
                continue
            absolute = modules.absolute(target, path)
            source = modules.module(absolute.rsplit(".", 1)[0], path) if absolute and "." in absolute else None
            if (source is not None and source in needles.get(name, ())) or \
                    resolve_if_worth(["import", target, []], path) in relevant:
                added = need(name, path) or added
        for star in summary["stars"]:  # `from .http import *`
            absolute = modules.absolute(star, path)
            source = modules.module(absolute, path) if absolute else None
            for name in [name for name, found in needles.items() if source in found]:
                added = need(name, path) or added
        return added or bool(new)

    def need(name: str, module: str) -> bool:
        """Search for `name` imported from `module`; True when that is new."""
        known = needles.setdefault(name, set())
        if module in known:
            return False
        known.add(module)
        return True

    # Until nothing changes: a module's function may call one that a later module's pass finds can matter.
    while any([grow(path) for path in summaries]):
        pass
    while needles and rest:
        joined = search(rest, pairs())
        for path in rest.taking(joined):  # in the order of `paths`, so the solve's order does not depend on
            summaries[path] = joined[path]  # the workers'
        project.forget()  # (as the gate's: what resolving found through the modules that joined is dropped)
        if not joined:
            break
        # References into the modules that joined resolve now (one that resolved already resolves as it did: it
        # went through summaries that have not changed).
        for path, calls in resolved_calls.items():
            if any(calls.pending):
                resolved_calls[path] = calls_of(summaries[path], path, calls)  # type: ignore[arg-type]
        grew = False
        while any([grow(path) for path in summaries]):
            grew = True
        if not grew:
            break  # nothing new to search the rest for
    resolved_calls.clear()
    summaries.narrow(lambda summary: _worth_only(summary, worth))
    return solve(project, worth, relevant.__contains__)
