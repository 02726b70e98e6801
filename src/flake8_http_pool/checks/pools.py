"""HTP301: thread pools with more workers than the shared requests session keeps connections."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, Iterator, List, Optional, Set, Tuple

from ..bindings import ASSIGN, WITH, Binding, FunctionInfo, Scope, callee_name, lookup
from ..finding import Hit
from ..walk import Ctx
from .connections import client_constructions, span

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis import Analysis

DEFAULT_POOL_MAXSIZE = 10  # requests.adapters.DEFAULT_POOLSIZE
_SHARED_CLIENTS = frozenset({"requests.Session", "requests.session", "niquests.Session"})
_POOL_METHODS = frozenset(
    {"map", "submit", "imap", "imap_unordered", "starmap", "map_async", "apply_async", "starmap_async"}
)
_FUTURES_SESSION = "requests_futures.sessions.FuturesSession"
# FuturesSession(executor=None, max_workers=8, session=None, adapter_kwargs=None)
_FUTURES_PARAMS = ("executor", "max_workers", "session", "adapter_kwargs")


def _literal_int(expr: Optional[ast.expr]) -> Optional[int]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    return None


def _argument(call: ast.Call, index: int, name: str) -> Optional[ast.expr]:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if any(isinstance(arg, ast.Starred) for arg in call.args[: index + 1]):
        return None
    return call.args[index] if len(call.args) > index else None


def _workers(call: ast.Call, qual: str) -> Optional[int]:
    """The literal number of threads a pool constructor asks for, None when unknown."""
    name = "max_workers" if qual.endswith("ThreadPoolExecutor") else "processes"
    return _literal_int(_argument(call, 0, name))


def _frame(scope: Scope) -> Scope:
    """The function (or module) scope whose code `scope` belongs to."""
    while scope.kind in ("comprehension", "lambda") and scope.parent is not None:
        scope = scope.parent
    return scope


def _bound_to(analysis: "Analysis", call: ast.Call) -> List[ast.Name]:
    """Names anywhere in the module that read a binding made from `call` (`x = call`, `with call as x`)."""
    holder = analysis.parent(call)
    names: List[str] = []
    if isinstance(holder, ast.withitem) and isinstance(holder.optional_vars, ast.Name):
        names.append(holder.optional_vars.id)
    elif isinstance(holder, (ast.Assign, ast.AnnAssign)) and holder.value is call:
        targets = holder.targets if isinstance(holder, ast.Assign) else [holder.target]
        names.extend(t.id for t in targets if isinstance(t, ast.Name))
    out: List[ast.Name] = []
    for name in names:
        for use in analysis.name_uses(name):
            # Comprehensions and nested defs read it too (`[ex.submit(f, u) for u in urls]`).
            binding = lookup(name, use.ctx.scope, (use.node.lineno, use.node.col_offset))
            if binding is not None and binding.kind in (ASSIGN, WITH) and binding.value is call:
                out.append(use.node)
    return out


def _handed_calls(analysis: "Analysis", receiver: ast.expr) -> Optional[Tuple[ast.Call, ast.expr]]:
    """The call that hands work to the pool `receiver`, and the callable handed: `ex.map(f, xs)`,
    `ex.submit(f, x)`, `loop.run_in_executor(ex, f, x)`."""
    parent = analysis.parent(receiver)
    if isinstance(parent, ast.Attribute) and parent.value is receiver and parent.attr in _POOL_METHODS:
        call = analysis.parent(parent)
        if isinstance(call, ast.Call) and call.func is parent and call.args:
            return call, call.args[0]
    if isinstance(parent, ast.Call) and len(parent.args) > 1 and parent.args[0] is receiver:
        func = parent.func
        if isinstance(func, ast.Attribute) and func.attr == "run_in_executor":
            return parent, parent.args[1]
    return None


def _unwrap_partial(expr: ast.expr) -> Tuple[ast.expr, List[ast.expr]]:
    """`functools.partial(f, a, b=c)` hands `f` on with `a` and `c` bound."""
    if isinstance(expr, ast.Call) and expr.args and callee_name(expr.func) == "partial":
        return expr.args[0], [*expr.args[1:], *(kw.value for kw in expr.keywords)]
    return expr, []


class _Sessions:
    """Finds the shared sessions a handed callable uses, and their pool sizes, each computed once."""

    def __init__(self, analysis: "Analysis") -> None:
        self.analysis = analysis
        self._sizes: Dict[int, Optional[int]] = {}
        self.qual: Dict[int, str] = {}  # the constructor of each session found, for the message
        self._names_in: Optional[Dict[int, List[Tuple[ast.Name, Scope]]]] = None

    def _names_by_frame(self) -> Dict[int, List[Tuple[ast.Name, Scope]]]:
        """Names read in each def / lambda, including those of comprehensions and lambdas written inside it."""
        if self._names_in is None:
            index: Dict[int, List[Tuple[ast.Name, Scope]]] = {}
            for use in self.analysis.facts.names:
                scope: Optional[Scope] = use.ctx.scope
                while scope is not None and scope.kind != "module":
                    if scope.kind in ("function", "lambda"):
                        index.setdefault(id(scope.node), []).append((use.node, use.ctx.scope))
                    if scope.kind == "function":
                        break  # a nested def is its own callable; its names are not the outer def's
                    scope = scope.parent
            self._names_in = index
        return self._names_in

    def session_of(self, expr: ast.expr, scope: Scope, allowed: Optional[Set[int]]) -> Optional[Binding]:
        """The requests session `expr` names, when bound (assigned, `with`) in one of the `allowed` scopes
        (any scope when None)."""
        if not isinstance(expr, ast.Name):
            return None
        binding = lookup(expr.id, scope, (expr.lineno, expr.col_offset))
        if binding is None or binding.kind not in (ASSIGN, WITH):
            return None
        if allowed is not None and id(binding.scope) not in allowed:
            return None  # a parameter's pool size is whatever its caller mounted: unknown
        meaning = self.analysis.meaning(expr, scope)
        if meaning is None or meaning.kind != "client" or meaning.qual not in _SHARED_CLIENTS:
            return None
        return binding

    def used_by(self, handed: ast.expr, ctx: Ctx, extra: List[ast.expr]) -> List[Tuple[Binding, str]]:
        """Shared requests sessions the handed callable uses: in its body, as the bound method itself
        (`ex.map(session.get, urls)`), or handed to it as an argument (`ex.submit(fetch, session, u)`)."""
        analysis = self.analysis
        allowed = {id(analysis.facts.module_scope), id(_frame(ctx.scope))}
        target, bound = _unwrap_partial(handed)
        found: List[Tuple[Binding, str]] = []

        def add(name: ast.expr, scope: Scope) -> None:
            binding = self.session_of(name, scope, allowed)
            if binding is not None and all(b is not binding for b, _ in found):
                found.append((binding, name.id))  # type: ignore[attr-defined]
                self.qual[id(binding)] = self.analysis.meaning(name, scope).qual  # type: ignore[union-attr]

        for arg in [*bound, *extra]:
            add(arg, ctx.scope)
        if isinstance(target, ast.Attribute):
            meaning = analysis.meaning(target, ctx.scope)
            if meaning is not None and meaning.kind == "method":
                add(target.value, ctx.scope)
                return found
        func: Optional[FunctionInfo] = analysis.function_target(target, ctx)
        if func is not None:
            node: ast.AST = func.node
        elif isinstance(target, ast.Lambda):
            node = target
        else:
            return found
        for use, scope in self._names_by_frame().get(id(node), ()):
            add(use, scope)
        return found

    def size(self, binding: Binding) -> Optional[int]:
        key = id(binding)
        if key not in self._sizes:
            self._sizes[key] = _pool_size(self.analysis, binding.value)
        return self._sizes[key]


def _adapter_size(analysis: "Analysis", adapter: ast.expr, scope: Scope) -> Optional[int]:
    """An `HTTPAdapter(...)`'s literal `pool_maxsize` (default 10); None for anything else."""
    if isinstance(adapter, ast.Name):
        binding = lookup(adapter.id, scope, (adapter.lineno, adapter.col_offset))
        if binding is None or binding.kind != ASSIGN or not isinstance(binding.value, ast.expr):
            return None
        adapter = binding.value
    if not isinstance(adapter, ast.Call):
        return None
    if not callee_name(adapter.func).endswith("HTTPAdapter"):
        return None  # a subclass may size itself: unknown
    if any(kw.arg is None for kw in adapter.keywords):
        return None
    size = _argument(adapter, 1, "pool_maxsize")
    if size is None:
        return DEFAULT_POOL_MAXSIZE
    return _literal_int(size)


