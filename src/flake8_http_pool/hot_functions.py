"""Hot functions: the defs of a module that run many times (RULES.md, "Hot function", sources 1-4)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

from .bindings import FunctionInfo, dotted_name
from .walk import is_mapping_call

if TYPE_CHECKING:  # pragma: no cover
    from .analysis import Analysis
    from .walk import Ctx

_HANDLER_ATTRS = frozenset({"route", "get", "post", "put", "patch", "delete", "api_route", "websocket"})
_TASK_NAMES = frozenset({"route", "task", "shared_task", "actor", "job"})
# Decorators that end like a handler but are not one (`@mock.patch(...)` on a test).
_NOT_HANDLERS = ("mock.", "unittest.mock.", "patch.")

# Registration without a decorator: method name -> (positional index of the handler, keyword names).
_REGISTRATIONS = {
    "add_url_rule": (2, ("view_func",)),
    "add_api_route": (1, ("endpoint",)),
    "add_api_websocket_route": (1, ("endpoint",)),
    "add_route": (2, ("handler",)),
    "add_get": (1, ("handler",)),
    "add_post": (1, ("handler",)),
    "add_put": (1, ("handler",)),
    "add_patch": (1, ("handler",)),
    "add_delete": (1, ("handler",)),
    "add_head": (1, ("handler",)),
    "add_view": (1, ("handler",)),
}


# Route objects that register a handler when handed to the app (`app.add_routes([web.get("/", f)])`,
# `Starlette(routes=[Route("/", f)])`): library function -> (positional index of the handler, keyword names).
_ROUTE_DEFINITIONS = {
    **{f"aiohttp.web.{verb}": (1, ("handler",)) for verb in ("get", "post", "put", "patch", "delete", "head", "view")},
    "aiohttp.web.route": (2, ("handler",)),
    "starlette.routing.Route": (1, ("endpoint",)),
    "starlette.routing.WebSocketRoute": (1, ("endpoint",)),
    "fastapi.routing.APIRoute": (1, ("endpoint",)),
}


def _route_definition(analysis: "Analysis", call: ast.Call, ctx) -> Optional[Tuple[ast.expr, str]]:
    """The handler a route definition call names, with the definition's name, or None."""
    meaning = analysis.meaning(call.func, ctx.scope)
    if meaning is None or meaning.kind != "lib" or meaning.qual not in _ROUTE_DEFINITIONS:
        return None
    index, keywords = _ROUTE_DEFINITIONS[meaning.qual]
    handler = call.args[index] if len(call.args) > index else None
    for keyword in call.keywords:
        if keyword.arg in keywords:
            handler = keyword.value
    return (handler, meaning.qual.rsplit(".", 1)[-1]) if handler is not None else None


