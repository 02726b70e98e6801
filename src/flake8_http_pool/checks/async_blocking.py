"""HTP403: blocking HTTP calls inside `async def`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ..finding import Hit
from ..libraries import CLIENT_REQUEST_METHODS, SYNC_CLIENTS, unpooled_family

if TYPE_CHECKING:  # pragma: no cover
    from ..analysis import Analysis

_BLOCKING_FAMILIES = frozenset({"requests", "niquests", "httpx", "httpx2", "urllib.request"})
_ALTERNATIVE = {
    "requests": "aiohttp or httpx.AsyncClient",
    "niquests": "niquests.AsyncSession",
    "httpx": "httpx.AsyncClient",
    "httpx2": "httpx2.AsyncClient",
    "urllib.request": "aiohttp or httpx.AsyncClient",
}


def blocking_http_in_async(analysis: "Analysis") -> Iterator[Hit]:
    for call, ctx in analysis.facts.calls:
        if not ctx.async_body:
            continue
        meaning = analysis.meaning(call.func, ctx.scope)
        if meaning is None:
            continue
        if meaning.kind == "lib":
            family = unpooled_family(meaning.qual)
            if family not in _BLOCKING_FAMILIES:
                continue
            name = meaning.qual
        elif meaning.kind == "method" and meaning.qual in SYNC_CLIENTS and meaning.attr in CLIENT_REQUEST_METHODS:
            family = meaning.qual.split(".", 1)[0]
            name = f"{meaning.qual}.{meaning.attr}"
        else:
            continue
        function = ctx.func.qualname if ctx.func is not None else "?"
        yield Hit(
            call,
            {"call": name, "function": function, "alternative": _ALTERNATIVE.get(family, "an async client")},
            {"library": family},
        )
