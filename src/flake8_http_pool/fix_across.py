"""HTP104's fix across modules: a function hot because of another module takes its client as a parameter, and
each caller, in whichever project module, makes one client around its loop or `gather` (RULES.md, HTP104).

A change across modules touches several files: it is planned here, in the main process, from the files' texts
and the project model's seeds, verified file by file (each must compile, keep its comments, and no longer show
the finding; no file may show more findings than before), and then written all or nothing by `fix` (see
fix_command and writing.write_group). Report only -- no change at all -- when any caller cannot be edited
safely: the function is public and `application = true` is not set (callers outside the project), the
project patches the constructor or its library where the function makes it (a test's `mock.patch`), a module
names it other than by importing it and calling it (passes it on as a value, `mod.f`, rebinds it), a caller
is not a plain call in a loop or `gather` of a function or module (nested functions, lambdas, class bodies),
a client of the same library is open there already, or the caller is itself hot (a client per call again).
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from .engine import ModuleSeeds, analyze
from .fix_facts import FixFacts, NamesElsewhere
from .noqa import unsuppressed
from .options import Options
from .source_files import SourceError, decode_source, parse_source, quiet_parse, read_bytes, read_or_none


class FileChange(NamedTuple):
    """One file of a change: its bytes as read, and its new text."""

    path: str
    data: bytes
    text: str
    new_text: str


class Change(NamedTuple):
    """A change across files, to write all or nothing: the fix it carries out and every file it edits."""

    code: str
    what: str  # for messages: `_product() in catalog/client.py`
    files: Tuple[FileChange, ...]


class _Source(NamedTuple):
    path: str
    data: bytes
    text: str
    tree: ast.Module


def _load(path: str, options: Options) -> Optional[_Source]:
    try:
        data = read_bytes(path, options.max_file_size)
        text = decode_source(data)
        return _Source(path, data, text, parse_source(text, path))
    except (SourceError, RecursionError, MemoryError):
        return None  # the file's own fix reports it


def _findings(source: _Source, options: Options, seeds: Optional[ModuleSeeds], codes: Optional[Set[str]] = None
              ) -> List[Any]:
    return unsuppressed(analyze(source.tree, options, codes=codes, source=source.text, seeds=seeds), source.text)


def plan_changes(paths: Sequence[str], seeds: Dict[str, ModuleSeeds], options_of: Callable[[str], Options],
                 facts_of: Callable[[str], FixFacts], codes: Callable[[str], Set[str]]) -> List[Change]:
    """The HTP104 changes across modules among `paths` (absolute), each verified, none sharing a file.

    `seeds` are the project model's (project_run.project_seeds); `facts_of(path)` the fix facts of a file
    (its config's `application`); `codes(path)` the codes selected for it. Files the model made no function
    hot in cannot hold such a finding, so only theirs are analysed first.
    """
    changes: List[Change] = []
    taken: Set[str] = set()
    cache: Dict[str, Optional[_Source]] = {}

    def source_of(path: str) -> Optional[_Source]:
        if path not in cache:
            cache[path] = _load(path, options_of(path))
        return cache[path]

    for path in sorted(p for p, s in seeds.items() if s.hot):
        if path in taken or "HTP104" not in codes(path):
            continue
        source = source_of(path)
        if source is None:
            continue
        for finding in _findings(source, options_of(path), seeds.get(path), {"HTP104"}):
            change = _thread(source, finding, paths, seeds, options_of, facts_of, source_of)
            if change is not None and not taken.intersection(f.path for f in change.files):
                changes.append(change)
                taken.update(f.path for f in change.files)
                break  # one change per function's module per run: the next run sees the new text
    return changes


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _constructor_import(tree: ast.Module, base_name: str) -> Optional[str]:
    """The module-level `import X` (or `import X as Y`) binding the constructor's first name, as source."""
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".", 1)[0]
                if bound == base_name:
                    return f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
    return None


