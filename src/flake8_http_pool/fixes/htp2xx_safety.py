"""Per-site fix safety of HTP201/HTP202/HTP203 (RULES.md, "Fix safety"): where a stub may stand for the
response, where a file is opened for appending, where an iterator over the body escapes its statement, and
which HTP202 stream uses keep every chunk the same once the request streams (stdlib only).
"""

from __future__ import annotations

import ast
from typing import Any, Iterator, List, Mapping, Optional, Set

from ..bindings import callee_name, dotted_name
from ..fix_facts import FixFacts

SAFE = "safe"
UNSAFE = "unsafe"

_REQUESTS = frozenset({"requests", "niquests"})
_HTTPX = frozenset({"httpx", "httpx2"})
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
# Calls that drain an iterator (or take one item of it) before they return, keeping nothing of it.
CONSUMERS = frozenset(
    {"list", "tuple", "set", "frozenset", "dict", "sorted", "sum", "min", "max", "any", "all", "join", "next",
     "copyfileobj", "writelines", "write", "len", "bytes", "bytearray"}
)
# Calls that return a lazy iterator over their argument, keeping it only as long as that iterator lives.
_LAZY_WRAPPERS = frozenset({"enumerate", "zip", "map", "filter", "iter", "islice", "chain", "takewhile", "dropwhile"})
# `r.raw.<method>()` returns data read from the body, not something that reads it later.
_RAW_READS = frozenset({"read", "read1", "readline", "readlines", "readinto", "tell", "close", "release_conn"})
# Modules whose `open(path, mode)` takes the mode second; any other `X.open(mode)` (a `Path`) takes it first.
_PATH_FIRST_OPENERS = frozenset({"io", "gzip", "bz2", "lzma", "codecs", "os", "builtins", "tarfile", "zipfile"})
_TEMPORARY_FILES = frozenset({"NamedTemporaryFile", "TemporaryFile", "SpooledTemporaryFile"})


# -- a stub for the response -------------------------------------------------------------------------------
def _library_names(details: Mapping[str, Any], verb: str) -> Set[str]:
    """The library's names whose patching changes what this request returns: the function or method itself,
    what it calls on the way (`Session.request`, `Session.send`), the client class, and what the fix would
    call instead (`httpx.stream`)."""
    library = str(details.get("library") or "")
    client = str(details.get("client") or "")
    names = {str(details.get("callee") or "")}
    if library in _REQUESTS:
        classes = [f"{library}.sessions.Session"] + ([client, f"{library}.Session"] if client else [])
        for cls in classes:
            names.update({cls, f"{cls}.request", f"{cls}.send", f"{cls}.{verb}"})
        if not client:
            names.update({f"{library}.{verb}", f"{library}.api.{verb}", f"{library}.api.request"})
    elif library in _HTTPX:
        cls = client or f"{library}.Client"
        names.update({cls, f"{cls}.request", f"{cls}.send", f"{cls}.stream", f"{cls}.{verb}"})
        if not client:
            names.update({f"{library}.{verb}", f"{library}.stream", f"{library}.request", f"{library}._api.request"})
    elif library == "aiohttp":
        cls = client or "aiohttp.ClientSession"
        names.update({cls, f"{cls}.{verb}", f"{cls}._request", "aiohttp.request"})
    elif library == "urllib.request":
        names.update({"urllib.request.urlopen", "urllib.request.OpenerDirector.open"})
    names.discard("")
    return names


def _frame_of(parents: Mapping[ast.AST, ast.AST], node: ast.AST) -> Optional[ast.AST]:
    current = parents.get(node)
    while current is not None and not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        current = parents.get(current)
    return current


def _bindings(frame: ast.AST, name: str) -> Iterator[Optional[ast.expr]]:
    """What `name` is bound to in `frame` (not in nested scopes): the value, or None for any other binding
    (a parameter, a loop target, an import, `del`, a tuple target)."""
    stack: List[ast.AST] = list(ast.iter_child_nodes(frame))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.arg) and node.arg == name:
            yield None
        if isinstance(node, _NESTED_SCOPES):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
                yield None
            continue
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            yield node.value if len(node.targets) == 1 else None
            stack.append(node.value)
            continue
        if isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
            if node.optional_vars.id == name:
                yield node.context_expr
            stack.append(node.context_expr)
            continue
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            yield None  # a loop target, an augmented or tuple assignment, `del`
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            yield None
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".", 1)[0]) == name for a in node.names):
                yield None
        stack.extend(ast.iter_child_nodes(node))


