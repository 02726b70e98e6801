"""Which HTP101 findings the loop-session fix can rewrite, and the plan for each loop (stdlib only, no libcst).

The plan is made from the engine's findings and the `ast` tree; the libcst command in `htp101.py` only
carries it out. Keeping the decisions here lets `fix` know whether a file needs libcst at all.
"""

from __future__ import annotations

import ast
from collections import deque
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from ..bindings import dotted_name
from ..finding import Finding
from ..fix_facts import NO_FACTS, FixFacts
from ..libraries import ANY_ATTRIBUTE, FAMILIES, unpooled_family
from .positions import Span, char_span

# How many positional arguments the session method takes in the same places as the module function.
# `requests.get(url, params)` is the one function whose second positional argument the method lacks: it
# becomes `params=`. More positional arguments than listed (or `*args`) and the site is left alone.
_REQUESTS_POSITIONAL = {"get": 2, "options": 1, "head": 1, "delete": 1, "post": 3, "put": 2, "patch": 2, "request": 2}
_HTTPX_POSITIONAL = {"request": 2, "stream": 2}
# Keywords the httpx module functions take that belong to the client, not to one request.
_HTTPX_CLIENT_KEYWORDS = frozenset(
    {"verify", "cert", "proxy", "proxies", "trust_env", "http1", "http2", "mounts", "transport", "app", "limits",
     "max_redirects", "base_url", "default_encoding", "event_hooks"}
)
# aiohttp.request's own keywords that configure the session it opens.
_AIOHTTP_SESSION_KEYWORDS = frozenset({"version", "connector", "loop"})
# Calls that consume a generator expression before they return, so a session closed after the statement is fine.
_EAGER_CONSUMERS = frozenset(
    {"list", "tuple", "set", "frozenset", "dict", "sorted", "sum", "min", "max", "any", "all", "join"}
)
_CONSTRUCTORS = {
    "requests": ("requests", "Session"),
    "grequests": ("requests", "Session"),
    "niquests": ("niquests", "Session"),
    "httpx": ("httpx", "Client"),
    "httpx2": ("httpx2", "Client"),
    "aiohttp": ("aiohttp", "ClientSession"),
}
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


class ImportRef(NamedTuple):
    """An import a rewritten call was reached through (removed afterwards if nothing else uses it)."""

    module: str
    obj: Optional[str]
    asname: Optional[str]


class CallEdit(NamedTuple):
    """One unpooled call to send through the session: `requests.get(u)` -> `session.get(u)`."""

    span: Span  # libcst units (characters)
    verb: str
    pass_session: bool  # grequests: add `session=<name>` instead of calling through the session
    params_keyword: bool  # `requests.get(u, p)`: the second positional argument becomes `params=p`
    imports: Tuple[ImportRef, ...]


class LoopWrap(NamedTuple):
    """One statement holding an outermost loop, to wrap in `with <module>.<Client>() as <name>:`."""

    loop: Span  # libcst units (characters)
    library: str
    module_name: str  # the name the constructor is reached through (`requests`, or an alias like `rq`)
    import_module: Optional[str]  # a module to import because no usable binding of it exists
    constructor: str  # "Session", "Client", "ClientSession"
    name: str  # the variable the `with` binds
    is_async: bool
    calls: Tuple[CallEdit, ...]
    # A generator expression assigned to a name and consumed later in the block: the `with` spans from the
    # loop statement (the assignment) through this statement, the last one using the name. None: the loop alone.
    through: Optional[Span] = None


