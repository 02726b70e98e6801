"""Which HTP102 findings (and HTP101's deferred or handed-on calls) the shared-session fix can rewrite (stdlib only).

The fix is one module-level client, `_HTTP_SESSION = requests.Session()` after the imports (`_HTTP_CLIENT =
httpx.Client()`), and every reported call sent through it. An existing module-level `NAME = requests.Session()`
is reused. aiohttp has no module-level session outside an event loop and `urlopen` no session at all: report only,
as is a function looked up by `getattr` (htp101_sites.looked_up_by_name).
"""

from __future__ import annotations

import ast
from typing import Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from ..finding import Finding
from ..fix_facts import NO_FACTS, FixFacts
from ..bindings import dotted_name
from ..libraries import unpooled_family
from .htp101_sites import (ImportRef, _arguments_fit, _import_refs, _Index, _module_binding, looked_up_by_name,
                           reads_response_cookies)
from .positions import Span, char_span

_MAX_LINE = 79  # pycodestyle's default (E501)

# library -> (module holding the client class, class, preferred module-level name)
_SHARED = {
    "requests": ("requests", "Session", "_HTTP_SESSION"),
    "grequests": ("requests", "Session", "_HTTP_SESSION"),
    "niquests": ("niquests", "Session", "_HTTP_SESSION"),
    "httpx": ("httpx", "Client", "_HTTP_CLIENT"),
    "httpx2": ("httpx2", "Client", "_HTTP_CLIENT"),
}


class SharedCall(NamedTuple):
    """One site to send through the shared client: a call, or a function handed on (`ex.map(requests.get, u)`)."""

    span: Span  # libcst units
    verb: str
    is_call: bool  # False: the site is the function expression itself, replaced by `_HTTP_SESSION.get`
    pass_session: bool  # grequests: add `session=_HTTP_SESSION`
    params_keyword: bool  # `requests.get(u, p)`: p becomes `params=p`
    imports: Tuple[ImportRef, ...]


class SharedClient(NamedTuple):
    """The module-level client of one library and the sites that use it."""

    library: str
    name: str  # `_HTTP_SESSION`, or the name of an existing module-level client
    create: bool  # False: reuse the existing assignment
    module_name: str  # the name the constructor is reached through
    import_module: Optional[str]  # a module to import first
    constructor: str
    after: Optional[Tuple[int, int]]  # start of the module-level statement to insert after (None: module start)
    calls: Tuple[SharedCall, ...]


def _free_constant(taken: Set[str], preferred: str) -> str:
    """`_HTTP_SESSION` if unused, else `_HTTP_SESSION_2`, `_HTTP_SESSION_3`, ..."""
    name, number = preferred, 2
    while name in taken:
        name, number = f"{preferred}_{number}", number + 1
    return name


def _is_later(finding: Finding) -> bool:
    """An HTP101 finding whose call may run after its statement ends: HTP101's safe fix leaves it to this one."""
    details = finding.details or {}
    return bool(details.get("deferred") or details.get("passed") or details.get("mapping"))


def _imports_only(stmt: ast.stmt) -> bool:
    """An import, or an `if` / `try` block holding nothing but imports (`try: import ujson as json ...`)."""
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(stmt, ast.If) or isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        return all(
            isinstance(sub, (ast.Import, ast.ImportFrom, ast.Pass))
            or (isinstance(sub, ast.Assign) and isinstance(sub.value, ast.Constant))  # `json = None`
            for sub in ast.walk(stmt) if isinstance(sub, ast.stmt) and sub is not stmt
        )
    return False