def _thread(source: _Source, finding: Any, paths: Sequence[str], seeds: Dict[str, ModuleSeeds],
            options_of: Callable[[str], Options], facts_of: Callable[[str], FixFacts],
            source_of: Callable[[str], Optional[_Source]]) -> Optional[Change]:
    """The change that threads `finding`'s client through every caller in the project, or None (report only)."""
    from .bindings import import_names
    from .fixes.htp101_sites import _Index, _span
    from .fixes.htp104_sites import function_side
    from .fixes.positions import char_span, source_lines
    from .project import ModuleMap, project_root

    details = finding.details or {}
    if not details.get("hot_path") or details.get("calls"):
        return None  # hot for a reason of its own module, or called there too: the in-module plan's case
    index = _Index.of(source.tree)
    defined = [n for n in ast.walk(source.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
               and n.name == details.get("function")]
    if len(defined) != 1 or defined[0].decorator_list or any(
            isinstance(n, ast.Name) and n.id == defined[0].name for n in ast.walk(source.tree)):
        return None  # named in its own module too (a value handed on, a second def): not planned here
    # No use in its own module: every use is in the callers' modules, checked there (`_caller_wraps`).
    finding = finding._replace(details={**details, "all_uses_are_calls": True})
    side = function_side(index, import_names(source.tree), finding)
    if side is None or side.position != 0 or index.scope_of(side.function) is not source.tree:
        return None  # a method or a nested function: its callers' shapes are not planned across modules
    name = side.function.name
    facts = facts_of(source.path)
    if not (_private(name) or facts.application):
        return None  # public: callers outside the project would break
    if isinstance(facts.named_elsewhere, NamesElsewhere) and facts.named_elsewhere.named_outside_the_run(name):
        return None  # a module of the project that this run does not fix names it: a caller there would break
    imported = _constructor_import(source.tree, side.base_name)
    if imported is None or any(isinstance(n, ast.Name) and n.id != side.base_name for n in ast.walk(side.call)):
        return None  # the callers' modules could not build the client as this module does
    lines = source_lines(source.text)
    constructor_code = _text(lines, _span(side.call))
    if facts.with_module(facts.module, source.tree).is_patched(side.base_name, constructor_code.split("(", 1)[0]):
        return None  # a test patches the client where it is made now; made in the callers, it would escape that

    modules = ModuleMap(paths, project_root(paths))
    word = re.compile(rb"\b" + re.escape(name.encode("utf-8")) + rb"\b")
    callers: List[Tuple[_Source, List[Any]]] = []
    for path in paths:
        if path == source.path:
            continue
        data = read_or_none(path, options_of(path).max_file_size)
        if data is None:
            return None  # a module that cannot be read (or is too big, or no regular file) may call it
        if not word.search(data):
            continue
        other = source_of(path)
        if other is None:
            return None  # a module naming it that cannot be read or parsed: it may call it
        wraps = _caller_wraps(other, name, source.path, side, imported, modules, options_of(path), seeds.get(path))
        if wraps is None:
            return None
        callers.append((other, wraps))
    if not callers:
        return None

    from .fixes.htp104_sites import ClientParameter

    own = ClientParameter(
        char_span(lines, _span(side.function)), side.variable, 0, char_span(lines, _span(side.statement)),
        char_span(lines, _span(side.call)), constructor_code, side.is_with, side.is_async, (),
    )
    files = [FileChange(source.path, source.data, source.text,
                        _without_unused_import(_run(source, [own]), side.base_name))]
    nowhere = (0, 0, 0, 0)  # a creation no statement starts at: the callers' plans only wrap and pass
    for other, wraps in callers:
        plan = ClientParameter(nowhere, side.variable, 0, nowhere, nowhere, constructor_code, side.is_with,
                               side.is_async, tuple(wraps))
        new_text = _run(other, [plan])
        if side.base_name not in _module_bindings(other.tree):
            new_text = _with_import(new_text, imported)
        files.append(FileChange(other.path, other.data, other.text, new_text))
    what = f"{name}() in {modules.relative(source.path)}"
    return Change("HTP104", what, tuple(files))


def _text(lines: Sequence[str], span: Tuple[int, int, int, int]) -> str:
    from .fixes.htp104_sites import _text as text_of

    return text_of(lines, span)


def _module_bindings(tree: ast.Module) -> Set[str]:
    """Names bound at module level (imports, assignments, defs, classes, loop targets)."""
    bound: Set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name.split(".", 1)[0]) for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
    return bound