class _Index:
    """What the planner looks up in the `ast` tree: calls and statements by position, parents, names.

    Built once per tree (`_Index.of`) and only read afterwards, so every planner, and `check`'s fix marks
    planning site by site, share it instead of walking the tree again per call.
    """

    @classmethod
    def of(cls, tree: ast.Module) -> "_Index":
        index = getattr(tree, "_http_pool_index", None)
        if index is None:
            index = cls(tree)
            tree._http_pool_index = index  # type: ignore[attr-defined]
        return index

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.parents: Dict[ast.AST, ast.AST] = {}
        self.calls: Dict[Tuple[int, int, int, int], ast.Call] = {}
        self.statements: Dict[Tuple[int, int, int, int], ast.stmt] = {}
        # ast.walk's order (breadth first) with each node's children listed once, not once for the walk and
        # once more for the parents: on a module of a few thousand lines this took a quarter of `check`'s marks.
        parents, calls, statements = self.parents, self.calls, self.statements
        node_type, call, statement = ast.AST, ast.Call, ast.stmt
        todo = deque([tree])
        while todo:
            node = todo.popleft()
            for field in node._fields:
                value = getattr(node, field, None)
                if isinstance(value, node_type):
                    parents[value] = node
                    todo.append(value)
                elif type(value) is list:
                    for item in value:
                        if isinstance(item, node_type):
                            parents[item] = node
                            todo.append(item)
            if isinstance(node, call):
                calls[_span(node)] = node
            elif isinstance(node, statement):
                statements[_span(node)] = node
        self._names_cache: Dict[ast.AST, Set[str]] = {}

    def scope_of(self, node: ast.AST) -> ast.AST:
        current = self.parents.get(node)
        while current is not None and not isinstance(current, _SCOPES):
            current = self.parents.get(current)
        return current if current is not None else self.tree

    def names_in(self, node: ast.AST) -> Set[str]:
        """Every identifier bound or read anywhere inside `node` (nested scopes included), cached."""
        cached = self._names_cache.get(node)
        if cached is None:
            cached = self._names_cache[node] = identifiers_in(node)
        return cached


def _span(node: ast.AST) -> Tuple[int, int, int, int]:
    line, col = getattr(node, "lineno"), getattr(node, "col_offset")
    return (line, col, getattr(node, "end_lineno", None) or line, getattr(node, "end_col_offset", None) or 0)


def _module_level_imports(tree: ast.Module) -> Iterable[ast.stmt]:
    """Import statements that run at module level (also inside module-level `if`/`try` blocks)."""
    stack: List[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop(0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node  # type: ignore[misc]
        elif isinstance(node, (ast.If, ast.Try)) or type(node).__name__ == "TryStar":
            for field in ("body", "orelse", "handlers", "finalbody"):
                stack.extend(getattr(node, field, ()))
        elif isinstance(node, ast.ExceptHandler):
            stack.extend(node.body)


def _binds_other(node: ast.AST, name: str, module: str, descend: bool) -> bool:
    """Whether `node` binds `name` to anything but the module itself (`import module`, `import module as name`).

    With `descend` False, function and class bodies are not entered (module-level bindings only).
    """
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Import):
            for alias in current.names:
                bound = alias.asname or alias.name.split(".", 1)[0]
                the_module = alias.name == module or (not alias.asname and alias.name.startswith(module + "."))
                if bound == name and not the_module:
                    return True
        elif isinstance(current, ast.ImportFrom):
            if any((alias.asname or alias.name) == name for alias in current.names):
                return True
        elif isinstance(current, ast.Name) and isinstance(current.ctx, (ast.Store, ast.Del)) and current.id == name:
            return True
        elif isinstance(current, ast.arg) and current.arg == name:
            return True
        elif isinstance(current, (ast.Global, ast.Nonlocal)) and name in current.names:
            return True
        elif isinstance(current, ast.ExceptHandler) and current.name == name:
            return True
        elif isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if current.name == name:
                return True
            if not descend and current is not node:
                # Decorators and defaults run at module level; the body does not.
                stack.extend(current.decorator_list)
                if not isinstance(current, ast.ClassDef):
                    stack.extend(current.args.defaults)
                    stack.extend(d for d in current.args.kw_defaults if d is not None)
                continue
        elif type(current).__name__ in ("MatchAs", "MatchStar") and getattr(current, "name", None) == name:
            return True
        stack.extend(ast.iter_child_nodes(current))
    return False


# The HTTP libraries a fix builds clients from: RULES.md "Imports" lets a fix add a module-level import of one
# only where the module already imports it unconditionally at module level (never for an optional or lazy one).
_LIBRARY_MODULES = frozenset({"requests", "niquests", "httpx", "httpx2", "aiohttp"})
# Importing one of these makes sure the library is importable too (grequests is built on requests).
_IMPLIES = {"requests": ("requests", "grequests")}


def _imports_module(stmt: ast.stmt, module: str) -> bool:
    """Whether `stmt` is an import of `module` or of something inside it (any form)."""
    if isinstance(stmt, ast.Import):
        return any(a.name == module or a.name.startswith(module + ".") for a in stmt.names)
    if isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
        return stmt.module == module or stmt.module.startswith(module + ".")
    return False


def imports_unconditionally(tree: ast.Module, module: str) -> bool:
    """Whether the module's top-level statements (not under `if`/`try`) import `module` (or a library that
    brings it, such as grequests for requests)."""
    names = _IMPLIES.get(module, (module,))
    return any(_imports_module(stmt, name) for stmt in tree.body for name in names)


def _own_statements(scope: ast.AST) -> Iterable[ast.AST]:
    """The nodes of a function's own scope: nested functions, classes and lambdas are not entered (their
    decorators and defaults are, as they run in this scope)."""
    stack: List[ast.AST] = list(ast.iter_child_nodes(scope))
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(current.decorator_list)
            stack.extend(current.args.defaults)
            stack.extend(d for d in current.args.kw_defaults if d is not None)
            continue
        if isinstance(current, ast.ClassDef):
            stack.extend(current.decorator_list)
            stack.extend(current.bases)
            continue
        if isinstance(current, ast.Lambda):
            stack.extend(current.args.defaults)
            continue
        stack.extend(ast.iter_child_nodes(current))


def local_imports(scope: ast.AST, name: str) -> List[ast.stmt]:
    """The import statements of a function's own scope that bind `name` (and so make it local there)."""
    found: List[ast.stmt] = []
    for node in _own_statements(scope):
        if isinstance(node, ast.Import):
            if any((a.asname or a.name.split(".", 1)[0]) == name for a in node.names):
                found.append(node)
        elif isinstance(node, ast.ImportFrom):
            if any((a.asname or a.name) == name for a in node.names):
                found.append(node)
    return found


_LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break)  # statements after which a block goes on elsewhere


