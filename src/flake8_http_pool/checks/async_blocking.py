"""HTP403: blocking HTTP calls inside `async def`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, Iterator, List, NamedTuple, Optional, Set, Tuple

from ..bindings import PARAM, FunctionInfo, Meaning, Scope, callee_name, lookup
from ..finding import Hit
from ..graphs import spread_to_callers
from ..libraries import CLIENT_REQUEST_METHODS, SYNC_CLIENTS, shown, unpooled_family
from ..walk import Ctx

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis import Analysis

# aiohttp.request is async and grequests.* only builds a request: neither blocks here.
_BLOCKING_FAMILIES = frozenset({"requests", "niquests", "httpx", "httpx2", "urllib.request"})
_ALTERNATIVE = {
    "requests": "aiohttp or httpx.AsyncClient",
    "niquests": "niquests.AsyncSession",
    "httpx": "httpx.AsyncClient",
    "httpx2": "httpx2.AsyncClient",
    "urllib.request": "aiohttp or httpx.AsyncClient",
}

# `requests.session()` builds a `requests.Session`; name the class in messages.
_DISPLAY = {"requests.session": "requests.Session"}


def _function_of(scope: Optional[Scope]) -> Optional[FunctionInfo]:
    """The def whose body holds `scope` (comprehensions belong to the function around them; lambdas do not)."""
    while scope is not None and scope.kind == "comprehension":
        scope = scope.parent
    if scope is None or scope.kind != "function":
        return None
    return scope.function


def _client_known(analysis: "Analysis", call: ast.Call, meaning: Meaning, ctx: Ctx) -> bool:
    """The sync client whose method is called is known to be one where this function runs: created in this very
    function or at module level (`_HTTP_SESSION = requests.Session()`, which HTP102's fix writes), stored on
    `self` by the class (every store a constructor), or a parameter of this function annotated as one.

    A client bound in an enclosing function, or handed in unannotated, is left alone: it may be anything.
    """
    constructor = meaning.node
    if isinstance(constructor, ast.Call):
        site = analysis.call_site(constructor)
        # ctx.func None: the constructor runs at module level, so every call of this function sees its client.
        return site is not None and (site.ctx.func is ctx.func or site.ctx.func is None)
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    if isinstance(receiver, ast.Attribute):
        return True  # `self.session.get(...)`: the class stores only constructed clients under that name
    # No constructor: the client comes from an annotation (`s: requests.Session`), a parameter of this function.
    if not isinstance(receiver, ast.Name):
        return False
    binding = lookup(receiver.id, ctx.scope, (receiver.lineno, receiver.col_offset))
    return binding is not None and binding.kind == PARAM and _function_of(binding.scope) is ctx.func


def _blocking_call(analysis: "Analysis", call: ast.Call, ctx: Ctx) -> Optional[Tuple[str, str]]:
    """(the name messages give it, its library) when `call` is itself a blocking HTTP call, else None."""
    meaning = analysis.meaning(call.func, ctx.scope)
    if meaning is None:
        return _known_client_call(analysis, call, ctx)
    if meaning.kind == "lib":
        family = unpooled_family(meaning.qual)
        return (shown(meaning.qual), family) if family in _BLOCKING_FAMILIES else None
    if (
        meaning.kind == "method"
        and meaning.qual in SYNC_CLIENTS
        and meaning.attr in CLIENT_REQUEST_METHODS
        and _client_known(analysis, call, meaning, ctx)
    ):
        return f"{_DISPLAY.get(meaning.qual, meaning.qual)}.{meaning.attr}", meaning.qual.split(".", 1)[0]
    return None


def _known_client_call(analysis: "Analysis", call: ast.Call, ctx: Ctx) -> Optional[Tuple[str, str]]:
    """A request method of a sync client that connections.client_behind knows (a factory of this module made it,
    `SESSION = make_session()`, or a call of this module passes it to the parameter), bound at module level or
    in this very function, as `_client_known` takes a constructor's."""
    from .connections import client_behind

    made = client_behind(analysis, call, ctx.scope)
    if made is None or made[0] not in SYNC_CLIENTS or (made[1] is not None and made[1] is not ctx.func):
        return None
    return f"{_DISPLAY.get(made[0], made[0])}.{callee_name(call.func)}", made[0].split(".", 1)[0]


class Blocker(NamedTuple):
    """Why a synchronous project function blocks on every run: the blocking call it reaches, where that call
    is (path from the project root, or "" for this module; its line; the absolute path, "" for this module)
    and its library."""

    call: str
    path: str
    line: int
    file: str
    family: str


# Decorators that leave a def's body running as written when it is called; any other decorator may make it a
# coroutine function (`@sync_to_async`), cache it (`@lru_cache`: blocks on the first call only) or defer it.
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod"})


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _plain(func: FunctionInfo) -> bool:
    """Not `async def`, and decorated by nothing that may change what calling it does."""
    return not func.is_async and all(
        isinstance(decorator, ast.Name) and decorator.id in _PLAIN_DECORATORS for decorator in func.node.decorator_list
    )


def may_block_every_run(func: FunctionInfo, analysis: "Analysis") -> bool:
    """A plain synchronous def whose call runs its body: not `async def`, not a generator, not decorated."""
    return _plain(func) and id(func.node) not in _generator_defs(analysis)


def _generator_defs(analysis: "Analysis") -> Set[int]:
    """The ids of the module's defs whose own body yields (generators: calling one runs none of its body).

    Found from the walk's parent map rather than by walking every body again (which cost as much as the walk
    itself): a `yield` with a value is the parent of that value; a bare one sits in a statement's `value`.
    """
    cached = analysis.__dict__.get("_generator_defs")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    yields: Dict[int, ast.AST] = {}
    for node in analysis.facts.parents.values():
        kind = type(node)
        if kind is ast.Yield or kind is ast.YieldFrom:
            yields[id(node)] = node
        elif kind in _VALUE_STATEMENTS and type(getattr(node, "value", None)) is ast.Yield:
            yields[id(node.value)] = node.value  # type: ignore[attr-defined]
    found: Set[int] = set()
    for node in yields.values():
        owner = analysis.parent(node)
        while owner is not None and not isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            owner = analysis.parent(owner)
        if owner is not None:
            found.add(id(owner))
    analysis.__dict__["_generator_defs"] = found
    return found


_VALUE_STATEMENTS = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign)