def _insert_after(tree: ast.Module, module_name: str) -> Optional[Tuple[int, int]]:
    """Where the shared client goes: after the module's whole import block, and after the import it needs.

    The import block runs from the module's start to its last import (or `if`/`try` of imports) that comes
    before the first `def` or `class`: statements between imports (`sys.path.insert(...)`, `log = ...`) are
    part of it, so the client never lands between two imports. No function of the module exists yet there,
    so no module-level code can call one before the client is made.
    """
    last: Optional[ast.stmt] = None
    for position, stmt in enumerate(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
        is_docstring = (
            position == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        )
        if is_docstring or _imports_only(stmt):
            last = stmt
    # The import binding the module may come later than the leading block.
    for stmt in tree.body:
        bound = [a.asname or a.name.split(".", 1)[0] for a in stmt.names] if isinstance(stmt, ast.Import) else []
        if module_name in bound:
            if last is None or stmt.lineno > last.lineno:
                last = stmt
            break
    return None if last is None else (last.lineno, last.col_offset)


def _imported_unconditionally(tree: ast.Module, module: str) -> bool:
    """Whether a statement of the module's own body (not under `try`/`if`, not in a function) imports the
    library: only then may the fix make a module-level client of it (RULES.md, "Imports")."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            if any(a.name == module or a.name.startswith(module + ".") for a in stmt.names):
                return True
        elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
            if stmt.module == module or stmt.module.startswith(module + "."):
                return True
    return False


def _exported(tree: ast.Module) -> Set[str]:
    """Names the module lists in a literal `__all__` (assigned or extended at module level)."""
    names: Set[str] = set()
    for stmt in tree.body:
        value = None
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets):
            value = stmt.value
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and isinstance(stmt.target, ast.Name) \
                and stmt.target.id == "__all__":
            value = stmt.value
        if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
            names.update(e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str))
    return names


def _removable(refs: Tuple[ImportRef, ...], exported: Set[str], facts: FixFacts) -> Tuple[ImportRef, ...]:
    """The imports the fix may drop once unused: never a name code outside may reach through this module
    (listed in `__all__`, re-exported as `from m import x as x`, or patched: `mock.patch("pkg.mod.get")`)."""
    kept = []
    for ref in refs:
        bound = ref.asname or (ref.obj if ref.obj is not None else ref.module.split(".", 1)[0])
        qualified = f"{ref.module}.{ref.obj}" if ref.obj is not None else ref.module
        if bound in exported or (ref.asname is not None and ref.asname == (ref.obj or ref.module)):
            continue
        if facts.is_patched(bound, qualified):
            continue
        kept.append(ref)
    return tuple(kept)


def _existing_client(tree: ast.Module, module_name: str, constructor: str) -> Optional[ast.Assign]:
    """A module-level `NAME = <module>.<Client>()` (no arguments) bound nowhere else, to reuse."""
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            continue
        value = stmt.value
        if not (isinstance(value, ast.Call) and not value.args and not value.keywords):
            continue
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr == constructor and isinstance(func.value, ast.Name) \
                and func.value.id == module_name:
            name = stmt.targets[0].id
            stores = [
                n for n in ast.walk(tree)
                if (isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load))
                or (isinstance(n, ast.arg) and n.arg == name)
                or (isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names)
            ]
            if len(stores) == 1:
                return stmt
    return None


def _runs_before(tree: ast.Module, stmt: ast.stmt) -> bool:
    """Whether no module-level code that could call a function runs before `stmt` (so the client exists)."""
    for other in tree.body:
        if other is stmt:
            return True
        if isinstance(other, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom)):
            continue
        if isinstance(other, ast.Assign) and isinstance(other.value, ast.Call) and not other.value.args \
                and not other.value.keywords and isinstance(other.value.func, ast.Attribute):
            continue  # another shared client (`_HTTP_CLIENT = httpx.Client()`) calls no function of ours
        if any(isinstance(n, (ast.Call, ast.Await)) for n in ast.walk(other)):
            return False
    return True


def _passed_fits(index: _Index, library: str, verb: str, finding: Finding) -> bool:
    """A handed-on function: `Session.get` has no positional `params`, so `get` must get one argument per call."""
    if library in ("httpx", "httpx2"):
        return True
    if library not in ("requests", "niquests"):
        return False  # grequests: a function handed on cannot be given session=
    if verb != "get":
        return True
    passed_to = (finding.details or {}).get("passed_to")
    call = index.calls.get(tuple(passed_to)) if passed_to else None  # type: ignore[arg-type]
    if call is None or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    # map(f, urls) / ex.map(f, urls) / ex.submit(f, url): one argument to each call
    mappers = ("map", "imap", "imap_unordered", "submit", "spawn", "apply_async", "map_async")
    return name in mappers and len(call.args) == 2


def plan_shared_clients(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str],
    facts: FixFacts = NO_FACTS,
) -> List[SharedClient]:
    """The module-level clients to create (or reuse) and the sites to send through them, one entry per library."""
    index = _Index.of(tree)
    groups: Dict[str, List[Tuple[Finding, Optional[ast.Call]]]] = {}
    for finding in findings:
        details = finding.details or {}
        if finding.code == "HTP101" and not _is_later(finding):
            continue
        if finding.code not in ("HTP101", "HTP102"):
            continue
        library = details.get("library")
        verb = str(details.get("verb", ""))
        if library not in _SHARED or unpooled_family(str(details.get("qualname", ""))) != library:
            continue
        span = (finding.line, finding.col, finding.end_line, finding.end_col)
        call = index.calls.get(span)
        if looked_up_by_name(str(details.get("qualname", "")), call):
            continue
        func = call.func if call is not None else _expr_at(index, finding)
        # A name the project patches or wraps: tests and wrappers would silently stop applying (report only).
        if facts.is_patched(dotted_name(func) or "", str(details.get("qualname", ""))):
            continue
        if call is not None:
            if not _arguments_fit(library, verb, call) or reads_response_cookies(index, call):
                continue
            groups.setdefault(library, []).append((finding, call))
        elif details.get("passed") and _passed_fits(index, library, verb, finding):
            groups.setdefault(library, []).append((finding, None))

    plans = []
    taken = index.names_in(tree)
    exported = _exported(tree)
    # The fix never makes a line longer than pycodestyle's 79 or the module's own longest line, whichever
    # is more: a module that kept to its length stays within it.
    limit = max([_MAX_LINE, *(len(line.rstrip("\r\n")) for line in lines)])
    for library in sorted(groups):
        module, constructor, preferred = _SHARED[library]
        first_stmt = tree.body[0] if tree.body else tree
        module_name, must_import = _module_binding(index, module, first_stmt)  # type: ignore[arg-type]
        if module_name is None or not _imported_unconditionally(tree, library):
            continue  # lazily or optionally imported: a module-level client would fail where the import does
        after = _insert_after(tree, module_name)
        if after is None:
            continue  # no import block to follow (the library imported below a def): left to the reader
        existing = _existing_client(tree, module_name, constructor)
        if existing is not None and _runs_before(tree, existing):
            name, create = existing.targets[0].id, False  # type: ignore[attr-defined]
        else:
            name, create = _free_constant(taken, preferred), True
            taken = taken | {name}
        edits = []
        for finding, call in groups[library]:
            verb = str(finding.details.get("verb"))
            func = call.func if call is not None else _expr_at(index, finding)
            if _too_long(lines, call, func, f"{name}.{verb}", library, limit):
                continue
            edits.append(
                SharedCall(
                    char_span(lines, (finding.line, finding.col, finding.end_line, finding.end_col)),
                    verb,
                    call is not None,
                    library == "grequests",
                    call is not None and library in ("requests", "niquests") and verb == "get" and len(call.args) == 2,
                    () if library == "grequests" else _removable(_import_refs(index, func), exported, facts),
                )
            )
        if not edits:
            continue
        plans.append(
            SharedClient(
                library, name, create, module_name, module if must_import else None, constructor,
                after, tuple(edits),
            )
        )
    return plans


def _too_long(lines: Sequence[str], call: Optional[ast.Call], func: ast.expr, replacement: str, library: str,
              limit: int) -> bool:
    """Whether the rewritten site would make a line longer than `limit`: the line of the renamed function,
    the lines of the call after it (they keep their alignment with it, so they move with it), and for
    grequests the line that gets `, session=...`."""
    line = func.lineno
    start = char_span(lines, _span_of(func))
    growth = len(replacement) - (start[3] - start[1]) if start[0] == start[2] else 0
    if library == "grequests":
        growth = 0

    def width(number: int) -> int:
        return len(lines[number - 1].rstrip("\r\n")) if 0 < number <= len(lines) else 0

    end = call.end_lineno if call is not None and call.end_lineno else line
    for number in range(line, end + 1):
        extra = growth
        if call is not None and number == end and library == "grequests":
            extra += len(", session=") + len(replacement.split(".", 1)[0])
        if call is not None and len(call.args) == 2 and library in ("requests", "niquests") \
                and replacement.endswith(".get") and number == call.args[1].lineno:
            extra += len("params=")
        if extra > 0 and width(number) + extra > limit:
            return True
    return False


def _span_of(node: ast.AST) -> Tuple[int, int, int, int]:
    line, col = getattr(node, "lineno"), getattr(node, "col_offset")
    return (line, col, getattr(node, "end_lineno", None) or line, getattr(node, "end_col_offset", None) or 0)


def _expr_at(index: _Index, finding: Finding) -> ast.expr:
    """The expression a handed-on finding points at (`requests.get` in `ex.map(requests.get, urls)`)."""
    span = (finding.line, finding.col, finding.end_line, finding.end_col)
    for node in ast.walk(index.tree):
        if isinstance(node, (ast.Attribute, ast.Name)) and (
            node.lineno, node.col_offset, node.end_lineno, node.end_col_offset
        ) == span:
            return node
    return ast.Name(id="", ctx=ast.Load())
