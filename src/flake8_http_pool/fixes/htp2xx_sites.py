"""Which HTP201/HTP202/HTP203 findings the response fixes can rewrite, and the plan for each (stdlib only).

All three rewrite the same thing: a response that should be streamed and closed. The request gets
`stream=True` (httpx: becomes `X.stream("GET", ...)`; `await client.get(u)` becomes `async with
client.stream(...)`), the statement binding the response becomes a `with` spanning every statement that uses
it, and (HTP201) the whole-body write becomes a chunked one. HTP201 also covers aiohttp (a response already
an `async with` target: `async for chunk in resp.content.iter_chunked(65536)`) and urllib
(`shutil.copyfileobj(resp, f)`, an inline `urlopen(u)` getting a `with`), where the request stays. A site is
left report-only whenever the response, or an iterator over its body, could be used after the `with` ends,
or the body is read some other way too, and wherever a stub may stand for the response. Each edit carries
its safety (RULES.md, "Fix safety"; the per-site judgements are in `htp2xx_safety.py`). The libcst command
in `htp2xx.py` (run as `htp201.py`, `htp202.py`, `htp203.py`) carries the plan out.
"""

from __future__ import annotations

import ast
from typing import Any, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from ..finding import Finding
from ..fix_facts import NO_FACTS, FixFacts
from .htp101_sites import _Index, _module_binding, free_name
from .htp2xx_safety import (
    SAFE, UNSAFE, appends, body_iterator, iterator_escapes, may_be_stubbed, stream_use_safety,
)
from .positions import Span, char_span

_REQUESTS = frozenset({"requests", "niquests"})
_HTTPX = frozenset({"httpx", "httpx2"})
_HTTPX_VERBS = frozenset({"get", "options", "head", "post", "put", "patch", "delete"})
# What a response can be asked without reading its body: a streamed response answers these the same way
# (not `apparent_encoding`, which reads `content`).
_HEAD_ATTRS = frozenset(
    {"status_code", "ok", "headers", "raise_for_status", "url", "reason", "encoding", "elapsed", "history",
     "cookies", "links", "is_redirect", "is_permanent_redirect", "request", "http_version", "is_success",
     "is_error", "reason_phrase", "next"}
)
# aiohttp's and urllib's answers to the same questions (aiohttp's `content` is the body stream: not here).
_AIOHTTP_HEAD_ATTRS = frozenset(
    {"status", "ok", "headers", "raw_headers", "raise_for_status", "url", "real_url", "reason", "method",
     "version", "history", "cookies", "links", "request_info", "content_type", "charset", "content_length",
     "get_encoding"}
)
_URLLIB_HEAD_ATTRS = frozenset(
    {"status", "getcode", "code", "headers", "info", "msg", "geturl", "url", "reason", "getheader", "getheaders",
     "version"}
)
_STREAM_APIS = frozenset(
    {"iter_content", "iter_lines", "raw", "iter_bytes", "iter_text", "iter_raw", "aiter_bytes", "aiter_text",
     "aiter_lines", "aiter_raw"}
)
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


class Wrap(NamedTuple):
    """Statements to put under `with <request> as <name>:` — the first is `<name> = <request>` (or
    `<name>: T = <request>`, or `<name> = await <request>`, which becomes `async with`)."""

    first: Span  # libcst units (characters)
    last: Span
    name: str
    asynchronous: bool = False


class Write(NamedTuple):
    """A whole-body write statement to turn into a chunked one."""

    statement: Span  # libcst units: the `f.write(r.content)` / `Path(p).write_bytes(r.content)` line
    writer: str  # "write" or "write_bytes"
    iterator: str  # "iter_content(chunk_size=65536)" or "iter_bytes()"
    response: Optional[str]  # the response's name; None: the request is inline and gets `as <inline_name>`
    inline_name: str
    file_name: str  # for write_bytes: the name the opened file gets
    chunk: str
    asynchronous: bool = False  # `async for` (aiohttp, httpx.AsyncClient)
    copier: Optional[str] = None  # urllib: `<copier>.copyfileobj(<response>, <file>)` instead of a loop
    import_copier: bool = False  # `import shutil` is needed
    drop: Optional[Span] = None  # `data = r.content`, written as `f.write(data)`: the assignment goes


