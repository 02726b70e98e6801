"""HTP301: thread pools with more workers than the shared requests session keeps connections."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator, List, Optional, Set

from ..bindings import ASSIGN, WITH, Binding, FunctionInfo, lookup
from ..finding import Hit
from ..walk import Ctx
from .connections import client_constructions

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis import Analysis

DEFAULT_POOL_MAXSIZE = 10  # requests.adapters.DEFAULT_POOLSIZE
_SHARED_CLIENTS = frozenset({"requests.Session", "requests.session", "niquests.Session"})
_POOL_METHODS = frozenset({"map", "submit", "imap", "imap_unordered", "starmap", "map_async", "apply_async", "starmap_async"})


def _literal_int(expr: Optional[ast.expr]) -> Optional[int]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    return None


def _argument(call: ast.Call, index: int, name: str) -> Optional[ast.expr]:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    return call.args[index] if len(call.args) > index else None


def _workers(call: ast.Call, qual: str) -> Optional[int]:
    name = "max_workers" if qual.endswith("ThreadPoolExecutor") else "processes"
    return _literal_int(_argument(call, 0, name))


def _pool_receivers(analysis: "Analysis", call: ast.Call, ctx: Ctx) -> List[ast.expr]:
    """Expressions that evaluate to the pool: the constructor call, or names bound to it."""
    out: List[ast.expr] = [call]
    holder = analysis.parent(call)
    names: List[str] = []
    if isinstance(holder, ast.withitem) and isinstance(holder.optional_vars, ast.Name):
        names.append(holder.optional_vars.id)
    elif isinstance(holder, ast.Assign) and holder.value is call:
        names.extend(t.id for t in holder.targets if isinstance(t, ast.Name))
    for name in names:
        for use in analysis.name_uses(name):
            if use.ctx.scope is not ctx.scope:
                continue
            binding = lookup(name, use.ctx.scope, (use.node.lineno, use.node.col_offset))
            if binding is not None and binding.kind in (ASSIGN, WITH) and binding.value is call:
                out.append(use.node)
    return out


def _handed(analysis: "Analysis", receiver: ast.expr) -> Optional[ast.expr]:
    parent = analysis.parent(receiver)
    if isinstance(parent, ast.Attribute) and parent.attr in _POOL_METHODS:
        call = analysis.parent(parent)
        if isinstance(call, ast.Call) and call.func is parent and call.args:
            return call.args[0]
    return None


def _shared_sessions(analysis: "Analysis", handed: ast.expr, ctx: Ctx) -> List[Binding]:
    """requests sessions bound at module level or in the pool's function that the handed callable uses."""
    allowed = {id(analysis.facts.module_scope), id(ctx.scope)}
    scope_nodes: Set[int] = set()
    func: Optional[FunctionInfo] = analysis.function_target(handed, ctx)
    if func is not None:
        scope_nodes.add(id(func.scope))
    elif isinstance(handed, ast.Lambda):
        scope_nodes.add(id(handed))
    else:
        return []
    found: List[Binding] = []
    for use in analysis.facts.names:
        scope = use.ctx.scope
        inside = False
        probe = scope
        while probe is not None:
            if id(probe) in scope_nodes or id(probe.node) in scope_nodes:
                inside = True
                break
            probe = probe.parent
        if not inside:
            continue
        binding = lookup(use.node.id, scope, (use.node.lineno, use.node.col_offset))
        if binding is None or id(binding.scope) not in allowed:
            continue
        meaning = analysis.meaning(use.node, scope)
        if meaning is not None and meaning.kind == "client" and meaning.qual in _SHARED_CLIENTS:
            if binding not in found:
                found.append(binding)
    return found


def _adapter_size(analysis: "Analysis", adapter: ast.expr, scope) -> Optional[int]:
    if isinstance(adapter, ast.Name):
        binding = lookup(adapter.id, scope, (adapter.lineno, adapter.col_offset))
        if binding is None or binding.kind != ASSIGN or not isinstance(binding.value, ast.expr):
            return None
        adapter = binding.value
    if not isinstance(adapter, ast.Call):
        return None
    func = adapter.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if not name.endswith("HTTPAdapter"):
        return None
    size = _argument(adapter, 1, "pool_maxsize")
    if size is None:
        return DEFAULT_POOL_MAXSIZE
    return _literal_int(size)


def _pool_size(analysis: "Analysis", binding: Binding) -> Optional[int]:
    """The session's connections per host: the largest mounted adapter's, else the default. None if unknown."""
    sizes: List[int] = []
    for call, ctx in analysis.facts.calls:
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "mount" and isinstance(func.value, ast.Name)):
            continue
        if lookup(func.value.id, ctx.scope, (func.value.lineno, func.value.col_offset)) is not binding:
            continue
        adapter = _argument(call, 1, "adapter")
        if adapter is None:
            continue
        size = _adapter_size(analysis, adapter, ctx.scope)
        if size is None:
            return None
        sizes.append(size)
    return max(sizes) if sizes else DEFAULT_POOL_MAXSIZE


def pool_smaller_than_workers(analysis: "Analysis") -> Iterator[Hit]:
    for call, ctx in analysis.facts.calls:
        meaning = analysis.meaning(call, ctx.scope)
        if meaning is None or meaning.kind != "pool":
            continue
        workers = _workers(call, meaning.qual)
        if workers is None:
            continue
        for receiver in _pool_receivers(analysis, call, ctx):
            handed = _handed(analysis, receiver)
            if handed is None:
                continue
            hit = None
            for binding in _shared_sessions(analysis, handed, ctx):
                size = _pool_size(analysis, binding)
                if size is not None and workers > size:
                    hit = Hit(
                        call,
                        {"pool": meaning.qual.rsplit(".", 1)[-1], "workers": workers, "client": "requests.Session", "size": size},
                        {"workers": workers, "size": size, "session": binding.pos},
                    )
                    break
            if hit is not None:
                yield hit
                break
    for call, qual, ctx in client_constructions(analysis):
        if not qual.endswith("FuturesSession"):
            continue
        workers = _literal_int(_argument(call, 1, "max_workers"))
        if workers is None or workers <= DEFAULT_POOL_MAXSIZE:
            continue
        if any(kw.arg in ("adapter_kwargs", "executor", None) for kw in call.keywords) or len(call.args) > 0:
            continue
        if _mounted(analysis, call):
            continue
        yield Hit(
            call,
            {"pool": "FuturesSession", "workers": workers, "client": "session", "size": DEFAULT_POOL_MAXSIZE},
            {"workers": workers, "size": DEFAULT_POOL_MAXSIZE, "futures_session": True},
        )


def _mounted(analysis: "Analysis", call: ast.Call) -> bool:
    holder = analysis.parent(call)
    names = []
    if isinstance(holder, ast.withitem) and isinstance(holder.optional_vars, ast.Name):
        names.append(holder.optional_vars.id)
    elif isinstance(holder, ast.Assign):
        names.extend(t.id for t in holder.targets if isinstance(t, ast.Name))
    for site_call, ctx in analysis.facts.calls:
        func = site_call.func
        if isinstance(func, ast.Attribute) and func.attr == "mount" and isinstance(func.value, ast.Name):
            if func.value.id in names:
                return True
    return False