def dominates(index: _Index, first: ast.stmt, statement: ast.stmt, scope: ast.AST) -> bool:
    """Whether `first` has run whenever `statement` runs: it comes earlier in the same statement list as
    `statement`, or as a statement enclosing it, inside `scope` (so no `if`, `try` or loop can skip it). An
    import in a `try` whose every handler leaves (`return`, `raise`, ...) has run after that `try`."""
    first = _past_leaving_try(index, first)
    block = _block_of(index, first)
    if block is None:
        return False
    position = next((i for i, item in enumerate(block) if item is first), -1)
    current: Optional[ast.AST] = statement
    while current is not None and current is not scope:
        for i, item in enumerate(block):
            if item is current:
                return i > position
        current = index.parents.get(current)
    return False


def _runs_on_import(index: _Index, stmt: ast.stmt) -> bool:
    """Whether a module-level import surely runs when the module is imported: a statement of the module's body,
    or in a `try` of it whose every handler leaves. One under an `if` (or a `try` that goes on without it) may
    leave the name unbound, and a client written where the original only called through it would raise."""
    stmt = _past_leaving_try(index, stmt)
    return any(item is stmt for item in index.tree.body)


def _past_leaving_try(index: _Index, stmt: ast.stmt) -> ast.stmt:
    """The `try` holding `stmt` in its body when every handler of it leaves, else `stmt`: after such a try,
    `stmt` has run (`try: import requests` / `except ImportError: return None`)."""
    holder = index.parents.get(stmt)
    if isinstance(holder, ast.Try) and stmt in holder.body and holder.handlers and all(
        handler.body and isinstance(handler.body[-1], _LEAVES) for handler in holder.handlers
    ):
        return holder
    return stmt