def may_be_stubbed(parents: Mapping[ast.AST, ast.AST], call: ast.Call, details: Mapping[str, Any],
                   facts: FixFacts) -> bool:
    """Whether a stub may stand for the response of `call` (RULES.md: report only there).

    The project patches or wraps the request function or method (as this module writes it, or the library's
    own name, or what it calls on the way), or the client's class; or the request goes through something
    that is not the library itself: a client bound in this function to anything but its constructor.
    A stub without `__enter__` or `iter_content` would break the `with` and the chunked read.
    """
    func = call.func
    verb = callee_name(func)
    names = _library_names(details, verb)
    written = dotted_name(func)
    if details.get("client"):
        receiver = func.value if isinstance(func, ast.Attribute) else None
        constructor: Optional[ast.expr] = None
        if isinstance(receiver, ast.Call):
            constructor = receiver  # `requests.Session().get(u)`
        elif isinstance(receiver, ast.Name):
            frame = _frame_of(parents, call)
            values = list(_bindings(frame, receiver.id)) if frame is not None else []
            built = {dotted_name(v.func) if isinstance(v, ast.Call) else None for v in values}
            if values and len(built) == 1 and None not in built:
                constructor = values[0]  # type: ignore[assignment]  # every binding calls one constructor
        if constructor is None:
            return True  # the client is not built right here: it may be anything by the time this runs
        built_by = dotted_name(constructor.func)
        if built_by is None:
            return True
        names.update({built_by, f"{built_by}.{verb}", f"{built_by}.request", f"{built_by}.send"})
    elif written is None:
        return True  # `getattr(requests, m)(u)`, `api()[0](u)`: not the library's function as written
    if written:
        names.add(written)
    return facts.is_patched(*sorted(names))


# -- append mode ---------------------------------------------------------------------------------------------
def _mode(opener: ast.Call) -> Optional[str]:
    """The literal mode `opener` opens its file with ("r" / "w+b" when omitted), None when not a literal."""
    func = opener.func
    name = callee_name(func)
    for keyword in opener.keywords:
        if keyword.arg == "mode":
            value = keyword.value
            return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None
        if keyword.arg is None:
            return None
    if any(isinstance(a, ast.Starred) for a in opener.args):
        return None
    if name in _TEMPORARY_FILES:
        position, default = 0, "w+b"
    elif name == "fdopen" or isinstance(func, ast.Name):
        position, default = 1, "r"
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in _PATH_FIRST_OPENERS:
        position, default = 1, "r"
    else:
        position, default = 0, "r"  # `Path(p).open("ab")`
    if len(opener.args) <= position:
        return default
    value = opener.args[position]
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None


def appends(parents: Mapping[ast.AST, ast.AST], write: ast.Call) -> bool:
    """Whether the file `write` (`f.write(...)`, `open(p, "ab").write(...)`) writes to may be opened for
    appending: a mode with "a", or one that is not a literal. A retry after a transfer broken midway then
    appends the whole body after the part the streamed write left (the original wrote nothing on failure)."""
    func = write.func
    if not isinstance(func, ast.Attribute) or func.attr in ("write_bytes", "write_text"):
        return False  # `Path.write_bytes` truncates
    receiver = func.value
    openers: List[Optional[ast.expr]] = []
    if isinstance(receiver, ast.Call):
        openers.append(receiver)
    elif isinstance(receiver, ast.Name):
        frame = _frame_of(parents, write)
        openers.extend(_bindings(frame, receiver.id) if frame is not None else [None])
    else:
        return True  # `self.out.write(...)`: opened who knows where
    for opener in openers or [None]:
        if isinstance(opener, ast.Await):
            opener = opener.value
        mode = _mode(opener) if isinstance(opener, ast.Call) else None
        if mode is None or "a" in mode:
            return True
    return False


# -- iterators over the body ---------------------------------------------------------------------------------
def body_iterator(parents: Mapping[ast.AST, ast.AST], use: ast.Attribute) -> Optional[ast.expr]:
    """The expression that holds an iterator (or file) over the body for the stream use `use` (`r.iter_lines`
    -> the call `r.iter_lines()`, `r.raw` -> itself); None where it only reads data (`r.raw.read(4)`) or sets
    an attribute (`r.raw.decode_content = True`)."""
    parent = parents.get(use)
    if use.attr == "raw":
        if isinstance(parent, ast.Attribute) and parent.value is use:
            if isinstance(parent.ctx, ast.Store):
                return None
            grand = parents.get(parent)
            if parent.attr in _RAW_READS and isinstance(grand, ast.Call) and grand.func is parent:
                return None
        return use
    if isinstance(parent, ast.Call) and parent.func is use:
        return parent
    return use  # the bound method itself: `reader = r.iter_lines`


