"""Generated programs (hypothesmith) never crash the engine."""

from __future__ import annotations

import ast
import warnings

import hypothesmith
import pytest
from splicing import splice
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flake8_http_pool.engine import analyze
from flake8_http_pool.options import Options

# Every import form the bindings know, so generated names like `get` or `Session` may mean the library.
_PRELUDE = """\
import requests, httpx, aiohttp, grequests, urllib.request
import requests as rq
from requests import get, Session, api
from httpx import Client, AsyncClient, stream
from aiohttp import ClientSession
from concurrent.futures import ThreadPoolExecutor
from gevent import monkey
"""

# Fragments with HTTP calls, spliced into generated code so that loops, defs and calls meet the library.
_FRAGMENTS = st.sampled_from(
    [
        "requests.get(u)",
        "for u in urls:\n    get(u)\n",
        "with Session() as s:\n    s.get(u).content\n",
        "async def f(u):\n    async with ClientSession() as s:\n        return await s.get(u)\n",
        "r = requests.get(u, stream=True)\nopen(p, 'wb').write(r.content)\n",
        "monkey.patch_all()\n",
        "ThreadPoolExecutor(32).map(lambda u: rq.get(u), urls)\n",
        "[httpx.get(u) for u in urls if api.get(u)]\n",
    ]
)

_SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


def _parse(source: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None


@pytest.mark.slow
@_SETTINGS
@given(hypothesmith.from_grammar())
def test_engine_never_raises_on_generated_modules(source):
    tree = _parse(_PRELUDE + source)
    if tree is not None:
        analyze(tree, Options(hot_decorators=("task",)))


@pytest.mark.slow
@_SETTINGS
@given(hypothesmith.from_grammar(), _FRAGMENTS, st.integers(min_value=0, max_value=400))
def test_engine_never_raises_with_http_calls_spliced_in(source, fragment, cut):
    tree = _parse(_PRELUDE + splice(source, fragment, cut))
    if tree is not None:
        analyze(tree)


def test_deeply_nested_blocks():
    # 90 nested `if`s (Python allows under 100 statically nested blocks) holding a loop with a call.
    depth = 90
    source = "import requests\n" + "".join(" " * i + "if x:\n" for i in range(depth))
    source += " " * depth + "for u in urls:\n" + " " * (depth + 1) + "requests.get(u)\n"
    found = analyze(ast.parse(source))
    assert [(f.line, f.code) for f in found] == [(depth + 3, "HTP101")]
