"""HTP201-HTP203: response bodies held whole in memory, and streamed responses never closed."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Mapping, NamedTuple, Optional, Set, Tuple

from ..bindings import ASSIGN, PARAM, WITH, Binding, Meaning, Scope, callee_name, lookup
from ..finding import Hit
from ..libraries import CLIENT_CONSTRUCTORS, REQUESTS_STYLE, constructor_family, shown
from ..walk import Ctx
from .connections import positional_parameters, span

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis import Analysis

# Clients whose responses behave like requests' (iter_content, raw, stream=True).
_REQUESTS_CLIENTS = frozenset({"requests.Session", "requests.session", "niquests.Session"})
_OPENERS = frozenset({"open", "fdopen", "NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile"})
_BODY_ATTRS = frozenset({"content", "text"})
# The calls `_written` recognizes as writing to a file.
_WRITERS = frozenset({"write", "writelines", "write_bytes", "write_text", "copyfileobj"})
_BODY_METHODS = frozenset({"read", "text", "aread"})
_STREAM_APIS = frozenset({"iter_content", "iter_lines", "raw"})
_CLOSERS = frozenset({"close", "release_conn", "aclose"})
# Calls that look at a response without keeping or closing it: handing it to them releases nothing.
_INSPECTORS = frozenset({"print", "len", "repr", "str", "bool", "type", "id", "isinstance", "hasattr", "vars"})
_LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})
# `resp.text.encode()` / `resp.read().decode()` is still the whole body.
_BODY_PASSTHROUGH = frozenset({"encode", "decode"})
# Iterators over a streamed body (requests, httpx sync and async).
_STREAM_ITERATORS = frozenset(
    {"iter_content", "iter_lines", "iter_bytes", "iter_text", "iter_raw"}
    | {"aiter_bytes", "aiter_text", "aiter_lines", "aiter_raw"}
)


class Request(NamedTuple):
    """A request call and where its response goes."""

    call: ast.Call
    ctx: Ctx
    meaning: Meaning  # kind "response": qual is the library ("requests") or the client constructor
    uses: Tuple[ast.expr, ...]  # expressions that evaluate to the response (the call itself, or names bound to it)
    holder: Optional[ast.AST]  # what takes the call's value directly (Assign, withitem, Return, ...)


# Clients whose request methods return something other than a response body the rules follow.
_NOT_RESPONSES = frozenset(
    {
        "requests_futures.sessions.FuturesSession",  # a Future
        "urllib3.PoolManager",  # urllib3 responses: `.data`, `preload_content=False`, out of these rules
        "urllib3.ProxyManager",
        "urllib3.HTTPConnectionPool",
        "urllib3.HTTPSConnectionPool",
        "urllib3.connection_from_url",
        "aiohttp.TCPConnector",
    }
)


def _library(meaning: Meaning) -> Optional[str]:
    """The library a response comes from ("requests", "httpx", "aiohttp", "urllib.request"), None if unknown."""
    qual = meaning.qual
    if not qual:
        return None
    if qual in CLIENT_CONSTRUCTORS:
        return constructor_family(qual)
    return qual


def _requests_style(meaning: Meaning) -> bool:
    return meaning.qual in REQUESTS_STYLE or meaning.qual in _REQUESTS_CLIENTS


def _stream_keyword(call: ast.Call) -> Optional[bool]:
    """True/False for a literal `stream=`, False when absent, None when unknown (`**kwargs`, `*args`, a variable)."""
    unknown = any(isinstance(arg, ast.Starred) for arg in call.args)
    for keyword in call.keywords:
        if keyword.arg == "stream":
            value = keyword.value
            return bool(value.value) if isinstance(value, ast.Constant) else None
        if keyword.arg is None:
            unknown = True
    return None if unknown else False


def _frame(scope: Scope) -> Scope:
    """The function (or module) scope that runs `scope`'s code: comprehensions and lambdas belong to it."""
    while scope.kind in ("comprehension", "lambda", "class") and scope.parent is not None:
        scope = scope.parent
    return scope


