"""Generated programs (hypothesmith) with HTTP loops spliced in: `fix --unsafe-fixes` never raises, never emits code that does
not compile, and a second fix changes nothing."""

from __future__ import annotations

import ast
import warnings

import hypothesmith
import pytest
from splicing import splice
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flake8_http_pool.fixing import fix_source

_PRELUDE = """\
import requests, httpx, aiohttp, grequests
import requests as rq
from requests import get, post as send
"""

_FRAGMENT_TEXTS = (
    "for u in urls:\n    get(u)\n",
    "for u in urls:\n    rq.post(u, data)  # keep me\n",
    "while queue:\n    send(queue.pop())\n",
    "x = [httpx.get(u) for u in urls]\n",
    "y = ''.join(requests.get(u).text for u in urls)\n",
    "z = [grequests.get(u) for u in urls]\n",
    "session = client = 1\nfor u in urls:\n    httpx.stream('GET', u)\n",
    "async def f(us):\n    async for u in us:\n        await aiohttp.request('GET', u)\n",
    # unsafe fixes: a hot function (HTP102), a client per iteration (HTP103), a client per call (HTP104)
    "def one(u):\n    return requests.get(u)\nfor u in urls:\n    one(u)\n",
    "for u in urls:\n    with requests.Session() as s:\n        s.get(u)\n",
    "def per(u):\n    with httpx.Client() as c:\n        return c.get(u)\nfor u in urls:\n    per(u)\n",
    "r = requests.get(u)\nopen(p, 'wb').write(r.content)\n",
)
_FRAGMENTS = st.sampled_from(_FRAGMENT_TEXTS)


def _compiles(source: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(ast.parse(source), "<generated>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


@pytest.mark.slow
@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(hypothesmith.from_grammar(), _FRAGMENTS, st.integers(min_value=0, max_value=400))
def test_fix_keeps_generated_code_compiling(source, fragment, cut):
    text = _PRELUDE + splice(source, fragment, cut)
    if not _compiles(text):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fix_source(text, unsafe=True)
        if result.error is not None:
            assert result.text == text
            return
        assert _compiles(result.text)
        again = fix_source(result.text, unsafe=True)
        assert again.text == result.text and again.error is None


def test_every_fragment_is_fixable_on_its_own():
    # Keeps the property test honest: each spliced fragment, alone, gives `fix --unsafe-fixes` work to do.
    for fragment in _FRAGMENT_TEXTS:
        result = fix_source(_PRELUDE + fragment, unsafe=True)
        assert result.error is None and result.applied, fragment