def _caller_wraps(other: _Source, name: str, target: str, side: Any, imported: str, modules: Any,
                  options: Options, seeds: Optional[ModuleSeeds]) -> Optional[List[Any]]:
    """The statements of `other` to wrap around its calls of the function, or None when any use of it there
    cannot be edited safely (the module docstring's list)."""
    from .analysis import Analysis
    from .bindings import import_names
    from .fixes.enclosing_clients import client_open_around
    from .fixes.htp101_sites import _contains, _Index, _span, free_name
    from .fixes.htp104_sites import CallerWrap, _bound_in, _repeats, _wrap_target
    from .fixes.positions import char_span, source_lines
    from .libraries import FAMILIES

    tree = other.tree
    local: Optional[str] = None
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            module = "." * node.level + (node.module or "")
            absolute = modules.absolute(module, other.path) if node.level else module
            if node not in tree.body or absolute is None or modules.module(absolute, other.path) != target:
                return None  # imported elsewhere than at module level, or from where we cannot tell
            alias = next(a for a in node.names if a.name == name)
            if local is not None:
                return None
            local = alias.asname or name
    if local is None:
        return None  # named without a `from module import name`: `mod.name`, a string, an unknown import
    index = _Index.of(tree)
    calls: List[ast.Call] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == name:
            return None
        if isinstance(node, ast.Name) and node.id == local:
            parent = index.parents.get(node)
            if not (isinstance(node.ctx, ast.Load) and isinstance(parent, ast.Call) and parent.func is node):
                return None  # passed on as a value, rebound or deleted
            if any(isinstance(a, ast.Starred) for a in parent.args):
                return None
            calls.append(parent)
    if not calls:
        return None
    analysis = Analysis(tree, options)
    if seeds is not None:
        analysis.extra_hot = {key: seed[0] for key, seed in seeds.hot.items()}
    hot_defs = {info.node for info in analysis.hot}
    imports = import_names(tree)
    lines = source_lines(other.text)
    targets: Dict[ast.stmt, List[ast.Call]] = {}
    for call in calls:
        caller = index.scope_of(call)
        if isinstance(caller, (ast.ClassDef, ast.Lambda)) or caller in hot_defs:
            return None  # a hot caller would make a client per call of its own (HTP104 again)
        if not isinstance(caller, ast.Module) and isinstance(index.scope_of(caller), (ast.FunctionDef,
                                                                                       ast.AsyncFunctionDef)):
            return None  # a nested caller runs per call of its enclosing function
        if side.is_async and not isinstance(caller, ast.AsyncFunctionDef):
            return None
        if not isinstance(caller, ast.Module) and side.base_name in _bound_in(caller):
            return None
        if side.base_name in _module_bindings(tree) and _constructor_import(tree, side.base_name) != imported:
            return None  # the constructor's first name means something else here
        wrap = _wrap_target(index, call, caller, isinstance(side.function, ast.AsyncFunctionDef))
        if wrap is None or not _repeats(index, call, wrap):
            return None  # no loop or gather to hold one client for many calls
        if side.family is None or client_open_around(wrap, index.parents, side.family, imports):
            return None  # a client of that library is open there already: a second would nest in it
        targets.setdefault(wrap, []).append(call)
    spans = [_span(t) for t in targets]
    if any(_contains(a, b) for a in spans for b in spans):
        return None
    wraps = []
    for statement, uses in targets.items():
        scope = index.scope_of(statement)
        client = free_name(index.names_in(scope) | {side.base_name}, FAMILIES[side.library].variable)
        wraps.append(CallerWrap(char_span(lines, _span(statement)), client,
                                tuple(char_span(lines, _span(u)) for u in uses)))
    return wraps