def requests_made(analysis: "Analysis") -> List[Request]:
    """Every request call of the module whose response the rules can follow."""
    cached = getattr(analysis, "_requests_made", None)
    if cached is not None:
        return cached
    out: List[Request] = []
    for call, ctx in analysis.facts.calls:
        meaning = analysis.meaning(call, ctx.scope) or _through_a_known_client(analysis, call, ctx)
        # `meaning.node is not call`: a wrapper such as `closing(requests.get(u))` resolves to the inner request.
        if meaning is None or meaning.kind != "response" or meaning.node is not call:
            continue
        if meaning.qual == "grequests" or meaning.qual in _NOT_RESPONSES:
            continue  # grequests.get only builds an AsyncRequest
        if isinstance(call.func, ast.Attribute) and call.func.attr == "ws_connect":
            continue
        out.append(_follow(analysis, call, ctx, meaning))
    analysis._requests_made = out  # type: ignore[attr-defined]
    return out


def _through_a_known_client(analysis: "Analysis", call: ast.Call, ctx: Ctx) -> Optional[Meaning]:
    """A request through a client that connections.client_behind knows: one a factory of this module made
    (`s = make_session(); s.get(u)`), or one a call of this module passes to the parameter."""
    from .connections import client_behind

    made = client_behind(analysis, call, ctx.scope)
    return Meaning("response", made[0], call) if made is not None else None


def _follow(analysis: "Analysis", call: ast.Call, ctx: Ctx, meaning: Meaning) -> Request:
    """The request with every expression of this function that evaluates to its response."""
    value, holder = _value_holder(analysis, call, ctx)
    uses: List[ast.expr] = [value]
    for name in _bound_names(holder, value):
        uses.extend(_uses_of_binding(analysis, name, ctx, holder))
    # Plain aliases (`resp = r`) carry the response on; a few hops are plenty.
    index = 1
    while index < len(uses) and len(uses) < 64:
        use = uses[index]
        index += 1
        parent = analysis.parent(use)
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is use:
            for name in _bound_names(parent, use):
                uses.extend(u for u in _uses_of_binding(analysis, name, ctx, parent) if u not in uses)
    return Request(call, ctx, meaning, tuple(uses), holder)


def _value_holder(analysis: "Analysis", call: ast.Call, ctx: Ctx) -> Tuple[ast.expr, Optional[ast.AST]]:
    """The expression carrying the response (through `await` and `contextlib.closing(...)`) and its holder."""
    value: ast.expr = call
    parent = analysis.parent(value)
    while True:
        if isinstance(parent, ast.Await):
            value = parent
        elif isinstance(parent, ast.Call) and parent.args and parent.args[0] is value:
            if not _is_closing(analysis, parent, ctx):
                return value, parent
            value = parent
        else:
            return value, parent
        parent = analysis.parent(value)


def _is_closing(analysis: "Analysis", call: ast.Call, ctx: Ctx) -> bool:
    meaning = analysis.meaning(call.func, ctx.scope)
    return meaning is not None and meaning.kind == "lib" and meaning.qual == "contextlib.closing"


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
    for use in analysis.name_uses_in(name, ctx.func):
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


def _target_name(request: Request) -> Optional[str]:
    names = _bound_names(request.holder, request.uses[0])
    return names[0] if names else None


# -- HTP202 ----------------------------------------------------------------------------------------------
def _stream_api_use(analysis: "Analysis", request: Request) -> Optional[ast.Attribute]:
    for use in request.uses:
        parent = analysis.parent(use)
        if isinstance(parent, ast.Attribute) and parent.value is use and parent.attr in _STREAM_APIS:
            if parent.attr == "raw":
                return parent
            grand = analysis.parent(parent)
            if isinstance(grand, ast.Call) and grand.func is parent:
                return parent
    return None


def _htp202(analysis: "Analysis") -> Dict[int, Tuple[Request, ast.Attribute]]:
    cached = getattr(analysis, "_htp202", None)
    if cached is not None:
        return cached
    found: Dict[int, Tuple[Request, ast.Attribute]] = {}
    for request in requests_made(analysis):
        if not _requests_style(request.meaning) or _stream_keyword(request.call) is not False:
            continue
        use = _stream_api_use(analysis, request)
        if use is not None:
            found[id(request.call)] = (request, use)
    analysis._htp202 = found  # type: ignore[attr-defined]
    return found


def _call_name(analysis: "Analysis", request: Request) -> str:
    """How the message names the request: `requests.get`, `httpx.Client.post`, `client.send`."""
    func = request.call.func
    qual = request.meaning.qual
    if isinstance(func, ast.Attribute) and (not qual or qual in CLIENT_CONSTRUCTORS):
        if qual:
            return f"{qual}.{func.attr}"
        receiver = func.value
        if isinstance(receiver, (ast.Name, ast.Attribute)):
            return f"{ast.unparse(receiver)}.{func.attr}"
        return func.attr
    meaning = analysis.meaning(func, request.ctx.scope)
    if meaning is not None and meaning.kind == "lib":
        return shown(meaning.qual)
    return qual or "request"


