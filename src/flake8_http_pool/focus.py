"""The seeds of a few files from the modules that can matter to them, not from a pass over the whole project.

A cold whole-project solve summarizes every module that names an HTTP library before it answers for one file:
on a project where every module does (an API client, a scraper, a bot), `flake8 one_file.py` with a cold cache
cost the whole project. A file's seeds come from two directions, and the gate of `project._solve_gated`
already follows one of them:

- down, to what the file calls: the modules its code names (the functions and classes it calls or derives
  from, the packages a name comes through), and theirs in turn (`called`): a wrapper of another module, a
  blocking helper, a writer, a factory, a base class holding a client. Phase 1 here is those modules (the ones
  that pass its gate), not every module that names a library, and phase 2 searches the others of them for
  every function that can matter, as it does for a whole project. A module imported but never called (a type
  for an annotation, a package imported for one submodule) is not followed;
- up, to what calls it: phase 2 searches every other module's bytes only for the functions that reach the
  files asked for (their own that can matter, and their callers' in turn). A caller of a wrapper that no
  function of theirs calls makes that wrapper hot, which changes the seeds of the wrapper's module alone: on a
  project where every module calls one client's wrapper, searching for its callers summarized most of the
  project for any file.

What this leaves out: a module neither named on the way down nor naming, on the way up, a function that can
matter. Nothing it holds reaches the files asked for (tests/test_focus.py compares, for every file of the
fixture projects and of the shared corpus, these seeds with the whole project's).

A module that phase 1 passes over has no summary to follow: its imports are read from the bytes (`import
a.b`, `from .c import d, e`, wherever they are), and a name read that is no import at all (in a string, a
comment) only brings one more module in.
"""

from __future__ import annotations

import bisect
import re
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple, Union

from .options import Options
from .project import import_matches

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
    for match in import_matches(_IMPORT, data):
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


Phase1 = Callable[[List[str]], Tuple[Dict[str, Any], Iterable[str]]]


def called(starts: Iterable[str], modules: Any, first: Phase1, read: Callable[[str], Optional[bytes]],
           load: Callable[[str], Any], imports_of: Optional[Callable[[str], Optional[List[Any]]]] = None
           ) -> Tuple[Dict[str, Any], Set[str], Set[str]]:
    """The modules `starts` reach through what their code names, each module past phase 1's gate (`first`)
    followed through the references its summary holds (its calls, base classes, hand-offs, re-exports, the
    star imports a name may come from), and any other followed through every import of its bytes (`_imports`:
    phase 2 may yet summarize it, for a function that can matter, and what that function calls must be
    here by then). A file of `starts` is followed through its summary (`load`) whether or not it passes the
    gate: it is the file answered for, read and walked anyway (`load` may give None: then through its imports).
    `imports_of(path)`: what `imports` gives for a module, when that is known already (or None).

    Returns phase 1's answers for the modules met (path -> summary, or `project.packed`'s bytes of one, for
    those past its gate), the modules followed (or a name followed through), and every module met (a
    package's `__init__.py` above a module met runs on import: it is phase 1's too, and the resolver may read
    it; but nothing of it is called unless a reference names it).

    A module imported whose functions and classes nothing met calls or names (a type only annotated, a package
    imported for one submodule, a client module of a project's other half) is not followed: following every
    import brought most of an HTTP-dense project into a one-file answer."""
    from .project import unpacked

    gated: Dict[str, Any] = {}
    met: Dict[str, bool] = {}  # path -> whether its references (or, without a summary, its imports) are followed
    asked: Set[Tuple[str, str]] = set()
    todo: List[Tuple[str, Optional[str]]] = []
    own: Dict[str, Any] = {}  # the summaries of the files of `starts` that phase 1 passed over
    routed: Set[str] = set()  # the modules passed over that a name was followed through (the resolver's way too)
    parsed: Dict[str, Optional[_Imports]] = {}
    held: Dict[str, Optional[bytes]] = {}  # the bytes `_route` read, until `_imports` reads them too

    def add(path: Optional[str], follow: bool, name: Optional[str] = None) -> None:
        if path is None or not modules.known(path):
            return
        if path not in met:
            found, _ = first([path])
            gated.update(found)
            met[path] = False
        if follow:
            todo.append((path, name))

    def named(dotted: Optional[str], attrs: Iterable[str], importer: str) -> None:
        """The module a dotted reference names (the longest prefix that is one), followed for the name after
        it; the packages above it met."""
        if not dotted:
            return
        parts = dotted.split(".") + list(attrs)
        for cut in range(len(parts), 0, -1):
            module = modules.module(".".join(parts[:cut]), importer)
            if module is not None:
                for end in range(1, cut):
                    add(modules.module(".".join(parts[:end]), importer), False)
                add(module, True, parts[cut] if cut < len(parts) else None)
                return

    for path in starts:
        add(path, True)
        if gated.get(path) is None:
            own[path] = load(path)
    while todo:
        path, name = todo.pop()
        summary = gated.get(path) or own.get(path)
        if isinstance(summary, bytes):
            summary = unpacked(summary)  # as phase 1 left it (project_check)
        if summary is None and not met[path] and name is not None:
            # A module phase 1 passed over, asked for one name that it imports (a package's `__init__.py`
            # re-exporting a class): that import is followed, not the module's every import.
            if path not in parsed:
                data = held[path] = read(path)
                parsed[path] = _Imports(data) if data is not None else None
            route = _route(parsed[path], name, lambda star: _module_of(modules, star, path) is not None)
            if route is not None:
                if route != _ABSENT and (path, name) not in asked:
                    asked.add((path, name))
                    routed.add(path)
                    named(modules.absolute(route[0], path), route[1:], path)
                continue
        if not met[path]:
            met[path] = True
            if summary is None:
                listed = imports_of(path) if imports_of is not None else None
                if listed is None:
                    listed = imports(path, modules, held.pop(path) if path in held else read(path))
                for module, follow in listed:
                    add(module, follow)
            else:
                for ref in _references(summary):
                    named(modules.absolute(ref[1], path), ref[2], path)
        if name is None or summary is None or (path, name) in asked:
            continue
        asked.add((path, name))
        if name in summary["exports"]:
            named(modules.absolute(summary["exports"][name], path), (), path)
        elif name not in summary["defs"] and name not in summary["classes"]:
            package = modules.name_of(path)
            if package is not None:
                add(modules.module(f"{package}.{name}"), True)
            word = re.compile(rb"\b%s\b" % re.escape(name.encode("utf-8", "surrogateescape")))
            for star in summary["stars"]:
                source = _module_of(modules, star, path)
                data = read(source) if source is not None and modules.known(source) else None
                if data is not None and word.search(data):
                    add(source, True, name)
    return gated, {path for path, followed in met.items() if followed} | routed, set(met)