class ResponseEdit(NamedTuple):
    """Everything one finding's fix does."""

    code: str
    request: Span  # libcst units: the request call
    stream_keyword: bool  # add `stream=True`
    httpx_method: Optional[str]  # httpx: `X.get(u)` becomes `X.stream("GET", u)` ("" for `X.request(m, u)`)
    wrap: Optional[Wrap]
    write: Optional[Write]
    lines: Tuple[int, int]  # the lines the edit touches (ast numbering), to keep a round's edits apart
    safety: str = ""  # "safe" / "unsafe" at this site; "" is the rule's own


def _span(node: ast.AST) -> Tuple[int, int, int, int]:
    line, col = getattr(node, "lineno"), getattr(node, "col_offset")
    return (line, col, getattr(node, "end_lineno", None) or line, getattr(node, "end_col_offset", None) or 0)


def _frame(index: _Index, node: ast.AST) -> Optional[ast.AST]:
    """The function or module whose code runs `node`; None inside a lambda or class body."""
    scope = index.scope_of(node)
    return None if isinstance(scope, (ast.Lambda, ast.ClassDef)) else scope


def _statement_list(index: _Index, statement: ast.stmt) -> Optional[List[ast.stmt]]:
    parent = index.parents.get(statement)
    if parent is None:
        return None
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(s is statement for s in block):
            return block
    return None


def _alone_on_its_lines(block: Sequence[ast.stmt], position: int) -> bool:
    """No other statement shares a line with it (`r = get(u); x = 1` cannot become a `with` header)."""
    statement = block[position]
    before = block[position - 1] if position > 0 else None
    after = block[position + 1] if position + 1 < len(block) else None
    return (before is None or before.end_lineno != statement.lineno) and (
        after is None or after.lineno != statement.end_lineno
    )


def _index_holding(block: Sequence[ast.stmt], node: ast.AST) -> Optional[int]:
    line, col = getattr(node, "lineno"), getattr(node, "col_offset")
    for position, statement in enumerate(block):
        if _span(statement)[:2] <= (line, col) and (line, col) < _span(statement)[2:]:
            return position
    return None


def _statement_span(statement: ast.stmt) -> Tuple[int, int, int, int]:
    """Where libcst sees the statement start: a decorated def or class starts at its first decorator."""
    decorators = getattr(statement, "decorator_list", None)
    span = _span(statement)
    return (*_span(decorators[0])[:2], *span[2:]) if decorators else span  # type: ignore[return-value]


def _keeps_body_iterator(index: _Index, attribute: ast.Attribute) -> bool:
    """`r.iter_lines()` / `r.raw` ends up somewhere that outlives the statement (stored, returned, yielded,
    passed on): closed by the `with`, it would come back empty."""
    iterator = body_iterator(index.parents, attribute)
    return iterator is not None and iterator_escapes(index.parents, iterator)


def _sets_raw_attribute(index: _Index, use: ast.Attribute) -> bool:
    """`r.raw.decode_content = True`: a setting for the read that follows, not a read."""
    parent = index.parents.get(use)
    return use.attr == "raw" and isinstance(parent, ast.Attribute) and isinstance(parent.ctx, ast.Store)


def _value_of(index: _Index, call: ast.Call) -> ast.expr:
    """The expression the response is bound from: the call, or `await call`."""
    parent = index.parents.get(call)
    return parent if isinstance(parent, ast.Await) else call


def _binding_statement(index: _Index, call: ast.Call) -> Optional[ast.stmt]:
    """`r = <call>`, `r: T = <call>` or `r = await <call>` (a function's local: a module-level annotation
    is stored in `__annotations__`, which the `with` would drop)."""
    value = _value_of(index, call)
    statement = index.parents.get(value)
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and statement.value is value:
        return statement
    if isinstance(statement, ast.AnnAssign) and statement.value is value and statement.simple:
        return statement if not isinstance(_frame(index, statement), ast.Module) else None
    return None