def runs_every_time(analysis: "Analysis", call: ast.Call, ctx: Ctx) -> bool:
    """The call runs each time its function runs: in the function's own body (not a nested def or lambda, not
    deferred), under no branch, loop or handler, and after no statement of the body that may return or raise
    first (`if cached: return cached` before it). RULES.md asks for a blocking call "on every run"."""
    from ..project import _unconditional

    func = ctx.func
    if func is None or ctx.deferred or not _unconditional(analysis, call, func):
        return False
    statement: Optional[ast.AST] = call
    while statement is not None and analysis.parent(statement) is not func.node:
        statement = analysis.parent(statement)
    # Per function, once: the position of each top-level statement, and of the first that may leave early
    # (scanning the statements before every call would be quadratic in a long function).
    cache: Dict[int, Tuple[Dict[int, int], int]] = analysis.__dict__.setdefault("_first_exit", {})
    known = cache.get(id(func.node))
    if known is None:
        body = func.node.body
        first = next((i for i, stmt in enumerate(body) if _may_leave(stmt)), len(body))
        known = cache[id(func.node)] = ({id(stmt): i for i, stmt in enumerate(body)}, first)
    position = known[0].get(id(statement))
    return position is not None and position <= known[1]


def _may_leave(statement: ast.stmt) -> bool:
    """The statement may end the function's run early: a `return` / `raise` in it, outside nested defs. Both
    are statements, so only statement lists are searched, never expressions (a tenth of the nodes)."""
    stack: List[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Return, ast.Raise)):
            return True
        if node is not statement and isinstance(node, _NESTED):
            continue  # a nested def's `return` ends the nested def, not this function
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, field, None)
            if isinstance(children, list):
                stack.extend(children)
    return False