_FROM = re.compile(rb"(?:^|[:;])[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\n#;]*)", re.MULTILINE)
_BOUND = re.compile(rb"([A-Za-z_]\w*)(?:[ \t]+as[ \t]+([A-Za-z_]\w*))?")


_ABSENT = ("", "")  # `_route`: the bytes do not name it at all


# The ways a line may bind a name (`%s`) besides a `from` import, told loosely: a use caught by one (a keyword
# argument, an attribute assigned) only follows the module whole.
_BINDINGS = (rb"(?<![.\w])%s[ \t]*(?:[-+*/%&|^@]|//|\*\*|>>|<<)?=(?!=)",  # `x = ...`, `x += 1`, `f(x=1)`
             rb"(?<![.\w])%s[ \t]*:[^=\n]*=(?!=)",  # `x: T = ...`
             rb"(?<![.\w])%s[ \t]*,[^\n=()]*=(?!=)|,[ \t]*%s[ \t]*(?:,[^\n=()]*)?=(?!=)",  # `x, y = ...`
             rb"(?<![.\w])%s[ \t]*:=",
             rb"\b(?:def|class)[ \t]+%s\b",
             rb"\bas[ \t]+%s\b",
             rb"\bimport\b[^\n;]*(?<![.\w])%s\b",
             rb"^[ \t]*(?:async[ \t]+)?for\b[^\n:]*(?<![.\w])%s\b[^\n:]*\bin\b",
             rb"^[ \t]*(?:global|nonlocal|del)\b[^\n]*(?<![.\w])%s\b")


class _Imports:
    """What `_route` asks of one module's bytes, read once however many names it is asked for: its `from`
    imports (where they are, what they bind)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.spans: List[Tuple[int, int]] = []
        self.stars: List[str] = []
        self.bound: Dict[bytes, List[Tuple[str, str]]] = {}
        for match in import_matches(_FROM, data):
            self.spans.append(match.span())
            module = match.group(1).decode("ascii", "replace")
            items = match.group(2).strip(b"()")
            if b"*" in items:
                self.stars.append(module)
                continue
            for item in items.split(b","):
                bound = _BOUND.search(item)
                if bound is not None:
                    self.bound.setdefault(bound.group(2) or bound.group(1), []).append(
                        (module, bound.group(1).decode("ascii")))
        self.dynamic = re.search(rb"\bdef[ \t]+__getattr__\b", data) is not None

    def rebinds(self, word: bytes) -> bool:
        """Whether a line outside the `from` imports may bind `word` (see `_BINDINGS`). An attribute of it
        (`word.x`, on a line with no `import`) binds nothing: a package's `__init__.py` names its imported
        modules thousands of times that way."""
        data = self.data
        starts = [start for start, _ in self.spans]
        # Compiled only for a line to ask (most names asked appear nowhere but their import): ten patterns per
        # name were a sixth of a one-file answer's time.
        compiled: List[Any] = []

        def binds(line: bytes) -> bool:
            if not compiled:
                escaped = re.escape(word)
                compiled.append(re.compile(rb"""(["'])%s\1""" % escaped))
                compiled.extend(re.compile(pattern.replace(b"%s", escaped), re.MULTILINE) for pattern in _BINDINGS)
            line = compiled[0].sub(b"", line)
            return any(pattern.search(line) for pattern in compiled[1:])

        checked: Set[int] = set()
        at = data.find(word)
        while at >= 0:
            end = at + len(word)
            if (at == 0 or not _word_byte(data[at - 1]) and data[at - 1] != 46) \
                    and (end == len(data) or not _word_byte(data[end])):
                place = bisect.bisect_right(starts, at) - 1
                line_start = data.rfind(b"\n", 0, at) + 1
                if (place < 0 or at >= self.spans[place][1]) and line_start not in checked:
                    line_end = data.find(b"\n", at)
                    line = data[line_start:line_end if line_end >= 0 else len(data)]
                    if end == len(data) or data[end] != 46 or b"import" in line:
                        checked.add(line_start)
                        if binds(line):
                            return True
            at = data.find(word, end)
        return False