def response_uses(index: _Index, call: ast.Call, name: str) -> Optional[List[ast.Attribute]]:
    """The `r.<attr>` uses of the response `name` bound by `name = call` (or `with call as name`) in its
    function; None where the response may be seen from anywhere else (another binding, a closure, a bare use)."""
    assign = index.parents.get(call)
    target: Optional[ast.expr] = None
    statement = _binding_statement(index, call)
    if isinstance(statement, ast.Assign):
        target = statement.targets[0]
    elif isinstance(statement, ast.AnnAssign):
        target = statement.target
    elif isinstance(assign, ast.withitem) and assign.context_expr is call:
        target = assign.optional_vars  # `with requests.get(u) as r:`
    if not (isinstance(target, ast.Name) and target.id == name):
        return None
    frame = _frame(index, call)
    if frame is None:
        return None
    uses: List[ast.Attribute] = []
    stack: List[Tuple[ast.AST, bool]] = [(frame, False)]
    while stack:
        node, nested = stack.pop()
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
        if isinstance(node, ast.Name) and node.id == name:
            if nested:
                return None  # a closure may read it after the `with` has closed it
            if node is target:
                pass
            elif not isinstance(node.ctx, ast.Load):
                return None
            else:
                parent = index.parents.get(node)
                if not (isinstance(parent, ast.Attribute) and parent.value is node):
                    return None  # handed on whole: `print(r)`, `keep(r)`, `return r`
                uses.append(parent)
        elif isinstance(node, ast.arg) and node.arg == name and nested:
            continue
        for child in ast.iter_child_nodes(node):
            stack.append((child, nested or (isinstance(child, _NESTED_SCOPES) and child is not frame)))
    return uses


def plan_wrap(
    index: _Index, call: ast.Call, name: str, lines: Sequence[str], reaches: Optional[ast.AST] = None
) -> Optional[Tuple[Wrap, List[ast.Attribute]]]:
    """The `with` for `name = call` when every use of the response (and `reaches`, the write of a body read
    earlier) sits in the statements after it in the same block, and no iterator over its body is kept past
    them; None otherwise."""
    uses = response_uses(index, call, name)
    statement = _binding_statement(index, call)
    if not uses or statement is None:
        return None
    block = _statement_list(index, statement)
    if block is None:
        return None
    first = next(i for i, s in enumerate(block) if s is statement)
    if not _alone_on_its_lines(block, first):
        return None
    last = first
    for use in uses:
        position = _index_holding(block, use)
        if position is None or position <= first:
            return None  # used in another block (or before, on an earlier iteration)
        if use.attr in _STREAM_APIS and _keeps_body_iterator(index, use):
            return None
        last = max(last, position)
    if reaches is not None:
        position = _index_holding(block, reaches)
        if position is None or position <= first:
            return None
        last = max(last, position)
    asynchronous = isinstance(_value_of(index, call), ast.Await)
    wrap = Wrap(
        char_span(lines, _span(block[first])), char_span(lines, _statement_span(block[last])), name, asynchronous
    )
    return wrap, uses


def _httpx_method(call: ast.Call) -> Optional[str]:
    """How `X.<verb>(...)` becomes `X.stream(...)`: the method to insert ("" for `request`), None if it cannot."""
    func = call.func
    if not isinstance(func, ast.Attribute) or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    if any(keyword.arg is None for keyword in call.keywords):
        return None
    if func.attr in _HTTPX_VERBS and len(call.args) == 1:
        return func.attr.upper()
    if func.attr == "request" and len(call.args) == 2:
        return ""
    return None


def _has_keyword(call: ast.Call, name: str) -> bool:
    return any(keyword.arg == name for keyword in call.keywords)


def _body_source(body: ast.expr, library: str) -> Optional[ast.expr]:
    """What the whole-body expression reads the body of (the response, or the inline request): `X` of
    `X.content` (requests, httpx), `X.read()` (urllib), `await X.read()` / `await X.content.read()` (aiohttp);
    None for any other form (`.text` is a str for a text file, and a chunk iterator yields bytes)."""
    if library in _REQUESTS | _HTTPX:
        return body.value if isinstance(body, ast.Attribute) and body.attr == "content" else None
    read = body.value if library == "aiohttp" and isinstance(body, ast.Await) else body
    if library not in ("aiohttp", "urllib.request") or read is body and library == "aiohttp":
        return None
    if not (isinstance(read, ast.Call) and isinstance(read.func, ast.Attribute) and read.func.attr == "read"):
        return None
    if read.args or read.keywords:
        return None
    source = read.func.value
    if library == "aiohttp" and isinstance(source, ast.Attribute) and source.attr == "content":
        source = source.value  # `await resp.content.read()`
    return source