def _module_binding(
    index: _Index, module: str, statement: ast.stmt, in_order: bool = False
) -> Tuple[Optional[str], bool]:
    """The name to reach `module` through at `statement` (an existing `import module [as alias]` when nothing
    else binds that name), and whether the module must be imported. (None, False): no safe reference exists.

    RULES.md "Imports": an import of the library inside the function makes its name local there, so the name
    is used only where such an import surely ran first (it dominates `statement`); a name some enclosing
    function imports locally is never reached from module level; and an HTTP library gets a new module-level
    import only where the module already imports it unconditionally at module level. With `in_order`, a
    module-level `statement` (which runs as the module is imported) uses only an import that surely ran
    before it (`if HAVE_HTTP: import requests` above a module-level loop does not).
    """
    enclosing = []
    scope = index.scope_of(statement)
    while not isinstance(scope, ast.Module):
        enclosing.append(scope)
        scope = index.scope_of(scope)
    functions = [f for f in enclosing if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]

    innermost = enclosing[0] if enclosing and enclosing[0] is (functions[0] if functions else None) else None
    if innermost is not None:
        # `def f(): import requests` then a loop: the local import, where it surely ran before the statement.
        for stmt in _own_statements(innermost):
            if not isinstance(stmt, ast.Import) or not _imports_module(stmt, module):
                continue
            if not dominates(index, stmt, statement, innermost):
                continue
            for alias in stmt.names:
                if alias.name == module or (not alias.asname and alias.name.startswith(module + ".")):
                    name = alias.asname or module
                    others = [s for s in local_imports(innermost, name) if not _imports_module(s, module)]
                    if not others and not any(
                        _binds_other(func, name, module, descend=True) for func in functions[1:]
                    ) and not _binds_other(innermost, name, module, descend=True):
                        return name, False

    def usable(name: str) -> bool:
        if any(local_imports(func, name) for func in functions):
            return False  # local in some enclosing function: the module-level binding is not what it sees
        return not _binds_other(index.tree, name, module, descend=False) and not any(
            _binds_other(func, name, module, descend=True) for func in enclosing
        )

    for stmt in _module_level_imports(index.tree):
        if not isinstance(stmt, ast.Import):
            continue
        for alias in stmt.names:
            if alias.name == module or (not alias.asname and alias.name.startswith(module + ".")):
                name = alias.asname or module
                if in_order and not enclosing and not dominates(index, stmt, statement, index.tree):
                    continue
                if enclosing and not _runs_on_import(index, stmt):
                    continue  # `if URLS: import requests`: a function's new client would raise NameError
                if usable(name):
                    return name, False
    if module in _LIBRARY_MODULES and not imports_unconditionally(index.tree, module):
        return None, False  # an optional or lazy import, or none: never add an unconditional one
    if usable(module) and not _binds_other(index.tree, module, module, descend=True):
        return module, True
    return None, False