def decorator_reason(decorator: ast.expr, user_names: tuple) -> Optional[str]:
    """Why a decorator makes its function hot (a handler or task), or None."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    dotted = dotted_name(target)
    if dotted is None:
        return None
    for name in user_names:
        if dotted == name or dotted.endswith("." + name) or dotted.split(".")[-1] == name:
            return f"decorated with @{dotted}"
    if dotted.startswith(_NOT_HANDLERS):
        return None
    parts = dotted.split(".")
    last = parts[-1]
    if len(parts) > 1 and last in _HANDLER_ATTRS:
        return f"a request handler, @{dotted}"
    if last in _TASK_NAMES:
        return f"a task, @{dotted}" if last != "route" else f"a request handler, @{dotted}"
    return None


def function_key(func: FunctionInfo) -> str:
    """The name of a def inside its module, enclosing defs and classes included (`Api.fetch`, `main.worker`):
    how the project model (project.py) names a function across modules and hands it back as a seed."""
    parts = [func.name]
    current: Optional[FunctionInfo] = func
    while current is not None:
        if current.cls is not None:
            parts.append(current.cls.name)
        current = current.parent
        if current is not None:
            parts.append(current.name)
    return ".".join(reversed(parts))


# A site of sources 1-3 whose function is not a def of this module: (the expression naming it, its Ctx, the
# reason, the line). The project model resolves such expressions through imports (project.py).
Unresolved = Tuple[ast.AST, "Ctx", str, int]


def find_hot_functions(
    analysis: "Analysis", places: Optional[Dict[FunctionInfo, int]] = None,
    unresolved: Optional[List[Unresolved]] = None,
) -> Dict[FunctionInfo, str]:
    """Every hot function of the module with why it is hot (the first reason found), sources 1-4.

    `places`, when given, receives for each hot function the line of the loop call, mapping call, registration
    or decorator that makes it (or the hot function calling it, transitively) hot: the project model keeps it.
    Functions the project model found hot from other modules (`analysis.extra_hot`, function key -> reason)
    join as seeds after the module's own sources 1-3, so the module's own reason wins where both hold.
    `unresolved`, when given, receives every site of sources 1-3 whose callee or callable is no def of this
    module: what may make another module's function hot (one list of such sites, kept here, for both).
    """
    hot: Dict[FunctionInfo, str] = {}
    queue: List[FunctionInfo] = []

    def mark(func: Optional[FunctionInfo], reason: str, line: int = 0) -> None:
        if func is not None and func not in hot:
            hot[func] = reason
            queue.append(func)
            if places is not None:
                places[func] = line

    # Source 3: decorators.
    for func in analysis.facts.functions:
        for decorator in func.node.decorator_list:
            reason = decorator_reason(decorator, analysis.options.hot_decorators)
            if reason is not None:
                mark(func, reason, decorator.lineno)
                break

    def seek(func: Optional[FunctionInfo], expr: ast.AST, ctx: "Ctx", reason: str, line: int) -> None:
        if func is not None:
            mark(func, reason, line)
        elif unresolved is not None:
            unresolved.append((expr, ctx, reason, line))

    # Sources 1 and 2: called or passed in a loop scope; passed to a mapping call; registered as a handler.
    for site in analysis.facts.calls:
        call, ctx = site
        looping: Optional[bool] = None
        callee = analysis.function_target(call.func, ctx)
        if callee is not None or unresolved is not None:
            looping = analysis.in_loop(ctx, call)
            if looping:
                seek(callee, call.func, ctx, "called in a loop", call.lineno)
        if not call.args and not call.keywords:
            continue
        mapping = is_mapping_call(call, ctx.scope)
        for arg in [*call.args, *(kw.value for kw in call.keywords if kw.arg is not None)]:
            if isinstance(arg, ast.Starred):
                continue
            target = analysis.function_target(arg, ctx)
            if target is None and unresolved is None:
                continue
            if mapping:
                seek(target, arg, ctx, "mapped over items", call.lineno)
                continue
            if looping is None:
                looping = analysis.in_loop(ctx, call)
            if looping:
                seek(target, arg, ctx, "passed as a callable in a loop", call.lineno)
        if isinstance(call.func, ast.Attribute) and call.func.attr in _REGISTRATIONS:
            index, keywords = _REGISTRATIONS[call.func.attr]
            handler = call.args[index] if len(call.args) > index else None
            for keyword in call.keywords:
                if keyword.arg in keywords:
                    handler = keyword.value
            if handler is not None:
                seek(analysis.function_target(handler, ctx), handler, ctx, f"registered with {call.func.attr}()",
                     call.lineno)
        route = _route_definition(analysis, call, ctx)
        if route is not None:
            handler, name = route
            seek(analysis.function_target(handler, ctx), handler, ctx, f"registered with {name}()", call.lineno)

    extra = getattr(analysis, "extra_hot", None)
    if extra:
        for func in analysis.facts.functions:
            reason = extra.get(function_key(func))
            if reason is not None:
                mark(func, reason)

    # Source 4: called from a hot function.
    while queue:
        func = queue.pop()
        line = places.get(func, 0) if places is not None else 0
        for site in func.calls:
            mark(analysis.function_target(site.node.func, site.ctx), f"called from {func.qualname}()", line)
    return hot