def _plan_write(
    index: _Index, finding: Finding, call: ast.Call, library: str, response: Optional[str], lines: Sequence[str]
) -> Optional[Write]:
    """The chunked write replacing `f.write(<body>)` / `P.write_bytes(<body>)`, when the statement is just that:
    a loop over the body's chunks, or (urllib) `shutil.copyfileobj(resp, f)`."""
    details = finding.details
    write = index.calls.get(tuple(details.get("write") or ()))  # type: ignore[arg-type]
    statement = index.parents.get(write) if write is not None else None
    if write is None or not isinstance(statement, ast.Expr) or details.get("writer") not in ("write", "write_bytes"):
        return None
    if len(write.args) != 1 or write.keywords or not isinstance(write.func, ast.Attribute):
        return None
    if not _evaluated_once(write.func.value):
        return None  # a loop would evaluate the file expression again for every chunk
    body = write.args[0]
    drop: Optional[Span] = None
    if isinstance(body, ast.Name):
        assign = _local_body(index, body, details, lines)
        if assign is None or response is None:
            return None  # an inline request would move from the assignment to the write: leave it
        body = assign.value
        drop = char_span(lines, _span(assign))
    source = _body_source(body, library)
    if source is None or _span(body) != tuple(details["body"]):
        return None
    if response is None:
        if source is not call:
            return None
        block = _statement_list(index, statement)
        if block is None or not _alone_on_its_lines(block, next(i for i, s in enumerate(block) if s is statement)):
            return None
    elif not (isinstance(source, ast.Name) and source.id == response):
        return None
    frame = _frame(index, statement)
    if frame is None:
        return None
    taken: Set[str] = set(index.names_in(frame))
    chunk = free_name(taken, "chunk")
    inline_name = free_name(taken | {chunk}, "r")
    file_name = free_name(taken | {chunk, inline_name}, "f")
    copier: Optional[str] = None
    import_copier = False
    asynchronous = library == "aiohttp" or isinstance(_value_of(index, call), ast.Await)
    if library in _REQUESTS:
        iterator = "iter_content(chunk_size=65536)"
    elif library == "aiohttp":
        iterator = "content.iter_chunked(65536)"
    elif library == "urllib.request":
        iterator = ""
        copier, import_copier = _module_binding(index, "shutil", statement)
        if copier is None:
            return None  # `shutil` means something else here
    else:
        iterator = "aiter_bytes()" if asynchronous else "iter_bytes()"
    return Write(
        char_span(lines, _span(statement)), str(details["writer"]), iterator, response, inline_name, file_name, chunk,
        asynchronous, copier, import_copier, drop,
    )


def _evaluated_once(receiver: ast.expr) -> bool:
    """The file a write goes to can be named again per chunk (`f`, `self.out`), or is a call the fix opens
    once in the `with` header (`open(p, "wb")`, `Path(p)` of `write_bytes`)."""
    if isinstance(receiver, ast.Call):
        return True
    while isinstance(receiver, ast.Attribute):
        receiver = receiver.value
    return isinstance(receiver, ast.Name)


def _local_body(
    index: _Index, name: ast.Name, details: Mapping[str, Any], lines: Sequence[str]
) -> Optional[ast.Assign]:
    """`data = <body>` when `f.write(data)` is the only other use of `data` in the function, and runs after it
    in the same block: the write can then read the body itself and the assignment go."""
    statement = None
    for node in ast.walk(index.tree):
        if isinstance(node, ast.Assign) and _span(node.value) == tuple(details["body"]):
            statement = node
    if statement is None or len(statement.targets) != 1:
        return None
    target = statement.targets[0]
    frame = _frame(index, statement)
    if not isinstance(target, ast.Name) or target.id != name.id or frame is None or frame is not _frame(index, name):
        return None
    occurrences = 0
    for node in ast.walk(frame):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name.id in node.names:
            return None
        if isinstance(node, ast.Name) and node.id == name.id:
            occurrences += 1
        elif isinstance(node, ast.arg) and node.arg == name.id:
            return None
    if occurrences != 2:
        return None  # read elsewhere too, rebound, or deleted
    block = _statement_list(index, statement)
    if block is None:
        return None
    position = next(i for i, s in enumerate(block) if s is statement)
    holding = _index_holding(block, name)
    if holding is None or holding <= position or not _alone_on_its_lines(block, position):
        return None
    # The assignment goes, and a comment on it or just above it would go with it.
    first_line = statement.lineno
    if any("#" in lines[n - 1] for n in range(statement.lineno, (statement.end_lineno or first_line) + 1)):
        return None
    if first_line > 1 and lines[first_line - 2].lstrip().startswith("#"):
        return None
    return statement