def _exported_names(tree: ast.Module) -> Set[str]:
    """The names listed in the module's `__all__` (a literal list or tuple of strings, also `+=`)."""
    names: Set[str] = set()
    for stmt in tree.body:
        targets: List[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            targets = [stmt.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and stmt.value is not None:
            if isinstance(stmt.value, (ast.List, ast.Tuple)):
                names.update(
                    e.value for e in stmt.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                )
    return names


def _import_refs(index: _Index, func: ast.expr, facts: FixFacts = NO_FACTS) -> Tuple[ImportRef, ...]:
    """The module-level imports through which `func` (`fetch`, `rq.get`, `api.get`) reaches the library, and
    which the fix may remove once unused. A name code outside the module may reach stays (RULES.md "Imports"):
    one listed in `__all__`, re-exported (`from requests import get as get`), or patched by the project."""
    base = func
    while isinstance(base, ast.Attribute):
        base = base.value
    if not isinstance(base, ast.Name):
        return ()
    exported = _exported_names(index.tree)
    refs = []
    for stmt in _module_level_imports(index.tree):
        for alias in stmt.names:
            if isinstance(stmt, ast.Import):
                if (alias.asname or alias.name.split(".", 1)[0]) == base.id:
                    refs.append(ImportRef(alias.name, None, alias.asname))
            elif stmt.level == 0 and stmt.module and (alias.asname or alias.name) == base.id:
                if base.id in exported or alias.asname == alias.name:
                    continue
                if facts.is_patched(base.id, f"{stmt.module}.{alias.name}"):
                    continue
                refs.append(ImportRef(stmt.module, alias.name, alias.asname))
    return tuple(refs)


_TLS_KEYWORDS = ("verify", "cert")
_TLS_FAMILIES = frozenset({"requests", "grequests"})  # CVE-2024-35195: requests before 2.32


def _constant(expr: ast.expr) -> bool:
    """A literal (`False`, `"ca.pem"`, `("c.pem", "k.pem")`): the same value on every iteration."""
    if isinstance(expr, ast.Constant):
        return True
    return isinstance(expr, ast.Tuple) and all(_constant(e) for e in expr.elts)


def _mixes_tls(calls: Sequence[ast.Call]) -> bool:
    """Whether the loop's requests calls pass `verify=` / `cert=` with a value that may vary: differing
    between calls (a call without them uses the default), or not a literal."""
    seen: Set[Tuple[str, ...]] = set()
    passed = False
    for call in calls:
        values = {kw.arg: kw.value for kw in call.keywords if kw.arg in _TLS_KEYWORDS}
        passed = passed or bool(values)
        key = []
        for keyword in _TLS_KEYWORDS:
            value = values.get(keyword)
            if value is not None and not _constant(value):
                return True
            key.append(ast.dump(value) if value is not None else "")
        seen.add(tuple(key))
    return passed and len(seen) > 1


def report_only_reason(calls: Sequence[Tuple[str, str, ast.Call]], facts: FixFacts) -> Optional[str]:
    """Why a session shared by these calls (each `(library, library name, call)`) would surely break the
    program (RULES.md "Fix safety"), or None: a per-call `cookies=` (the jar's cookie of the same name wins),
    `verify=` / `cert=` values that vary on a requests older than 2.32 (a pooled connection ignores them), or
    a rewritten name the project patches or wraps (the mocks and wrappers would stop applying)."""
    for _, _, call in calls:
        if any(kw.arg == "cookies" for kw in call.keywords):
            return "cookies"
    tls = [call for library, _, call in calls if library in _TLS_FAMILIES]
    if not facts.requests_232 and _mixes_tls(tls):
        return "verify/cert"
    for _, qualname, call in calls:
        written = dotted_name(call.func) or ""
        # The module name itself too: `mock.patch("pkg.mod.requests")` swaps what both `requests.get` and the
        # new `requests.Session()` reach, but assertions on `requests.get` would no longer see the calls.
        base = written.split(".", 1)[0] if "." in written else ""
        inner = _INNER_NAMES.get(qualname.split(".", 1)[0], _no_inner)(qualname)
        if facts.is_patched(written, base, qualname, *inner):
            return "patched"
    return None


def reads_response_cookies(index: "_Index", call: ast.Call) -> bool:
    """Whether the program reads the cookies the server set on this response (`requests.get(u).cookies`, or
    `r = requests.get(u)` then `r.cookies` in the same scope). Through a shared session the jar sends the
    earlier cookies back, and a server that sees them sets none again: code that fetches a fresh cookie this way
    (a login, a consent or tracking cookie) gets an empty jar (report only)."""
    parent = index.parents.get(call)
    if isinstance(parent, ast.Attribute) and parent.attr == "cookies":
        return True
    names: Set[str] = set()
    if isinstance(parent, ast.Assign) and parent.value is call:
        names = {t.id for t in parent.targets if isinstance(t, ast.Name)}
    elif isinstance(parent, ast.AnnAssign) and parent.value is call and isinstance(parent.target, ast.Name):
        names = {parent.target.id}
    elif isinstance(parent, ast.withitem) and isinstance(parent.optional_vars, ast.Name):
        names = {parent.optional_vars.id}
    if not names:
        return False
    return any(
        isinstance(node, ast.Attribute) and node.attr == "cookies" and isinstance(node.value, ast.Name)
        and node.value.id in names
        for node in ast.walk(index.scope_of(call))
    )


def _no_inner(qualname: str) -> Tuple[str, ...]:
    return ()


def _requests_inner(qualname: str) -> Tuple[str, ...]:
    """What `requests.get` runs on its way that a session bypasses (`requests.api.get` / `request`, the
    `Session` class it builds), and the session method the fix calls instead (`Session.get`, which the
    original never called: a patch of it would start to apply)."""
    library, _, verb = qualname.rpartition(".")
    return (f"{library}.api.{verb}", f"{library}.api.request", f"{library}.sessions.Session",
            f"{library}.Session.{verb}", f"{library}.sessions.Session.{verb}")


def _httpx_inner(qualname: str) -> Tuple[str, ...]:
    library, _, verb = qualname.rpartition(".")
    return (f"{library}._api.{verb}", f"{library}._api.request", f"{library}._api.Client",
            f"{library}.Client.{verb}")


# The library's own functions an unpooled call goes through: a patch of one applies before the fix, not after.
_INNER_NAMES = {"requests": _requests_inner, "niquests": _requests_inner, "httpx": _httpx_inner, "httpx2": _httpx_inner}


def looked_up_by_name(qualname: str, call: Optional[ast.Call]) -> bool:
    """A function the program looks up by name, `getattr(requests, m)(u)` (or a name bound to that lookup), or
    `getattr(requests, "get")(u)`: report only (RULES.md "Fix safety"). `getattr(session, m)` would fail where
    `m` names an attribute of the module that a session lacks; the literal form is left as written too, so one
    rule covers every lookup (a name bound to `getattr(requests, "get")` is an alias like any other)."""
    if qualname.rpartition(".")[2] == ANY_ATTRIBUTE:
        return True
    func = call.func if call is not None else None
    return isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr"


def _arguments_fit(library: str, verb: str, call: ast.Call) -> bool:
    """Whether the session method accepts the call's arguments as they are (or with `params=` for get)."""
    if any(isinstance(arg, ast.Starred) for arg in call.args):
        return False
    keywords = {kw.arg for kw in call.keywords}
    if library in ("requests", "niquests"):
        return len(call.args) <= _REQUESTS_POSITIONAL.get(verb, 1)
    if library == "grequests":
        return None not in keywords and "session" not in keywords
    if library in ("httpx", "httpx2"):
        positional = _HTTPX_POSITIONAL.get(verb, 1)
        return None not in keywords and not keywords & _HTTPX_CLIENT_KEYWORDS and len(call.args) <= positional
    if library == "aiohttp":
        return None not in keywords and not keywords & _AIOHTTP_SESSION_KEYWORDS and len(call.args) <= 2
    return False


def _consumed_within(index: _Index, call: ast.Call, statement: ast.stmt) -> bool:
    """Every generator expression between the call and its statement is consumed before the statement ends
    (`list(...)`, `"".join(...)`, a `for` iterable), so the session is not closed under a lazy generator."""
    node: ast.AST = call
    while node is not statement:
        parent = index.parents.get(node)
        if parent is None:
            return False
        if isinstance(node, ast.GeneratorExp):
            if isinstance(parent, ast.Call) and node in parent.args:
                func = parent.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name not in _EAGER_CONSUMERS:
                    return False
            elif isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is node:
                pass
            elif isinstance(parent, ast.comprehension) and parent.iter is node:
                pass  # the enclosing comprehension is checked in turn
            else:
                return False
        node = parent
    return True


def _block_of(index: _Index, statement: ast.stmt) -> Optional[List[ast.stmt]]:
    """The statement list `statement` sits in (a body, orelse, finalbody or handler body)."""
    parent = index.parents.get(statement)
    if parent is None:
        return None
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and statement in block:
            return block
    return None


def _own_lines(lines: Sequence[str], block: List[ast.stmt], first: int, last: int) -> bool:
    """Whether statements first..last of `block` share no line with another statement or a block header,
    so the run can be re-indented as whole lines."""
    start, end = block[first], block[last]
    prefix = lines[start.lineno - 1].encode("utf-8")[: start.col_offset] if start.lineno <= len(lines) else b""
    if prefix.strip():
        return False  # `if x: pages = ...` or `a = 1; pages = ...`
    following = block[last + 1] if last + 1 < len(block) else None
    return following is None or following.lineno > (end.end_lineno or end.lineno)


def _consuming_use(index: _Index, name: ast.Name) -> bool:
    """Whether this read of a generator exhausts it before its statement ends (and does not hand it on)."""
    parent = index.parents.get(name)
    if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is name:
        return True
    if isinstance(parent, ast.comprehension) and parent.iter is name:
        # A list/set/dict comprehension runs at once; a generator expression over it would be lazy again.
        holder = index.parents.get(parent)
        return isinstance(holder, (ast.ListComp, ast.SetComp, ast.DictComp)) and holder.generators[0] is parent
    if isinstance(parent, ast.Call) and parent.args == [name] and not parent.keywords:
        func = parent.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return called in _EAGER_CONSUMERS
    return False


def _generator_extent(index: _Index, lines: Sequence[str], call: ast.Call, statement: ast.stmt) -> Optional[ast.stmt]:
    """For `pages = (requests.get(u) for u in urls)` consumed later in the same block, the last statement of
    that block using `pages`; None where the generator could outlive the block or escape it.

    Every other occurrence of the name in the scope (nested scopes included) must be a consuming read
    (`for p in pages`, `list(pages)`, `"".join(pages)`, ...) in a later statement of the same block."""
    if not isinstance(statement, ast.Assign) or not isinstance(statement.value, ast.GeneratorExp):
        return None
    if len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name):
        return None
    if not _consumed_within(index, call, statement.value):
        return None  # a lazier generator inside the assigned one
    target = statement.targets[0]
    block = _block_of(index, statement)
    scope = index.scope_of(statement)
    if block is None:
        return None
    first = block.index(statement)
    last = -1
    for node in ast.walk(scope):
        if node is target:
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)) and target.id in node.names:
            return None
        if isinstance(node, ast.arg) and node.arg == target.id:
            return None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == target.id:
            return None
        if not isinstance(node, ast.Name) or node.id != target.id:
            continue
        if not isinstance(node.ctx, ast.Load) or not _consuming_use(index, node) or index.scope_of(node) is not scope:
            return None
        holder: ast.AST = node
        while index.parents.get(holder) is not None and not (isinstance(holder, ast.stmt) and holder in block):
            holder = index.parents[holder]
        if not (isinstance(holder, ast.stmt) and holder in block) or block.index(holder) <= first:
            return None
        last = max(last, block.index(holder))
    if last < 0 or not _own_lines(lines, block, first, last):
        return None
    return block[last]