def _word_byte(byte: int) -> bool:
    return byte == 95 or 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122 or byte >= 128


def _route(imports: Optional[_Imports], name: str, star_here: Callable[[str], bool]) -> Optional[Tuple[str, str]]:
    """(module, name there) when the only binding of `name` in a module (`imports`, of its bytes) is one `from
    module import name [as alias]`; `_ABSENT` when it binds it nowhere (and imports no `*` from the project);
    None when it may bind it otherwise (a def, a class, an assignment, a loop, a second import, a module
    `__getattr__`, a star import of a module `star_here` finds in the project), or cannot be read: then the
    module is followed whole. A use of the name (`types.Message`) binds nothing; nor does a mention in quotes
    (`__all__ = ["Client"]`)."""
    if imports is None or imports.dynamic or any(star_here(star) for star in imports.stars):
        return None
    wanted = name.encode("ascii", "replace")
    found = imports.bound.get(wanted, [])
    if len(found) > 1 or imports.rebinds(wanted):
        return None
    return found[0] if found else _ABSENT


def _module_of(modules: Any, name: str, importer: str) -> Optional[str]:
    """The project file of module `name` (relative or absolute) as `importer` imports it, or None."""
    absolute = modules.absolute(name, importer)
    return modules.module(absolute, importer) if absolute else None


def imports(path: str, modules: Any, data: Union[bytes, List[Tuple[str, List[str]]], None]
            ) -> List[Tuple[str, bool]]:
    """The project modules the bytes of `path` (`data`, or what `imported_names` gave for them) import, each
    with whether to follow it (`_imports`)."""
    listed = imported_names(data) if isinstance(data, bytes) else data or ()
    return [(module, follow) for module, follow in _imports(path, modules, listed) if module is not None]


def _imports(path: str, modules: Any, listed: Iterable[Tuple[str, List[str]]]
             ) -> Iterator[Tuple[Optional[str], bool]]:
    """The project modules `path` imports (`listed`: `imported_names` of its bytes), each with whether to
    follow it.

    Importing `a.b.c` runs `a/__init__.py` and `a/b/__init__.py` first: they are met, but what they import is
    followed only when a name is imported from them that is not a module of their own (`from a import f`, not
    `from a import submodule`), since the names a module uses come from the modules it names (a package that
    imports all its modules in its `__init__.py` otherwise brought the whole package in for any file below it)."""
    for name, names in listed:
        absolute = modules.absolute(name, path) if name.startswith(".") else name
        if not absolute:
            continue
        parts = absolute.split(".")
        for end in range(1, len(parts)):
            yield modules.module(".".join(parts[:end]), path), False
        module = modules.module(absolute, path)
        if not names:  # `import a.b`
            yield module, True
            continue
        yield module, False
        for imported in names:
            submodule = modules.module(f"{absolute}.{imported}", path) if imported != "*" else None
            yield (submodule, True) if submodule is not None else (module, True)


def _references(summary: Any) -> Iterator[List[Any]]:
    """Every reference through an import a summary holds (`["import", module, [attributes]]`), wherever it is
    (call sites, base classes, hand-offs, a view's verbs)."""
    stack = [summary]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            if len(item) == 3 and item[0] == "import" and isinstance(item[1], str) and isinstance(item[2], list):
                yield item  # type: ignore[misc]
            else:
                stack.extend(element for element in item if isinstance(element, (list, tuple, dict)))


def focused_first(gated: Dict[str, Any]) -> Phase1:
    """Phase 1 (project.First) answered by `gated` (`called`'s: the modules the targets reach on the way down
    that passed its gate); every other module is left to phase 2's search, in the order given."""

    def run(paths: Iterable[str]) -> Tuple[Dict[str, Any], Iterator[str]]:
        # Gone through twice, not held: a shard's project is all of a big tree's paths (project.ModuleMap's
        # `paths` reads them from its table each time).
        given = list(paths) if iter(paths) is paths else paths
        return {path: gated[path] for path in given if path in gated}, (path for path in given if path not in gated)

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
    gated, followed, _ = called(wanted, modules, local.first,
                                lambda path: read_or_none(path, options_of(path).max_file_size), local.summary)
    return _solve_gated(absolute, focused_first(gated), local.search, local.summary,  # type: ignore[arg-type]
                        local.words, plain_rounds=PLAIN_ROUNDS, modules=modules,
                        toward=(frozenset(wanted), frozenset(followed)))