def _inside(index: _Index, node: ast.AST, holder: ast.AST) -> bool:
    """`node` runs within `holder` (a `with` statement's body), not in a nested function."""
    current = index.parents.get(node)
    while current is not None and not isinstance(current, _NESTED_SCOPES):
        if current is holder:
            return True
        current = index.parents.get(current)
    return False


def _uses_inside_with(index: _Index, call: ast.Call, name: str) -> Optional[List[ast.Attribute]]:
    """The uses of `with call as name:`'s response when all are inside that `with` and no iterator over the
    body escapes its statement; None otherwise (after the block, a streamed response is closed)."""
    uses = response_uses(index, call, name)
    item = index.parents.get(call)
    holder = index.parents.get(item) if isinstance(item, ast.withitem) else None
    if not uses or holder is None:
        return None
    for use in uses:
        if not _inside(index, use, holder):
            return None
        if use.attr in _STREAM_APIS and _keeps_body_iterator(index, use):
            return None
    return uses


def _request_call(index: _Index, finding: Finding) -> Optional[ast.Call]:
    call = index.calls.get((finding.line, finding.col, finding.end_line, finding.end_col))
    if call is None:
        return None
    if isinstance(index.parents.get(call), ast.Await) and str(finding.details.get("client")) != "httpx.AsyncClient":
        return None  # only an awaited httpx.AsyncClient request has an `async with` form (`client.stream`)
    return call


def _plan_reader(
    index: _Index, finding: Finding, call: ast.Call, library: str, lines: Sequence[str]
) -> Optional[ResponseEdit]:
    """HTP201 for aiohttp (`async with X.get(u) as resp:`, then `async for chunk in resp.content.iter_chunked`)
    and urllib (`shutil.copyfileobj(resp, f)`): the request itself is left as it is."""
    details = finding.details
    response = details.get("response")
    in_with = bool(details.get("in_with"))
    if library == "aiohttp" and not (response and in_with):
        return None  # `resp = await session.get(u)`: who releases it is the author's business
    write = _plan_write(index, finding, call, library, response, lines)
    if write is None:
        return None
    if response:
        uses = response_uses(index, call, response)
        head = _AIOHTTP_HEAD_ATTRS if library == "aiohttp" else _URLLIB_HEAD_ATTRS
        if not uses or len([u for u in uses if u.attr not in head]) != 1:
            return None  # the body is read some other way too (or the response goes elsewhere)
        item = index.parents.get(call)
        holder = index.parents.get(item) if item is not None else None
        write_call = index.calls.get(tuple(details["write"]))  # type: ignore[arg-type]
        if in_with and (holder is None or write_call is None or not _inside(index, write_call, holder)):
            return None  # read after the `with` released it: leave that to the author
    request_span = char_span(lines, _span(call))
    return ResponseEdit(finding.code, request_span, False, None, None, write, _lines(index, call, None, write))