def identifiers_in(node: ast.AST) -> Set[str]:
    """Every identifier bound or read anywhere inside `node` (nested scopes included): what a new name must avoid."""
    found: Set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.arg):
            found.add(sub.arg)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(sub.name)
        elif isinstance(sub, ast.alias):
            found.add(sub.asname or sub.name.split(".", 1)[0])
        elif isinstance(sub, (ast.Global, ast.Nonlocal)):
            found.update(sub.names)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            found.add(sub.name)
        elif isinstance(sub, (ast.MatchAs, ast.MatchStar)) if hasattr(ast, "MatchAs") else False:
            if sub.name:  # type: ignore[attr-defined]
                found.add(sub.name)  # type: ignore[attr-defined]
        elif hasattr(ast, "MatchMapping") and isinstance(sub, ast.MatchMapping) and sub.rest:
            found.add(sub.rest)
    return found


def free_name(taken: Set[str], preferred: str) -> str:
    """`preferred` if unused, else `http_<preferred>`, else `<preferred>_2`, `<preferred>_3`, ..."""
    if preferred not in taken:
        return preferred
    if f"http_{preferred}" not in taken:
        return f"http_{preferred}"
    number = 2
    while f"{preferred}_{number}" in taken:
        number += 1
    return f"{preferred}_{number}"