def _run(source: _Source, plan: List[Any]) -> str:
    """`plan` carried out on the file's text with HTP104's codemod."""
    import libcst as cst

    from .fixes.base import new_context, transform_parsed
    from .fixes.htp104 import ClientParameterCommand

    command = ClientParameterCommand(new_context(source.path), plan)
    return transform_parsed(command, cst.parse_module(source.text)).code


def _without_unused_import(text: str, name: str) -> str:
    """`text` less its top-level `import X` binding `name` alone, when nothing else in it uses `name` any more
    (the client is made in the callers' modules now, which import it themselves: the import still runs)."""
    tree = quiet_parse(text)
    if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(tree)):
        return text
    statements = [n for n in tree.body if isinstance(n, ast.Import) and len(n.names) == 1
                  and (n.names[0].asname or n.names[0].name.split(".", 1)[0]) == name]
    if len(statements) != 1 or statements[0].end_lineno != statements[0].lineno:
        return text
    lines = text.splitlines(keepends=True)
    line = lines[statements[0].lineno - 1]
    if line.strip() != ast.get_source_segment(text, statements[0]):
        return text  # shares its line with something else (`import requests; x = 1`, a comment)
    del lines[statements[0].lineno - 1]
    return "".join(lines)


def _with_import(text: str, statement: str) -> str:
    """`text` with `statement` (an `import X`) after the module's last top-level import, else after its
    docstring, else first."""
    tree = quiet_parse(text)
    after = 0
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            after = node.end_lineno or node.lineno
        elif after == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str) and node is tree.body[0]:
            after = node.end_lineno or node.lineno
    lines = text.splitlines(keepends=True)
    end = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    return "".join(lines[:after]) + statement + end + "".join(lines[after:])


def verify_change(change: Change, options_of: Callable[[str], Options], seeds: Dict[str, ModuleSeeds],
                  codes: Callable[[str], Set[str]]) -> Optional[Tuple[str, str]]:
    """None when every file of the change is sound, else (the file, why not): each must compile and keep its
    comments, the function's module must no longer show the finding, and no file may show more findings."""
    for file in change.files:
        reason = verify_file(file, options_of(file.path), seeds.get(file.path), codes(file.path),
                             change.files[0].path == file.path)
        if reason is not None:
            return file.path, reason
    return None


def verify_file(file: FileChange, options: Options, seeds: Optional[ModuleSeeds], codes: Set[str],
                fixed_here: bool) -> Optional[str]:
    """Why one file of a change is not sound, or None (see verify_change)."""
    from .fixing import _comments, _compiles, relocated_seeds

    reason = _compiles(file.new_text, file.path)
    if reason is not None:
        return f"the change produced code that does not compile ({reason})"
    lost = _comments(file.text) - _comments(file.new_text)
    if lost:
        return f"the change would drop a comment: {next(iter(lost))}"
    old_tree = parse_source(file.text, file.path)
    new_tree = parse_source(file.new_text, file.path)
    new_seeds = relocated_seeds(seeds, old_tree, file.new_text)
    before = Counter(f.code for f in unsuppressed(analyze(old_tree, options, codes=codes, source=file.text,
                                                          seeds=seeds), file.text))
    after = Counter(f.code for f in unsuppressed(analyze(new_tree, options, codes=codes, source=file.new_text,
                                                         seeds=new_seeds), file.new_text))
    grew = after - before
    if grew:
        return f"the change would add findings ({', '.join(sorted(grew))})"
    if fixed_here and after["HTP104"] >= before["HTP104"]:
        return "the change did not remove the HTP104 finding"
    return None


def relocated(seeds: Optional[ModuleSeeds], file: FileChange) -> Optional[ModuleSeeds]:
    """A changed file's seeds, re-located in its new text (fixing.relocated_seeds)."""
    from .fixing import relocated_seeds

    if seeds is None:
        return None
    return relocated_seeds(seeds, parse_source(file.text, file.path), file.new_text)

