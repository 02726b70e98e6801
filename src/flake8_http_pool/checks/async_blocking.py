"""HTP403: blocking HTTP calls inside `async def`."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator, Optional

from ..bindings import PARAM, FunctionInfo, Meaning, Scope, lookup
from ..finding import Hit
from ..libraries import CLIENT_REQUEST_METHODS, SYNC_CLIENTS, unpooled_family
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


def blocking_http_in_async(analysis: "Analysis") -> Iterator[Hit]:
    """HTP403: a sync unpooled call, or a request on a known sync client (see `_client_known`), in an async def body."""
    for call, ctx in analysis.facts.calls:
        if not ctx.async_body or ctx.func is None:
            continue
        meaning = analysis.meaning(call.func, ctx.scope)
        if meaning is None:
            continue
        if meaning.kind == "lib":
            family = unpooled_family(meaning.qual)
            if family not in _BLOCKING_FAMILIES:
                continue
            name = meaning.qual
        elif (
            meaning.kind == "method"
            and meaning.qual in SYNC_CLIENTS
            and meaning.attr in CLIENT_REQUEST_METHODS
            and _client_known(analysis, call, meaning, ctx)
        ):
            family = meaning.qual.split(".", 1)[0]
            name = f"{_DISPLAY.get(meaning.qual, meaning.qual)}.{meaning.attr}"
        else:
            continue
        yield Hit(
            call,
            {"call": name, "function": ctx.func.qualname, "alternative": _ALTERNATIVE.get(family, "an async client")},
            {"library": family},
        )