def _where(analysis: "Analysis", request: Request) -> Dict[str, object]:
    """What every fix of these rules needs about the request's site (`callee`: the library's name of the
    request function or method, which a fix checks against the project's patches)."""
    return {
        "library": _library(request.meaning),
        "callee": _call_name(analysis, request),
        "client": request.meaning.qual if request.meaning.qual in CLIENT_CONSTRUCTORS else None,
        "request": span(request.call),
        "response": _target_name(request),
        "in_with": isinstance(request.holder, ast.withitem),
        "statement": span(request.ctx.stmt),
        "async": request.ctx.async_body,
    }


def stream_api_without_stream(analysis: "Analysis") -> Iterator[Hit]:
    """HTP202: `iter_content()` / `iter_lines()` / `.raw` on a requests-style response made without stream=True."""
    for request, use in _htp202(analysis).values():
        text = f".{use.attr}" if use.attr == "raw" else f".{use.attr}()"
        details = _where(analysis, request)
        details.update(use=text, use_span=span(use))
        yield Hit(request.call, {"use": text, "call": _call_name(analysis, request)}, details)


# -- HTP201 ----------------------------------------------------------------------------------------------
def _is_whole_read(call: ast.Call) -> bool:
    """`read()` / `read(-1)` reads everything; `read(n)` is a chunk."""
    if not call.args and not call.keywords:
        return True
    arg = call.args[0] if call.args else None
    return isinstance(arg, ast.Constant) and (arg.value is None or arg.value == -1)


def _awaited(analysis: "Analysis", expr: ast.expr) -> ast.expr:
    parent = analysis.parent(expr)
    return parent if isinstance(parent, ast.Await) else expr


def _body_expressions(analysis: "Analysis", request: Request) -> List[ast.expr]:
    """`r.content`, `r.text`, `r.read()`, `await resp.read()` / `await resp.text()`, `await resp.content.read()`."""
    out: List[ast.expr] = []
    aiohttp = _library(request.meaning) == "aiohttp"
    for use in request.uses:
        parent = analysis.parent(use)
        if not isinstance(parent, ast.Attribute) or parent.value is not use:
            continue
        grand = analysis.parent(parent)
        called = isinstance(grand, ast.Call) and grand.func is parent
        body: Optional[ast.expr] = None
        if called and parent.attr in _BODY_METHODS:
            if parent.attr != "read" or _is_whole_read(grand):  # type: ignore[arg-type]
                body = _awaited(analysis, grand)  # type: ignore[arg-type]
        elif not called and parent.attr in _BODY_ATTRS:
            if not aiohttp:
                body = parent
            elif parent.attr == "content":
                # aiohttp's resp.content is a StreamReader: only its `read()` takes the whole body.
                reader = grand
                call = analysis.parent(reader) if reader is not None else None
                if (
                    isinstance(reader, ast.Attribute) and reader.attr == "read"
                    and isinstance(call, ast.Call) and call.func is reader and _is_whole_read(call)
                ):
                    body = _awaited(analysis, call)
        if body is not None:
            out.append(_through_conversions(analysis, body))
    return out


def _through_conversions(analysis: "Analysis", expr: ast.expr) -> ast.expr:
    """`r.text.encode()`, `resp.read().decode()`: the whole body still."""
    for _ in range(3):
        parent = analysis.parent(expr)
        grand = analysis.parent(parent) if parent is not None else None
        if (
            isinstance(parent, ast.Attribute) and parent.attr in _BODY_PASSTHROUGH
            and isinstance(grand, ast.Call) and grand.func is parent
        ):
            expr = grand
        else:
            break
    return expr


def _is_file(analysis: "Analysis", expr: ast.expr, ctx: Ctx, depth: int = 0) -> bool:
    """An open file: `open(...)` (any `*.open(...)`, `fdopen`, temporary files), directly or by a name bound so."""
    if depth > 4:
        return False
    if isinstance(expr, ast.Await):
        return _is_file(analysis, expr.value, ctx, depth + 1)
    if isinstance(expr, ast.Call):
        return callee_name(expr.func) in _OPENERS
    if isinstance(expr, ast.Name):
        binding = lookup(expr.id, ctx.scope, (expr.lineno, expr.col_offset))
        if binding is not None and binding.kind in (ASSIGN, WITH) and isinstance(binding.value, ast.expr):
            return _is_file(analysis, binding.value, ctx, depth + 1)
    return False