def _contains(outer: Span, inner: Span) -> bool:
    starts_before = (outer[0], outer[1]) <= (inner[0], inner[1])
    return outer != inner and starts_before and (inner[2], inner[3]) <= (outer[2], outer[3])


def plan_loop_wraps(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str],
    facts: FixFacts = NO_FACTS,
) -> List[LoopWrap]:
    """The loops to wrap this round, one library per loop; loops nested in another planned loop wait a round."""
    index = _Index.of(tree)
    groups: Dict[Tuple[Tuple[int, int, int, int], str], List[Tuple[Finding, ast.Call]]] = {}
    extents: Dict[Tuple[int, int, int, int], ast.stmt] = {}
    # Every reported call of each loop, fixable or not: a per-call cookie or TLS setting anywhere in the loop
    # decides whether one session may serve it.
    in_loop: Dict[Tuple[int, int, int, int], List[Tuple[str, str, ast.Call]]] = {}
    for finding in findings:
        details = finding.details
        if finding.code != "HTP101" or not details or details.get("loop") is None:
            continue
        found = index.calls.get((finding.line, finding.col, finding.end_line, finding.end_col))
        if found is not None:
            entry = (str(details.get("library")), str(details.get("qualname", "")), found)
            in_loop.setdefault(tuple(details["loop"]), []).append(entry)  # type: ignore[arg-type]
    for finding in findings:
        details = finding.details
        if finding.code != "HTP101" or not details:
            continue
        library = details.get("library")
        loop = details.get("loop")
        verb = details.get("verb", "")
        if details.get("hot"):
            continue  # a session in a hot function would be HTP104: the hot function's fix (HTP102's) or none
        # A call that may run after the statement ends (deferred, handed on, mapped) is HTP102's fix.
        later = details.get("deferred") or details.get("passed") or details.get("mapping")
        if library not in _CONSTRUCTORS or loop is None or later:
            continue
        if unpooled_family(str(details.get("qualname", ""))) != library:
            continue  # an in-house call from `unpooled-calls`: no known session method to call instead
        if library == "aiohttp" and not details.get("async"):
            continue  # `async with` needs an async def
        call = index.calls.get((finding.line, finding.col, finding.end_line, finding.end_col))
        statement = index.statements.get(tuple(loop))  # type: ignore[arg-type]
        if call is None or statement is None or not _arguments_fit(library, verb, call):
            continue
        if looked_up_by_name(str(details.get("qualname", "")), call):
            continue
        if isinstance(index.scope_of(statement), (ast.ClassDef, ast.Lambda)):
            continue  # a class body's comprehensions cannot see a name the class body binds
        if not _consumed_within(index, call, statement):
            # `pages = (requests.get(u) for u in urls)` read later: the `with` must last through the last read.
            extent = _generator_extent(index, lines, call, statement)
            if extent is None:
                continue
            extents[tuple(loop)] = extent  # type: ignore[index]
        groups.setdefault((tuple(loop), library), []).append((finding, call))  # type: ignore[arg-type]

    # One library per loop a round (the most calls first), and no loop inside another planned loop.
    chosen: Dict[Tuple[int, int, int, int], str] = {}
    for (loop, library), members in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])):
        chosen.setdefault(loop, library)
    reach = {loop: _extended(loop, extents.get(loop)) for loop in chosen}
    outermost = [loop for loop in chosen if not any(_contains(reach[other], reach[loop]) for other in chosen)]

    wraps = []
    for loop in sorted(outermost):
        library = chosen[loop]
        statement = index.statements[loop]
        if report_only_reason(in_loop.get(loop, []), facts) is not None:
            continue
        if any(reads_response_cookies(index, call) for _, _, call in in_loop.get(loop, [])):
            continue
        module, class_name = _CONSTRUCTORS[library]
        module_name, must_import = _module_binding(index, module, statement, in_order=True)
        if module_name is None:
            continue
        # A function's new local must not hide a global it reads; a module-level one must not clobber any name.
        scope = index.scope_of(statement)
        taken = index.names_in(scope) | {module_name}
        name = free_name(taken, FAMILIES[library].variable)
        edits = []
        for finding, call in groups[(loop, library)]:
            verb = str(finding.details.get("verb"))
            edits.append(
                CallEdit(
                    char_span(lines, (finding.line, finding.col, finding.end_line, finding.end_col)),
                    verb,
                    library == "grequests",
                    library in ("requests", "niquests") and verb == "get" and len(call.args) == 2,
                    () if library == "grequests" else _import_refs(index, call.func, facts),
                )
            )
        wraps.append(
            LoopWrap(
                char_span(lines, loop),
                library,
                module_name,
                module if must_import else None,
                class_name,
                name,
                library == "aiohttp",
                tuple(edits),
                char_span(lines, _span(extents[loop])) if loop in extents else None,
            )
        )
    return wraps


