"""HTP201-HTP203: response bodies held whole in memory, and streamed responses never closed."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

from ..bindings import ASSIGN, WITH, Binding, Meaning, lookup
from ..finding import Hit
from ..libraries import REQUESTS_STYLE
from ..walk import Ctx
from .connections import span

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis import Analysis

# Clients whose responses behave like requests' (iter_content, raw, stream=True).
_REQUESTS_CLIENTS = frozenset({"requests.Session", "requests.session", "niquests.Session"})
_OPENERS = frozenset({"open", "fdopen", "NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile"})
_BODY_ATTRS = frozenset({"content", "text"})
_BODY_METHODS = frozenset({"read", "text", "aread"})
_STREAM_APIS = frozenset({"iter_content", "iter_lines", "raw"})
_CLOSERS = frozenset({"close", "release_conn", "aclose"})


class Request(NamedTuple):
    """A request call and where its response goes."""

    call: ast.Call
    ctx: Ctx
    meaning: Meaning  # kind "response": qual is the library ("requests") or the client constructor
    uses: Tuple[ast.expr, ...]  # expressions that evaluate to the response (the call itself, or names bound to it)
    holder: Optional[ast.AST]  # what takes the call's value directly (Assign, withitem, Return, ...)


def _library(meaning: Meaning) -> str:
    qual = meaning.qual
    return qual if "." not in qual or qual == "urllib.request" else qual.split(".", 1)[0]


def _requests_style(meaning: Meaning) -> bool:
    return meaning.qual in REQUESTS_STYLE or meaning.qual in _REQUESTS_CLIENTS


def _stream_keyword(call: ast.Call) -> Optional[bool]:
    """True/False for a literal `stream=`, False when absent, None when unknown (`**kwargs`, a variable)."""
    for keyword in call.keywords:
        if keyword.arg == "stream":
            value = keyword.value
            return bool(value.value) if isinstance(value, ast.Constant) else None
        if keyword.arg is None:
            return None
    return False


def requests_made(analysis: "Analysis") -> List[Request]:
    """Every request call of the module whose response the rules can follow."""
    cached = getattr(analysis, "_requests_made", None)
    if cached is not None:
        return cached
    out: List[Request] = []
    for call, ctx in analysis.facts.calls:
        meaning = analysis.meaning(call, ctx.scope)
        if meaning is None or meaning.kind != "response" or meaning.qual == "grequests":
            continue
        value, holder = _value_holder(analysis, call)
        uses: List[ast.expr] = [value]
        binding_names = _bound_names(holder, value)
        for name in binding_names:
            uses.extend(_uses_of_binding(analysis, name, ctx, holder))
        out.append(Request(call, ctx, meaning, tuple(uses), holder))
    analysis._requests_made = out  # type: ignore[attr-defined]
    return out


def _value_holder(analysis: "Analysis", call: ast.Call) -> Tuple[ast.expr, Optional[ast.AST]]:
    """The expression carrying the response (through `await`) and its holder."""
    value: ast.expr = call
    parent = analysis.parent(value)
    while isinstance(parent, ast.Await):
        value = parent
        parent = analysis.parent(value)
    return value, parent


def _bound_names(holder: Optional[ast.AST], value: ast.expr) -> List[str]:
    if isinstance(holder, ast.Assign) and holder.value is value:
        return [t.id for t in holder.targets if isinstance(t, ast.Name)]
    if isinstance(holder, ast.AnnAssign) and holder.value is value and isinstance(holder.target, ast.Name):
        return [holder.target.id]
    if isinstance(holder, ast.withitem) and isinstance(holder.optional_vars, ast.Name):
        return [holder.optional_vars.id]
    if isinstance(holder, ast.NamedExpr) and isinstance(holder.target, ast.Name):
        return [holder.target.id]
    return []


def _uses_of_binding(analysis: "Analysis", name: str, ctx: Ctx, holder: Optional[ast.AST]) -> List[ast.expr]:
    """Names in the same function that read the binding `holder` made."""
    out: List[ast.expr] = []
    for use in analysis.name_uses(name):
        if use.ctx.func is not ctx.func:
            continue
        binding = lookup(name, use.ctx.scope, (use.node.lineno, use.node.col_offset))
        if binding is not None and _binding_from(binding, holder):
            out.append(use.node)
    return out


def _binding_from(binding: Binding, holder: Optional[ast.AST]) -> bool:
    if binding.kind == WITH and isinstance(holder, ast.withitem):
        return binding.value is holder.context_expr
    if binding.kind == ASSIGN and isinstance(holder, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
        return binding.value is holder.value
    return False


# -- HTP202 ----------------------------------------------------------------------------------------------
def _stream_api_use(analysis: "Analysis", request: Request) -> Optional[str]:
    for use in request.uses:
        parent = analysis.parent(use)
        if isinstance(parent, ast.Attribute) and parent.value is use and parent.attr in _STREAM_APIS:
            return f".{parent.attr}" if parent.attr == "raw" else f".{parent.attr}()"
    return None


def _htp202(analysis: "Analysis") -> Dict[int, Tuple[Request, str]]:
    found: Dict[int, Tuple[Request, str]] = {}
    for request in requests_made(analysis):
        if not _requests_style(request.meaning) or _stream_keyword(request.call) is not False:
            continue
        use = _stream_api_use(analysis, request)
        if use is not None:
            found[id(request.call)] = (request, use)
    return found


def _call_name(request: Request) -> str:
    meaning = request.meaning
    func = request.call.func
    if meaning.qual == "send":
        receiver = func.value if isinstance(func, ast.Attribute) else func
        return f"{ast.unparse(receiver)}.send" if isinstance(receiver, (ast.Name, ast.Attribute)) else "send"
    if meaning.qual in ("requests", "niquests", "httpx", "httpx2", "aiohttp", "urllib.request", "grequests"):
        verb = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "request")
        return f"{meaning.qual}.{verb}"
    verb = func.attr if isinstance(func, ast.Attribute) else "request"
    return f"{meaning.qual}.{verb}"


def stream_api_without_stream(analysis: "Analysis") -> Iterator[Hit]:
    for request, use in _htp202(analysis).values():
        yield Hit(
            request.call,
            {"use": use, "call": _call_name(request)},
            {"library": _library(request.meaning), "request": span(request.call), "use": use},
        )


# -- HTP201 ----------------------------------------------------------------------------------------------
def _body_expressions(analysis: "Analysis", request: Request) -> List[ast.expr]:
    """`r.content`, `r.text`, `r.read()`, `await resp.read()` / `.text()` on the response."""
    out: List[ast.expr] = []
    for use in request.uses:
        parent = analysis.parent(use)
        if not isinstance(parent, ast.Attribute) or parent.value is not use:
            continue
        if parent.attr in _BODY_ATTRS:
            out.append(parent)
            continue
        grand = analysis.parent(parent)
        if parent.attr in _BODY_METHODS and isinstance(grand, ast.Call) and grand.func is parent:
            expr: ast.expr = grand
            above = analysis.parent(grand)
            if isinstance(above, ast.Await):
                expr = above
            out.append(expr)
    return out


def _is_file(analysis: "Analysis", expr: ast.expr, ctx: Ctx, depth: int = 0) -> bool:
    """An open file: `open(...)` (any `*.open(...)`, `fdopen`, temporary files), directly or by a name bound so."""
    if depth > 4:
        return False
    if isinstance(expr, ast.Await):
        return _is_file(analysis, expr.value, ctx, depth + 1)
    if isinstance(expr, ast.Call):
        func = expr.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in _OPENERS
    if isinstance(expr, ast.Name):
        binding = lookup(expr.id, ctx.scope, (expr.lineno, expr.col_offset))
        if binding is not None and binding.kind in (ASSIGN, WITH) and isinstance(binding.value, ast.expr):
            return _is_file(analysis, binding.value, ctx, depth + 1)
    return False


def _written(analysis: "Analysis", expr: ast.expr, ctx: Ctx, depth: int = 0) -> Optional[ast.Call]:
    """The call that writes `expr` to a file, directly or through a local name, if any."""
    parent = analysis.parent(expr)
    if isinstance(parent, ast.Call) and expr in parent.args:
        func = parent.func
        if isinstance(func, ast.Attribute):
            if func.attr in ("write_bytes", "write_text"):
                return parent
            if func.attr in ("write", "writelines") and _is_file(analysis, func.value, ctx):
                return parent
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name == "BytesIO" or name == "StringIO":
            outer = analysis.parent(parent)
            if isinstance(outer, ast.Call) and parent in outer.args:
                outer_name = outer.func.attr if isinstance(outer.func, ast.Attribute) else getattr(outer.func, "id", "")
                if outer_name == "copyfileobj":
                    return outer
        return None
    if depth < 3 and isinstance(parent, ast.Assign) and parent.value is expr:
        for target in parent.targets:
            if isinstance(target, ast.Name):
                for use in analysis.name_uses(target.id):
                    if use.ctx.func is not ctx.func:
                        continue
                    binding = lookup(target.id, use.ctx.scope, (use.node.lineno, use.node.col_offset))
                    if binding is not None and binding.kind == ASSIGN and binding.value is expr:
                        write = _written(analysis, use.node, use.ctx, depth + 1)
                        if write is not None:
                            return write
    return None


def unstreamed_download(analysis: "Analysis") -> Iterator[Hit]:
    htp202 = _htp202(analysis)
    for request in requests_made(analysis):
        if id(request.call) in htp202:
            continue
        for body in _body_expressions(analysis, request):
            write = _written(analysis, body, request.ctx)
            if write is None:
                continue
            library = _library(request.meaning)
            yield Hit(
                request.call,
                {"call": _call_name(request), "remedy": _stream_remedy(library)},
                {
                    "library": library,
                    "request": span(request.call),
                    "body": span(body),
                    "write": span(write),
                    "stream": _stream_keyword(request.call),
                },
            )
            break


def _stream_remedy(library: str) -> str:
    if library in ("requests", "niquests"):
        return "request it with stream=True in a `with` and write r.iter_content(65536) chunks"
    if library in ("httpx", "httpx2"):
        return "use httpx.stream()/client.stream() and write r.iter_bytes() chunks"
    if library == "aiohttp":
        return "write `async for chunk in resp.content.iter_chunked(65536)`"
    if library == "urllib.request":
        return "copy it with shutil.copyfileobj(resp, f)"
    return "stream it to the file in chunks"


# -- HTP203 ----------------------------------------------------------------------------------------------
def _released(analysis: "Analysis", request: Request) -> bool:
    """The response is used as a `with` target, closed, returned, yielded or stored outside the function."""
    holder = request.holder
    if isinstance(holder, ast.withitem):
        return True
    for use in request.uses:
        parent = analysis.parent(use)
        if isinstance(parent, ast.withitem) and parent.context_expr is use:
            return True
        if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(parent, ast.Attribute) and parent.value is use:
            if parent.attr in _CLOSERS:
                return True
            grand = analysis.parent(parent)
            if parent.attr == "raw" and isinstance(grand, ast.Attribute) and grand.attr in _CLOSERS:
                return True
            continue
        if isinstance(parent, ast.Call) and parent.func is not use:
            return True  # handed to another function (`closing(r)`, a helper): it may close it
        if isinstance(parent, ast.keyword):
            return True
        if isinstance(parent, (ast.Tuple, ast.List, ast.Dict, ast.Set)):
            return True
        if isinstance(parent, ast.Assign) and parent.value is use:
            if any(not isinstance(t, ast.Name) for t in parent.targets):
                return True
            if any(isinstance(t, ast.Name) and t.id in request.ctx.scope.globals for t in parent.targets):
                return True
    return False


def streamed_response_not_closed(analysis: "Analysis") -> Iterator[Hit]:
    for request in _streamed_requests(analysis):
        if _released(analysis, request):
            continue
        yield Hit(
            request.call,
            {"call": _call_name(request)},
            {"library": _library(request.meaning), "request": span(request.call)},
        )


def _streamed_requests(analysis: "Analysis") -> Iterator[Request]:
    seen: Set[int] = set()
    for request in requests_made(analysis):
        if _stream_keyword(request.call) is True and (
            _requests_style(request.meaning) or _is_send(request.call)
        ):
            seen.add(id(request.call))
            yield request
    # `anything.send(req, stream=True)`: httpx and requests both return a streamed response.
    for call, ctx in analysis.facts.calls:
        if id(call) in seen or not _is_send(call) or _stream_keyword(call) is not True:
            continue
        value, holder = _value_holder(analysis, call)
        uses: List[ast.expr] = [value]
        for name in _bound_names(holder, value):
            uses.extend(_uses_of_binding(analysis, name, ctx, holder))
        yield Request(call, ctx, Meaning("response", "send", call), tuple(uses), holder)


def _is_send(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr == "send"