def _written(
    analysis: "Analysis", expr: ast.expr, ctx: Ctx, depth: int = 0, wrapped: bool = False
) -> Optional[ast.Call]:
    """The call that writes `expr` to a file, directly or through local names, if any.

    `wrapped`: `expr` is an `io.BytesIO(body)`, which counts only when copied with `shutil.copyfileobj`.
    """
    parent = analysis.parent(expr)
    if isinstance(parent, ast.Await):
        expr, parent = parent, analysis.parent(parent)
    if isinstance(parent, ast.Call) and any(arg is expr for arg in parent.args):
        name = callee_name(parent.func)
        if wrapped:
            return parent if name == "copyfileobj" and parent.args[0] is expr else None
        if isinstance(parent.func, ast.Attribute):
            if name in ("write_bytes", "write_text"):
                return parent
            if name in ("write", "writelines") and _is_file(analysis, parent.func.value, ctx):
                return parent
        if name in ("BytesIO", "StringIO") and depth < 4:
            return _written(analysis, parent, ctx, depth + 1, True)
        return None
    if depth < 4 and isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is expr:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        for target in targets:
            if not isinstance(target, ast.Name):
                continue
            for use in analysis.name_uses_in(target.id, ctx.func):
                binding = lookup(target.id, use.ctx.scope, (use.node.lineno, use.node.col_offset))
                if binding is not None and binding.kind == ASSIGN and binding.value is expr:
                    write = _written(analysis, use.node, use.ctx, depth + 1, wrapped)
                    if write is not None:
                        return write
    return None


def unstreamed_download(analysis: "Analysis") -> Iterator[Hit]:
    """HTP201: a whole response body written to a file (not where HTP202 already reports the request), here or
    by a project function it is handed to (`handed_to_writer`)."""
    htp202 = _htp202(analysis)
    for request in requests_made(analysis):
        if id(request.call) in htp202:
            continue
        library = _library(request.meaning)
        fields = {"call": _call_name(analysis, request), "remedy": _stream_remedy(library),
                  "written_by": "it is written to a file"}
        handoff: Optional[Tuple[ast.Call, Writer]] = None
        for body in _body_expressions(analysis, request):
            write = _written(analysis, body, request.ctx)
            if write is None:
                handoff = handoff or handed_to_writer(analysis, body, request.ctx, "body")
                continue
            details = _where(analysis, request)
            details.update(
                body=span(body),
                write=span(write),
                writer=callee_name(write.func),
                stream=_stream_keyword(request.call),
            )
            yield Hit(request.call, fields, details)
            break
        else:
            for use in request.uses:
                handoff = handoff or handed_to_writer(analysis, use, request.ctx, "response")
            if handoff is None:
                continue
            call, writer = handoff
            where = f"{writer.path}:{writer.line}" if writer.path else f"line {writer.line}"
            details = _where(analysis, request)
            # `writer` is neither `write` nor `write_bytes`: the body is written in another function, so the fix
            # has nothing to rewrite here and the site is report-only.
            details.update(write=span(call), writer="a project function", handed_to=writer.name,
                           writer_line=writer.line, stream=_stream_keyword(request.call))
            if writer.path:
                details.update(writer_path=writer.path, writer_file=writer.file)
            fields["written_by"] = f"it is handed to {writer.name}() ({where}), which writes it to a file"
            yield Hit(request.call, fields, details)


class Writer(NamedTuple):
    """A project function that writes one of its parameters to a file: its name, where it is (path from the
    project root and absolute path, both "" in this module; the line of its def)."""

    name: str
    path: str
    line: int
    file: str