def _extended(loop: Tuple[int, int, int, int], through: Optional[ast.stmt]) -> Tuple[int, int, int, int]:
    """The loop statement's span, stretched to the end of the last statement the `with` also holds."""
    if through is None:
        return loop
    end = _span(through)
    return (loop[0], loop[1], end[2], end[3])


def plan_shared_sessions(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str],
                         facts: FixFacts = NO_FACTS) -> List[object]:
    """HTP101's calls that a session around the loop cannot serve, planned as HTP102's module-level session.

    Those are the calls that may run after their statement ends (in a `lambda` or nested `def`, handed to a
    pool or thread) and the loops of hot functions, where a session around the loop would be created per call
    (HTP104). A site that must stay report-only (RULES.md "Fix safety") is left out: a per-call `cookies=`,
    any `verify=` / `cert=` on a requests older than 2.32 (the shared pool serves every caller), a patched name.
    """
    from .htp102_sites import plan_shared_clients

    index = _Index.of(tree)
    routed: List[Finding] = []
    for finding in findings:
        details = finding.details or {}
        if finding.code != "HTP101":
            continue
        later = details.get("deferred") or details.get("passed") or details.get("mapping")
        if not later and not (details.get("hot") and details.get("loop") is not None):
            continue
        library, qualname = str(details.get("library")), str(details.get("qualname", ""))
        if details.get("async") and library != "aiohttp":
            # A blocking call in an `async def` is HTP403 too; through a module-level session it would no
            # longer be reported, and a fix never hides another rule's finding.
            continue
        call = index.calls.get((finding.line, finding.col, finding.end_line, finding.end_col))
        if call is not None:
            if report_only_reason([(library, qualname, call)], facts) is not None or reads_response_cookies(index, call):
                continue
            if library in _TLS_FAMILIES and not facts.requests_232 and any(
                kw.arg in _TLS_KEYWORDS for kw in call.keywords
            ):
                continue
        else:
            written = ""
            if finding.line == finding.end_line and 0 < finding.line <= len(lines):
                line = lines[finding.line - 1].encode("utf-8")
                written = line[finding.col:finding.end_col].decode("utf-8", "replace")
            if facts.is_patched(written.strip(), qualname):
                continue
        if not later:
            # HTP102's planner takes HTP101's calls that run later; a hot function's loop joins them.
            finding = finding._replace(details={**details, "deferred": True})
        routed.append(finding)
    return list(plan_shared_clients(routed, tree, lines, facts))