def _pool_size(analysis: "Analysis", value: object) -> Optional[int]:
    """Connections per host of the session bound from `value`: the largest mounted adapter's, else the default.
    None when an adapter's size is unknown."""
    sizes: List[int] = []
    for call, ctx in analysis.facts.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "mount" and isinstance(func.value, ast.Name)):
            continue
        binding = lookup(func.value.id, ctx.scope, (func.value.lineno, func.value.col_offset))
        if binding is None or binding.value is not value:
            continue
        adapter = _argument(call, 1, "adapter")
        if adapter is None:
            return None
        size = _adapter_size(analysis, adapter, ctx.scope)
        if size is None:
            return None
        sizes.append(size)
    return max(sizes) if sizes else DEFAULT_POOL_MAXSIZE


def pool_smaller_than_workers(analysis: "Analysis") -> Iterator[Hit]:
    """HTP301: a thread pool (or FuturesSession) with more workers than its shared session's connection pool."""
    sessions = _Sessions(analysis)
    for call, ctx in analysis.facts.calls:
        meaning = analysis.meaning(call, ctx.scope)
        if meaning is None or meaning.kind != "pool" or meaning.node is not call:
            continue
        workers = _workers(call, meaning.qual)
        if workers is None:
            continue
        hit = _thread_pool_hit(analysis, sessions, call, ctx, meaning.qual, workers)
        if hit is not None:
            yield hit
    for call, qual, ctx in client_constructions(analysis):
        if qual == _FUTURES_SESSION:
            hit = _futures_session_hit(analysis, sessions, call, ctx)
            if hit is not None:
                yield hit