def writer_parameters(analysis: "Analysis", func: Any) -> Tuple[Tuple[int, str, str], ...]:
    """The parameters `func` writes to a file: (position among the caller's positional arguments, -1 for
    keyword-only; name; "body" when the parameter itself is written, "response" when its `.content` / `.text`
    is). A method's `self` / `cls` takes no position. Computed once per function."""
    cache: Dict[int, Tuple[Tuple[int, str, str], ...]] = analysis.__dict__.setdefault("_writer_parameters", {})
    if id(func.node) in cache:
        return cache[id(func.node)]
    cache[id(func.node)] = ()
    writing: Optional[Set[int]] = analysis.__dict__.get("_functions_writing")
    if writing is None:
        # Only a function calling a writer can write a parameter: most functions are answered without a look.
        writing = {id(ctx.func.node) for call, ctx in analysis.facts.calls
                   if ctx.func is not None and callee_name(call.func) in _WRITERS}
        analysis.__dict__["_functions_writing"] = writing
    if id(func.node) not in writing:
        return ()
    params = [(i, a.arg) for i, a in enumerate(positional_parameters(func))] + \
        [(-1, a.arg) for a in func.node.args.kwonlyargs]
    found: List[Tuple[int, str, str]] = []
    for position, name in params:
        kind = ""
        for use in analysis.name_uses_in(name, func):
            binding = lookup(name, use.ctx.scope, (use.node.lineno, use.node.col_offset))
            if binding is None or binding.kind != PARAM or binding.scope is not func.scope:
                continue
            if _written(analysis, use.node, use.ctx) is not None:
                kind = "body"
                break
            parent = analysis.parent(use.node)
            grand = analysis.parent(parent) if parent is not None else None
            if (isinstance(parent, ast.Attribute) and parent.value is use.node and parent.attr in _BODY_ATTRS
                    and not (isinstance(grand, ast.Call) and grand.func is parent)
                    and _written(analysis, _through_conversions(analysis, parent), use.ctx) is not None):
                kind = "response"
                break
        if kind:
            found.append((position, name, kind))
    cache[id(func.node)] = tuple(found)
    return cache[id(func.node)]


def _argument_of(analysis: "Analysis", expr: ast.expr) -> Optional[Tuple[ast.Call, int, Optional[str]]]:
    """The call `expr` is an argument of: (call, position or -1, keyword name or None); None when it is not."""
    parent = analysis.parent(expr)
    if isinstance(parent, ast.Await):
        expr, parent = parent, analysis.parent(parent)
    if isinstance(parent, ast.keyword) and parent.arg is not None:
        call = analysis.parent(parent)
        return (call, -1, parent.arg) if isinstance(call, ast.Call) else None
    if isinstance(parent, ast.Call) and parent.func is not expr:
        for position, arg in enumerate(parent.args):
            if arg is expr:
                if any(isinstance(a, ast.Starred) for a in parent.args[:position]):
                    return None
                return parent, position, None
        for keyword in parent.keywords:  # the tree's parents skip `keyword` nodes
            if keyword.value is expr and keyword.arg is not None:
                return parent, -1, keyword.arg
    return None


def handed_to_writer(analysis: "Analysis", expr: ast.expr, ctx: Ctx, kind: str) -> Optional[Tuple[ast.Call, Writer]]:
    """The call handing `expr` (a whole body, or the response: `kind`) to a project function that writes that
    parameter (a body) or its `.content` / `.text` (a response) to a file: a def of this module, or of another
    module as the project model hands it in (`analysis.extra_writers`)."""
    found = _argument_of(analysis, expr)
    if found is None:
        return None
    call, position, keyword = found
    seed = analysis.extra_writers.get((call.lineno, call.col_offset))
    if seed is not None:
        params: Tuple[Tuple[int, str, str], ...] = seed[4]
        writer = Writer(seed[0], seed[1], seed[2], seed[3])
    else:
        target = analysis.function_target(call.func, ctx)
        if target is None:
            return None
        params = writer_parameters(analysis, target)
        writer = Writer(target.qualname, "", target.node.lineno, "")
    for param_position, name, written in params:
        if written == kind and ((keyword is None and position == param_position) or keyword == name):
            return call, writer
    return None


def inherit_clients(analysis: "Analysis", inherited: Mapping[str, Tuple[Tuple[str, str], ...]]) -> None:
    """`self.<attribute>` of a top-level class (and of this module's classes derived from it) holds the client a
    base class of another module stores there (the project model's `inherited` seeds), unless this module
    gives that attribute a value of its own."""
    top = analysis.facts.module_scope
    seeded = {cls: dict(inherited[cls.name]) for cls in analysis.facts.classes
              if cls.scope.parent is top and cls.name in inherited}
    if not seeded:
        return
    stores = top.attribute_stores
    for cls in analysis.facts.classes:
        for ancestor in cls.ancestors():
            for attribute, constructor in seeded.get(ancestor, {}).items():
                if attribute in stores or cls.scope.bindings.get(attribute):
                    continue  # a value this module gives: the engine's own reading decides
                cls._instance_attributes.setdefault(attribute, Meaning("client", constructor, None))


