"""HTP101-HTP104: connections thrown away by unpooled calls, and clients made per iteration or per call."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple

from ..bindings import ASSIGN, WITH, FunctionInfo, lookup
from ..finding import Hit
from ..libraries import CLIENT_CONSTRUCTORS, FAMILIES
from ..walk import CallSite, Ctx

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis import Analysis, UnpooledSite

_CACHE_DECORATORS = frozenset({"cache", "lru_cache", "cached_property", "cached"})
_CONTAINER_METHODS = frozenset({"append", "add", "insert", "extend", "setdefault", "put", "put_nowait", "update"})


def span(node: Optional[ast.AST]) -> Optional[Tuple[int, int, int, int]]:
    if node is None:
        return None
    return (node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0)  # type: ignore[attr-defined]


def _remedy(family: str, verb: str) -> str:
    info = FAMILIES[family]
    if family == "grequests":
        return "create one requests.Session() and pass session=session"
    if family == "urllib.request":
        return "send them through one urllib3.PoolManager() (or requests.Session())"
    if family == "aiohttp":
        return f"open one aiohttp.ClientSession() around them and call session.{verb}()"
    return f"create one {info.client}() around them and call {info.variable}.{verb}()"


def _unpooled_fields(site: "UnpooledSite", where: str) -> Dict[str, Any]:
    verb = site.qual.rsplit(".", 1)[-1]
    if site.family == "urllib.request":
        verb = "request"
    return {"call": site.qual, "where": where, "remedy": _remedy(site.family, verb), "client": FAMILIES[site.family].client}


def _unpooled_details(analysis: "Analysis", site: "UnpooledSite") -> Dict[str, Any]:
    info = FAMILIES[site.family]
    return {
        "library": site.family,
        "qualname": site.qual,
        "verb": site.qual.rsplit(".", 1)[-1],
        "client": info.client,
        "variable": info.variable,
        "async": site.ctx.async_body,
        "function": site.ctx.func.qualname if site.ctx.func is not None else None,
        "deferred": site.ctx.deferred,
        "passed": site.passed_to is not None,
        "mapping": site.mapping,
        "loop": span(analysis.outermost_loop_statement(site.ctx, site.node)),
    }


def unpooled_call_in_loop(analysis: "Analysis") -> Iterator[Hit]:
    for site in analysis.unpooled_sites():
        if site.mapping:
            where = "mapped over items"
        elif analysis.in_loop(site.ctx, site.node):
            where = "in a loop" if site.passed_to is None else "handed to a call in a loop"
        else:
            continue
        yield Hit(site.node, _unpooled_fields(site, where), _unpooled_details(analysis, site))


def unpooled_call_in_hot_function(analysis: "Analysis") -> Iterator[Hit]:
    hot = analysis.hot
    for site in analysis.unpooled_sites():
        func = site.ctx.func
        if func is None or func not in hot or site.mapping or analysis.in_loop(site.ctx, site.node):
            continue
        fields = _unpooled_fields(site, "")
        fields.update(function=func.qualname, reason=hot[func])
        fields["remedy"] = f"share one {FAMILIES[site.family].client}() between calls"
        details = _unpooled_details(analysis, site)
        details["hot_reason"] = hot[func]
        yield Hit(site.node, fields, details)


def client_constructions(analysis: "Analysis") -> List[Tuple[ast.Call, str, Ctx]]:
    """Every client constructor call of the module: (call, canonical constructor, ctx)."""
    out = []
    for call, ctx in analysis.facts.calls:
        meaning = analysis.meaning(call.func, ctx.scope)
        if meaning is not None and meaning.kind == "lib" and meaning.qual in CLIENT_CONSTRUCTORS:
            out.append((call, meaning.qual, ctx))
    return out


def _client_name(qual: str) -> str:
    return "requests_futures.FuturesSession" if qual.endswith("FuturesSession") else qual


def client_created_in_loop(analysis: "Analysis") -> Iterator[Hit]:
    for call, qual, ctx in client_constructions(analysis):
        if not analysis.in_loop(ctx, call):
            continue
        if kept_for_reuse(analysis, call, ctx, names_count=False):
            continue
        yield Hit(
            call,
            {"client": _client_name(qual)},
            {
                "client": qual,
                "loop": span(analysis.outermost_loop_statement(ctx, call)),
                "function": ctx.func.qualname if ctx.func is not None else None,
                "async": ctx.async_body,
            },
        )


def client_per_request(analysis: "Analysis") -> Iterator[Hit]:
    hot = analysis.hot
    for call, qual, ctx in client_constructions(analysis):
        func = ctx.func
        if func is None or func not in hot or analysis.in_loop(ctx, call):
            continue
        if _is_cached(func) or kept_for_reuse(analysis, call, ctx, names_count=True):
            continue
        returned = _flows_to_return(analysis, call, ctx)
        if returned and not _factory_used_per_item(analysis, func):
            continue
        yield Hit(
            call,
            {"client": _client_name(qual), "function": func.qualname, "reason": hot[func]},
            {"client": qual, "function": func.qualname, "factory": returned, "async": ctx.async_body},
        )


def _is_cached(func: FunctionInfo) -> bool:
    for decorator in func.node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in _CACHE_DECORATORS:
            return True
    return False


def _climb(analysis: "Analysis", node: ast.AST) -> Tuple[ast.AST, Optional[ast.AST]]:
    """Climb from an expression through what passes its value on; return (the value, what holds it)."""
    current = node
    parent = analysis.parent(current)
    while parent is not None:
        if isinstance(parent, (ast.BoolOp, ast.IfExp, ast.Await, ast.Starred)):
            pass
        elif isinstance(parent, ast.keyword):
            pass
        elif isinstance(parent, ast.Call) and current is not parent.func:
            if isinstance(parent.func, ast.Attribute) and parent.func.attr in _CONTAINER_METHODS:
                return current, parent
            # Handed to a wrapper (`Api(session=requests.Session())`): what becomes of the wrapper decides.
        elif isinstance(parent, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            pass
        else:
            return current, parent
        current = parent
        parent = analysis.parent(current)
    return current, None


def kept_for_reuse(analysis: "Analysis", call: ast.Call, ctx: Ctx, names_count: bool) -> bool:
    """Whether the client is stored where it outlives the call: on an attribute, in a container or a
    global (and, with `names_count`, through a local name that is then stored so)."""
    value, holder = _climb(analysis, call)
    if holder is None:
        return False
    if isinstance(holder, ast.Call):
        return True  # `sessions.append(requests.Session())`
    if isinstance(holder, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return value is not holder and (getattr(holder, "elt", None) is value or getattr(holder, "value", None) is value)
    targets: List[ast.AST] = []
    if isinstance(holder, ast.Assign):
        targets = list(holder.targets)
    elif isinstance(holder, (ast.AnnAssign, ast.NamedExpr)):
        targets = [holder.target]
    for target in targets:
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            return True
        if isinstance(target, ast.Name) and names_count:
            if target.id in ctx.scope.globals or ctx.scope.kind == "module":
                return True
            if _name_stored(analysis, target.id, ctx, holder):
                return True
    return False


def _name_stored(analysis: "Analysis", name: str, ctx: Ctx, holder: ast.AST) -> bool:
    """A local name holding the client is stored on an attribute or in a container later."""
    for use in analysis.name_uses(name):
        if use.ctx.scope is not ctx.scope:
            continue
        binding = lookup(name, use.ctx.scope, (use.node.lineno, use.node.col_offset))
        if binding is None or binding.kind not in (ASSIGN, WITH):
            continue
        value, parent = _climb(analysis, use.node)
        if isinstance(parent, ast.Call):
            return True
        if isinstance(parent, ast.Assign) and any(isinstance(t, (ast.Attribute, ast.Subscript)) for t in parent.targets):
            return True
    return False


def _flows_to_return(analysis: "Analysis", call: ast.Call, ctx: Ctx) -> bool:
    value, holder = _climb(analysis, call)
    if isinstance(holder, (ast.Return, ast.Yield)):
        return True
    if isinstance(holder, ast.Assign) and len(holder.targets) == 1 and isinstance(holder.targets[0], ast.Name):
        name = holder.targets[0].id
        for use in analysis.name_uses(name):
            if use.ctx.scope is ctx.scope and isinstance(analysis.parent(use.node), (ast.Return, ast.Yield)):
                return True
    return False


def _factory_used_per_item(analysis: "Analysis", func: FunctionInfo) -> bool:
    """A factory is a problem when some caller uses its client per item instead of keeping it."""
    callers: List[CallSite] = [
        site for site in analysis.facts.calls if analysis.function_target(site.node.func, site.ctx) is func
    ]
    if not callers:
        return True
    for site in callers:
        if analysis.in_loop(site.ctx, site.node):
            return True
        if site.ctx.func in analysis.hot and not kept_for_reuse(analysis, site.node, site.ctx, names_count=True):
            return True
    return False