def blocking_functions(analysis: "Analysis") -> Dict[FunctionInfo, Blocker]:
    """The module's synchronous functions that make a blocking HTTP call on every run, directly or through
    functions that do (this module's, or another module's as the project model hands them in
    `analysis.extra_blocking`, keyed by the position of the call): a fixpoint. Computed once."""
    cached = getattr(analysis, "_blocking_functions", None)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    found: Dict[FunctionInfo, Blocker] = {}
    edges: Dict[FunctionInfo, List[FunctionInfo]] = {}  # callee -> the functions calling it every run
    for call, ctx in analysis.facts.calls:
        func = ctx.func
        if func is None or not _plain(func):
            continue
        # What the call is first (cheap, remembered), whether it runs every time only for the few that matter.
        direct = _blocking_call(analysis, call, ctx)
        seed = analysis.extra_blocking.get((call.lineno, call.col_offset)) if direct is None else None
        target = analysis.function_target(call.func, ctx) if direct is None and seed is None else None
        if target is not None and (target is func or not may_block_every_run(target, analysis)):
            target = None
        if direct is None and seed is None and target is None:
            continue
        if not may_block_every_run(func, analysis) or not runs_every_time(analysis, call, ctx):
            continue
        if direct is not None:
            found.setdefault(func, Blocker(direct[0], "", call.lineno, "", direct[1]))
        elif seed is not None:
            found.setdefault(func, Blocker(seed[0], seed[1], seed[2], seed[3], seed[5]))
        elif target is not None:
            edges.setdefault(target, []).append(func)
    spread_to_callers(found, edges)
    setattr(analysis, "_blocking_functions", found)
    return found


def _where(blocker: Blocker) -> str:
    return f"{blocker.path}:{blocker.line}" if blocker.path else f"line {blocker.line}"


def blocking_http_in_async(analysis: "Analysis") -> Iterator[Hit]:
    """HTP403: a sync unpooled call, or a request on a known sync client (see `_client_known`), in an async def
    body; or a call there of a synchronous project function that makes one on every run (`blocking_functions`)."""
    blocking: Optional[Dict[FunctionInfo, Blocker]] = None
    for call, ctx in analysis.facts.calls:
        if not ctx.async_body or ctx.func is None:
            continue
        direct = _blocking_call(analysis, call, ctx)
        if direct is not None:
            name, family = direct
            yield Hit(
                call,
                {"call": name, "via": "", "function": ctx.func.qualname,
                 "alternative": _ALTERNATIVE.get(family, "an async client"), "offload": "..."},
                {"library": family},
            )
            continue
        if blocking is None:
            blocking = blocking_functions(analysis)
        blocker: Optional[Blocker] = None
        helper = ""
        seed = analysis.extra_blocking.get((call.lineno, call.col_offset))
        if seed is not None:
            blocker = Blocker(seed[0], seed[1], seed[2], seed[3], seed[5])
            helper = seed[4]
        else:
            target = analysis.function_target(call.func, ctx)
            if target is not None and target in blocking:
                blocker, helper = blocking[target], target.qualname
        if blocker is None:
            continue
        name = ast.unparse(call.func) if isinstance(call.func, (ast.Name, ast.Attribute)) else helper
        details: Dict[str, object] = {"library": blocker.family, "helper": helper, "blocking_call": blocker.call,
                                      "blocking_line": blocker.line}
        if blocker.path:
            details.update(blocking_path=blocker.path, blocking_file=blocker.file)
        yield Hit(
            call,
            {"call": name, "via": f", which calls {blocker.call}() ({_where(blocker)}) on every run,",
             "function": ctx.func.qualname, "alternative": _ALTERNATIVE.get(blocker.family, "an async client"),
             "offload": f"{name}, ..."},
            details,
        )