def iterator_escapes(parents: Mapping[ast.AST, ast.AST], node: ast.expr) -> bool:
    """Whether the iterator `node` may be read after its statement ends: stored (in a name, a list, an
    attribute), returned, yielded, or passed to anything but a call that drains it at once. A response closed
    by a `with` leaves such an iterator empty."""
    while True:
        parent = parents.get(node)
        if parent is None:
            return True
        if isinstance(parent, ast.Call):
            if parent.func is node:
                node = parent  # a method of the iterator (`raw.stream(1024)`) may give another one
                continue
            if any(a is node for a in parent.args) and callee_name(parent.func) in _LAZY_WRAPPERS:
                node = parent  # `enumerate(r.iter_lines())`: an iterator over it; where does that go?
                continue
            return not any(a is node for a in parent.args) or callee_name(parent.func) not in CONSUMERS
        if isinstance(parent, ast.comprehension):
            if parent.iter is not node:
                return True
            comprehension = parents.get(parent)
            if isinstance(comprehension, ast.GeneratorExp):
                node = comprehension  # a lazy generator over it: where does that go?
                continue
            return False  # a list, set or dict comprehension drains it at once
        if isinstance(parent, (ast.For, ast.AsyncFor)):
            return parent.iter is not node
        if isinstance(parent, ast.Expr):
            return False
        if isinstance(parent, (ast.IfExp, ast.BoolOp, ast.Attribute, ast.Await)):
            node = parent
            continue
        return True


# -- HTP202: what stream=True changes ------------------------------------------------------------------------
def _literal_chunk_size(call: ast.Call) -> bool:
    """`iter_content(N)` / `iter_content(chunk_size=N)` with a literal int N > 0 and bytes chunks."""
    if len(call.args) > 1 or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    size: Optional[ast.expr] = call.args[0] if call.args else None
    for keyword in call.keywords:
        if keyword.arg == "chunk_size" and size is None:
            size = keyword.value
        elif keyword.arg == "decode_unicode" and isinstance(keyword.value, ast.Constant):
            if keyword.value.value is not False:
                return False  # str chunks
        else:
            return False
    return (
        isinstance(size, ast.Constant) and type(size.value) is int and size.value > 0  # noqa: E721 - not bool
    )


def _writes_only(body: List[ast.stmt], chunk: str) -> bool:
    """Every statement writes the chunk (`f.write(chunk)`), or is `if chunk:` around such writes."""
    if not body:
        return False
    for statement in body:
        if isinstance(statement, ast.If) and not statement.orelse:
            test = statement.test
            if not (isinstance(test, ast.Name) and test.id == chunk and _writes_only(statement.body, chunk)):
                return False
            continue
        if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
            return False
        write = statement.value
        if not (isinstance(write.func, ast.Attribute) and write.func.attr == "write" and not write.keywords):
            return False
        if len(write.args) != 1 or not (isinstance(write.args[0], ast.Name) and write.args[0].id == chunk):
            return False
        if chunk in {n.id for n in ast.walk(write.func) if isinstance(n, ast.Name)}:
            return False
    return True


def stream_use_safety(parents: Mapping[ast.AST, ast.AST], use: ast.Attribute) -> str:
    """SAFE where `stream=True` leaves what `use` gives the program the same: `iter_content(N)` with a literal N
    whose chunks are only written to a file or joined (`b"".join`, `f.writelines`) - the bytes are the same,
    only the chunk boundaries move. UNSAFE otherwise: `iter_lines()` (a CRLF split across chunks of a chunked
    body yields an extra empty line), `iter_content()` / `iter_content(chunk_size=None)` (other chunks), and
    `.raw` (empty before, the undecoded body after)."""
    if use.attr != "iter_content":
        return UNSAFE
    call = parents.get(use)
    if not (isinstance(call, ast.Call) and call.func is use and _literal_chunk_size(call)):
        return UNSAFE
    holder = parents.get(call)
    if isinstance(holder, ast.For) and holder.iter is call and not holder.orelse:
        target = holder.target
        return SAFE if isinstance(target, ast.Name) and _writes_only(holder.body, target.id) else UNSAFE
    if isinstance(holder, ast.Call) and holder.args == [call] and not holder.keywords:
        func = holder.func
        if isinstance(func, ast.Attribute) and func.attr == "writelines":
            return SAFE
        if isinstance(func, ast.Attribute) and func.attr == "join" and isinstance(func.value, ast.Constant):
            return SAFE if func.value.value == b"" else UNSAFE
    return UNSAFE