def _thread_pool_hit(
    analysis: "Analysis", sessions: _Sessions, call: ast.Call, ctx: Ctx, qual: str, workers: int
) -> Optional[Hit]:
    for receiver in [call, *_bound_to(analysis, call)]:
        handed = _handed_calls(analysis, receiver)
        if handed is None:
            continue
        hand_call, target = handed
        # `submit(fetch, session, u)`: the arguments after the callable reach it too (not `map`'s iterables).
        extra = list(hand_call.args[1:]) if callee_name(hand_call.func) in ("submit", "apply_async") else []
        for binding, name in sessions.used_by(target, ctx, extra):
            size = sessions.size(binding)
            if size is not None and workers > size:
                client = sessions.qual.get(id(binding), "requests.Session")
                client = "requests.Session" if client == "requests.session" else client
                return Hit(
                    call,
                    {"pool": _pool_name(qual), "workers": workers, "client": client, "size": size},
                    {
                        "workers": workers,
                        "size": size,
                        "pool": qual,
                        "session": binding.pos,
                        "session_name": name,
                        "client": client,  # the fix imports this library's HTTPAdapter
                        "session_scope": "module" if binding.scope.kind == "module" else "function",
                        "session_statement": _statement_span(analysis, binding),
                        "handed": span(hand_call),
                    },
                )
    return None


def _pool_name(qual: str) -> str:
    """`ThreadPoolExecutor`, `ThreadPool`; a bare `Pool` is named with its module, or it reads as a process pool."""
    return qual if qual == "multiprocessing.dummy.Pool" else qual.rsplit(".", 1)[-1]


def _statement_span(analysis: "Analysis", binding: Binding) -> Optional[Tuple[int, int, int, int]]:
    """The statement that binds the session (the fix mounts the adapter right after it)."""
    node = binding.value if isinstance(binding.value, ast.AST) else None
    while node is not None and not isinstance(node, ast.stmt):
        node = analysis.parent(node)
    return span(node)


def _futures_session_hit(analysis: "Analysis", sessions: _Sessions, call: ast.Call, ctx: Ctx) -> Optional[Hit]:
    """`FuturesSession(max_workers=N)` with N above the pool of the session its requests go through."""
    args = {name: _argument(call, index, name) for index, name in enumerate(_FUTURES_PARAMS)}
    if any(kw.arg is None for kw in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if args["adapter_kwargs"] is not None and not _is_none(args["adapter_kwargs"]):
        return None  # sized by its own adapter
    executor = args["executor"]
    if executor is not None and not _is_none(executor):
        workers = _executor_workers(analysis, executor, ctx)
    else:
        workers = _literal_int(args["max_workers"]) if args["max_workers"] is not None else None
    if workers is None:
        return None
    session = args["session"]
    if session is not None and not _is_none(session):
        binding = sessions.session_of(session, ctx.scope, None)
        if binding is None:
            return None
        size = sessions.size(binding)
    else:
        size = _pool_size(analysis, call)
    if size is None or workers <= size:
        return None
    return Hit(
        call,
        {"pool": "FuturesSession", "workers": workers, "client": "session", "size": size},
        {"workers": workers, "size": size, "futures_session": True, "session_statement": _statement_of(analysis, call)},
    )


def _statement_of(analysis: "Analysis", node: ast.AST) -> Optional[Tuple[int, int, int, int]]:
    current: Optional[ast.AST] = node
    while current is not None and not isinstance(current, ast.stmt):
        current = analysis.parent(current)
    return span(current)


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def _executor_workers(analysis: "Analysis", executor: ast.expr, ctx: Ctx) -> Optional[int]:
    """`executor=ThreadPoolExecutor(max_workers=N)` (inline or by a name): N."""
    if isinstance(executor, ast.Name):
        binding = lookup(executor.id, ctx.scope, (executor.lineno, executor.col_offset))
        if binding is None or binding.kind not in (ASSIGN, WITH) or not isinstance(binding.value, ast.expr):
            return None
        executor = binding.value
    meaning = analysis.meaning(executor, ctx.scope) if isinstance(executor, ast.Call) else None
    if meaning is None or meaning.kind != "pool" or not isinstance(executor, ast.Call):
        return None
    return _workers(executor, meaning.qual)