def _plan_one(index: _Index, finding: Finding, lines: Sequence[str], facts: FixFacts) -> Optional[ResponseEdit]:
    details = finding.details
    library = details.get("library")
    call = _request_call(index, finding)
    # In an `async def` a plain `with` still suits a blocking request (HTP403 is reported there anyway); an
    # awaited one gets `async with` (httpx.AsyncClient) or is left alone by `_request_call`.
    if call is None or may_be_stubbed(index.parents, call, details, facts):
        return None  # a stub without `__enter__` / `iter_content` would break the rewritten code
    if finding.code == "HTP201":
        write_call = index.calls.get(tuple(details.get("write") or ()))  # type: ignore[arg-type]
        if write_call is None or appends(index.parents, write_call):
            return None  # a retry after a broken transfer would append the body after the part streamed
    if library in ("aiohttp", "urllib.request") and finding.code == "HTP201":
        return _plan_reader(index, finding, call, str(library), lines)
    if library not in (_REQUESTS | _HTTPX):
        return None
    response = details.get("response")
    in_with = bool(details.get("in_with"))
    code = finding.code
    request_span = char_span(lines, _span(call))
    if code == "HTP203":
        if library not in _REQUESTS or in_with or not response:
            return None
        planned = plan_wrap(index, call, response, lines)
        if planned is None:
            return None
        return ResponseEdit(code, request_span, False, None, planned[0], None, _lines(index, call, planned[0]))
    if code == "HTP202":
        if library not in _REQUESTS or _has_keyword(call, "stream") or not response:
            return None
        wrap: Optional[Wrap] = None
        if in_with:  # `with requests.get(u) as r:` closes it already: only `stream=True` is added
            uses = _uses_inside_with(index, call, response)
        else:
            planned = plan_wrap(index, call, response, lines)
            wrap, uses = planned if planned is not None else (None, None)
        # A streamed body can be read once: `r.content` / `r.json()` after iter_content() would fail.
        if uses is None or any(u.attr not in _HEAD_ATTRS | _STREAM_APIS for u in uses):
            return None
        reads = [u for u in uses if u.attr in _STREAM_APIS and not _sets_raw_attribute(index, u)]
        if len(reads) > 1:
            return None  # a second iteration would find the stream consumed
        safety = SAFE if all(stream_use_safety(index.parents, u) == SAFE for u in reads) else UNSAFE
        return ResponseEdit(code, request_span, True, None, wrap, None, _lines(index, call, wrap), safety)
    if code != "HTP201":
        return None
    if library in _REQUESTS:
        if details.get("stream") not in (False, True) or (_has_keyword(call, "stream") and not details["stream"]):
            return None  # `stream=flag` or a literal `stream=False`: leave it to the author
        httpx_method = None
    else:
        httpx_method = _httpx_method(call)
        if httpx_method is None or in_with:
            return None
    write = _plan_write(index, finding, call, str(library), response, lines)
    if write is None:
        return None
    wrap: Optional[Wrap] = None
    write_call = index.calls.get(tuple(details["write"]))  # type: ignore[arg-type]
    if response and not in_with:
        planned = plan_wrap(index, call, response, lines, write_call if write.drop else None)
        if planned is None:
            return None
        wrap, uses = planned
        body_reads = [u for u in uses if u.attr not in _HEAD_ATTRS]
        if len(body_reads) != 1:  # the one `.content` the write reads, nothing else of the body
            return None
    elif response:
        # `with requests.get(u) as r:` closes it already: only the write changes, if it is the one body read.
        in_with_uses = response_uses(index, call, response) if library in _REQUESTS else None
        if not in_with_uses or len([u for u in in_with_uses if u.attr not in _HEAD_ATTRS]) != 1:
            return None
        item = index.parents.get(call)
        holder = index.parents.get(item) if item is not None else None
        if write.drop and (holder is None or write_call is None or not _inside(index, write_call, holder)):
            return None  # written after the `with` closed the response
    add_stream = library in _REQUESTS and details.get("stream") is False
    return ResponseEdit(code, request_span, add_stream, httpx_method, wrap, write, _lines(index, call, wrap, write))


def _lines(index: _Index, call: ast.Call, wrap: Optional[Wrap], write: Optional[Write] = None) -> Tuple[int, int]:
    low, high = call.lineno, call.end_lineno or call.lineno
    for span in ([wrap.first, wrap.last] if wrap else []) + ([write.statement] if write else []):
        low, high = min(low, span[0]), max(high, span[2])
    return (low, high)


def plan_rule_fixes(findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str],
                    facts: FixFacts = NO_FACTS) -> List[ResponseEdit]:
    """A Planner for one of the three response rules: the findings it is handed are all of one rule."""
    return plan_response_fixes(findings, tree, lines, findings[0].code, facts) if findings else []


def plan_response_fixes(
    findings: Sequence[Finding], tree: ast.Module, lines: Sequence[str], code: str, facts: FixFacts = NO_FACTS
) -> List[ResponseEdit]:
    """The edits for `code`'s findings this round; edits touching the same lines as one already planned wait
    for the next round (the fix loop runs again), so no two edits of a round fight over a statement."""
    index = _Index.of(tree)
    edits: List[ResponseEdit] = []
    for finding in sorted(findings, key=lambda f: (f.line, f.col)):
        if finding.code != code or not finding.details:
            continue
        edit = _plan_one(index, finding, lines, facts)
        if edit is None:
            continue
        if any(not (edit.lines[1] < other.lines[0] or other.lines[1] < edit.lines[0]) for other in edits):
            continue
        edits.append(edit)
    return edits