def _stream_remedy(library: Optional[str]) -> str:
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
def _inspects(analysis: "Analysis", call: ast.Call, ctx: Ctx) -> bool:
    """`print(r)`, `len(r.content)`, `log.info("%s", r)`: a look at the response that neither keeps nor closes it."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in _INSPECTORS and lookup(func.id, ctx.scope, (func.lineno, func.col_offset)) is None
    return isinstance(func, ast.Attribute) and func.attr in _LOG_METHODS


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
            # `return r.iter_content(...)` / `return r.raw`: the caller drains the body, which releases the
            # connection, so the response is handed on with it.
            if parent.attr == "raw" and _returned(analysis, parent, request.ctx):
                return True
            if parent.attr in _STREAM_ITERATORS and isinstance(grand, ast.Call) and grand.func is parent:
                if _returned(analysis, grand, request.ctx):
                    return True
            continue
        if isinstance(parent, ast.Call) and parent.func is not use:
            if _inspects(analysis, parent, request.ctx):
                continue
            return True  # handed to another function (`closing(r)`, `stack.enter_context(r)`, a helper)
        if isinstance(parent, (ast.keyword, ast.Starred)):
            return True
        if isinstance(parent, (ast.Tuple, ast.List, ast.Dict, ast.Set)):
            return True
        if isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) and (
            use is getattr(parent, "elt", None) or use is getattr(parent, "value", None)
        ):
            return True  # collected into a container, like a list display
        if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is use:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            if any(not isinstance(t, ast.Name) for t in targets):
                return True  # `self.resp = r`, `cache[u] = r`
            if any(isinstance(t, ast.Name) and _outlives(t.id, request.ctx) for t in targets):
                return True
    return False


def _returned(analysis: "Analysis", expr: ast.expr, ctx: Ctx, depth: int = 0) -> bool:
    """`expr` is returned or yielded, directly, in a returned tuple/list, or through a local name."""
    parent = analysis.parent(expr)
    if isinstance(parent, ast.Await):
        expr, parent = parent, analysis.parent(parent)
    if isinstance(parent, (ast.Tuple, ast.List)):
        expr, parent = parent, analysis.parent(parent)
    if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom)):
        return True
    if depth < 2 and isinstance(parent, ast.Assign) and parent.value is expr:
        for name in _bound_names(parent, expr):
            for use in _uses_of_binding(analysis, name, ctx, parent):
                if _returned(analysis, use, ctx, depth + 1):
                    return True
    return False


def _outlives(name: str, ctx: Ctx) -> bool:
    """Assigning to `name` stores outside the function: a `global` / `nonlocal`, or module-level code."""
    scope = ctx.scope
    return name in scope.globals or name in scope.nonlocals or _frame(scope).kind == "module"


def streamed_response_not_closed(analysis: "Analysis") -> Iterator[Hit]:
    """HTP203: a stream=True response that is never closed, returned, yielded or stored."""
    for request in _streamed_requests(analysis):
        if _released(analysis, request):
            continue
        yield Hit(request.call, {"call": _call_name(analysis, request)}, _where(analysis, request))


def _streamed_requests(analysis: "Analysis") -> Iterator[Request]:
    seen: Set[int] = set()
    for request in requests_made(analysis):
        if _stream_keyword(request.call) is True and (_requests_style(request.meaning) or _is_send(request.call)):
            seen.add(id(request.call))
            # RULES.md: not for the library's module-level functions (`requests.get(u, stream=True)`): the
            # session they make is closed when they return, so there is no pool to starve, and the socket
            # closes with the response.
            if request.meaning.qual in CLIENT_CONSTRUCTORS or _is_send(request.call):
                yield request
    # `anything.send(req, stream=True)`: httpx and requests both return a streamed response.
    for call, ctx in analysis.facts.calls:
        if id(call) in seen or not _is_send(call) or _stream_keyword(call) is not True:
            continue
        if analysis.meaning(call, ctx.scope) is not None:
            continue  # a known client's send was judged above
        yield _follow(analysis, call, ctx, Meaning("response", "", call))


def _is_send(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr == "send"
