"""The engine's shortcuts give what the long way gives: each answers early where the long way is known to come
to nothing (benchmarks/big_tree.py measures what they save). Every test here compares the two ways on the same
input, on the fixtures, on part of the standard library, and on generated text."""

from __future__ import annotations

import ast
import io
import os
import re
import sys
import tokenize
import unicodedata
from pathlib import Path
from typing import Iterator, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flake8_http_pool import analysis as analysis_module
from flake8_http_pool.analysis import Analysis
from flake8_http_pool.bindings import resolve
from flake8_http_pool.engine import _LIBRARY_WORDS_BUT_URLLIB, imports_a_library
from flake8_http_pool.options import Options
from flake8_http_pool.project import _IMPORT_STATEMENT, import_statements
from flake8_http_pool.source_files import SourceError, as_parser_reads, decode_source

_FIXTURES = Path(__file__).parent / "fixtures"
_STDLIB = Path(os.__file__).parent


def _modules() -> Iterator[ast.Module]:
    """Every fixture module, and every 20th module of the standard library (some with no HTTP at all)."""
    paths: List[Path] = sorted(_FIXTURES.rglob("*.py"))
    paths += sorted(p for p in _STDLIB.glob("*.py"))[::20]
    for path in paths:
        try:
            yield ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue


class _Everything(frozenset):
    """A set holding every name: the shortcuts' sets made to let everything through (the long way)."""

    def __contains__(self, item: object) -> bool:
        return True


def _long_way(analysis: Analysis) -> Analysis:
    analysis._bound = _Everything()
    analysis._class_names = _Everything()
    return analysis


def test_a_name_bound_nowhere_and_an_attribute_named_like_no_method_resolve_as_the_long_way_says() -> None:
    checked = 0
    for tree in _modules():
        short = Analysis(tree, Options())
        long = _long_way(Analysis(tree, Options()))
        for use in short.facts.names:
            assert short.meaning(use.node, use.ctx.scope) == resolve(use.node, use.ctx.scope)
            checked += 1
        for call, ctx in short.facts.calls:
            for expr in [call.func, *call.args, *(k.value for k in call.keywords)]:
                assert short.function_target(expr, ctx) is long.function_target(expr, ctx), ast.dump(expr)
        assert [(s.node.lineno, s.node.col_offset, s.qual) for s in short.unpooled_sites()] == \
            [(s.node.lineno, s.node.col_offset, s.qual) for s in _unpooled_the_long_way(long)]
    assert checked > 10_000


def _unpooled_the_long_way(analysis: Analysis) -> list:
    """unpooled_sites with no attribute left out for its name."""
    saved = analysis_module.UNPOOLED_NAMES
    analysis_module.UNPOOLED_NAMES = _Everything()
    try:
        return list(analysis._find_unpooled())
    finally:
        analysis_module.UNPOOLED_NAMES = saved


_PIECES = st.sampled_from([b"import", b"from", b" ", b"\t", b"\n", b"(", b")", b"a", b"b.c", b".", b" as ",
                           b"importlib", b"#", b"x", b"\\", b"import os\n", b"from . import (\n y,\n z)\n", b"\"",
                           b"\xc3\xa9", b"\r\n", b"from a import (\nimport b\n)\n"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=40).map(b"".join))
def test_import_statements_are_the_pattern_s_own_matches(data: bytes) -> None:
    assert import_statements(data) == _IMPORT_STATEMENT.findall(data)


def test_import_statements_of_real_modules_are_the_pattern_s_own_matches() -> None:
    paths = sorted(_STDLIB.glob("*.py")) + sorted(_FIXTURES.rglob("*.py"))
    for path in paths:
        data = path.read_bytes()
        assert import_statements(data) == _IMPORT_STATEMENT.findall(data), path


def _decoded_the_long_way(data: bytes) -> str:
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"x = 1\n", b"# -*- coding: latin-1 -*-\n", b"# coding=utf-8\n", b"coding\n",
                                 b"\xe9", b"\xef\xbb\xbf", b"'''\n", b"# vim: set fileencoding=ascii :\n"]),
                max_size=6).map(b"".join))
def test_decoding_an_ascii_file_without_a_cookie_skips_tokenize_and_gives_the_same_text(data: bytes) -> None:
    try:
        expected = _decoded_the_long_way(data)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        with pytest.raises(SourceError):
            decode_source(data)
        return
    try:
        assert decode_source(data) == expected
    except SourceError:
        # Refused the long way too, by the interpreter's own rule (a cookie naming an encoding that is not
        # ASCII-compatible), which detect_encoding alone does not check.
        assert b"coding" in data


@pytest.mark.skipif(sys.version_info < (3, 10), reason="match statements exist from Python 3.10")
def test_the_walk_binds_what_match_patterns_capture() -> None:
    from flake8_http_pool.walk import collect

    tree = ast.parse("match x:\n    case {'a': 1, **rest}:\n        pass\n    case [first, *others]:\n        pass\n")
    bound = collect(tree).module_scope.bindings
    assert {"rest", "first", "others"} <= set(bound)


def test_a_module_the_text_gate_lets_pass_has_no_finding_the_walk_would_give() -> None:
    """The gate (engine.may_have_findings) against the walk itself on every fixture and a part of the standard
    library: what it turns away has no finding. Among them, modules importing urllib.request for anything but
    urlopen and urlretrieve (its Request class, openers), which the gate turns away since neither is named."""
    from flake8_http_pool.engine import analyze, may_have_findings

    turned_away = 0
    sources = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(_FIXTURES.rglob("*.py"))]
    sources += [p.read_text(encoding="utf-8", errors="replace") for p in sorted(_STDLIB.glob("*.py"))[::5]]
    sources.append("from urllib import request\n\nfor u in urls:\n    request.build_opener().open(request.Request(u))\n")
    for text in sources:
        if may_have_findings(text):
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        turned_away += 1
        assert analyze(tree, source=text) == [], text[:200]
    assert turned_away > 50
    assert may_have_findings("from urllib import request\n\nfor u in urls:\n    request.urlopen(u)\n")
    assert may_have_findings("from urllib import request\n\nfor u in urls:\n    request.urlretrieve(u, 'f')\n")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"def f", b"class C", b"async def g", b"async  class", b"  ", b"\t", b"\n", b"(",
                                 b":", b"1e5", b"x1", b"_y", b"9", b"\xc3\xa9", b"undef h", b"def", b"async",
                                 b" ", b"#"]), max_size=30).map(b"".join))
def test_words_are_the_patterns_own(data: bytes) -> None:
    from flake8_http_pool.project_run import _WORD, words_of

    assert words_of(data) == set(_WORD.findall(data))


def test_words_of_real_modules_are_the_patterns_own() -> None:
    from flake8_http_pool.project_run import _WORD, words_of

    for path in sorted(_STDLIB.glob("*.py"))[::3] + sorted(_FIXTURES.rglob("*.py")):
        data = path.read_bytes()
        assert words_of(data) == set(_WORD.findall(data)), path


def test_fix_s_project_model_in_worker_processes_gives_the_serial_seeds(tmp_path: Path, monkeypatch) -> None:
    """`fix` runs phase 1 of the gate in its workers from POOL_AT_FILES files on: the seeds are the same."""
    from flake8_http_pool import project_run
    from flake8_http_pool.settings import NO_KEY, Overrides

    wrapper = "import requests\n\n\ndef get_json(url):\n    return requests.get(url, timeout=5).json()\n"
    loop = "from app.http import get_json\n\n\ndef sync(urls):\n    for url in urls:\n        get_json(url)\n"
    files = {"app/__init__.py": "", "app/http.py": wrapper, "app/sync.py": loop}
    files.update({f"app/plain_{i}.py": f"VALUE = {i}\n" for i in range(5)})
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    paths = [(str(tmp_path / name), NO_KEY) for name in files]
    overrides = Overrides(cwd=str(tmp_path))
    serial = project_run.project_seeds(paths, overrides, print, None, 1)
    monkeypatch.setattr(project_run, "POOL_AT_FILES", 2)
    pooled = project_run.project_seeds(paths, overrides, print, None, 2)
    assert serial == pooled and str(tmp_path / "app" / "http.py") in pooled


# The text gate's import test the long way: one pattern over the whole text, as the engine had it.
_LIBRARY_LINE = r"\b(?:import|from)\b[^\n]*?\b(?:requests|httpx|aiohttp|{}|niquests|gevent|grequests|requests_futures)"
_WITH_URLLIB = re.compile(_LIBRARY_LINE.format("urllib"))
_BUT_URLLIB = re.compile(_LIBRARY_LINE.format("urllib3"))
_GATE_PIECES = st.sampled_from(["import", "from", "imports", "_from", " ", "\t", "\n", "\r", ".", ",", "(", "_", "x",
                                "requests", "grequests", "requests_futures", "httpx", "aiohttp", "urllib", "urllib3",
                                "niquests", "gevent", "é", "# ", "\"", "9"])


def _both_ways(text: str) -> None:
    assert imports_a_library(text) == (_WITH_URLLIB.search(text) is not None), repr(text)
    assert imports_a_library(text, _LIBRARY_WORDS_BUT_URLLIB) == (_BUT_URLLIB.search(text) is not None), repr(text)


@settings(max_examples=600, deadline=None)
@given(st.lists(_GATE_PIECES, max_size=30).map("".join))
def test_the_text_gate_s_import_test_is_the_pattern_s(text: str) -> None:
    _both_ways(text)


def test_the_text_gate_s_import_test_is_the_pattern_s_on_real_modules() -> None:
    for path in sorted(_STDLIB.glob("*.py")) + sorted(_FIXTURES.rglob("*.py")):
        _both_ways(path.read_text(encoding="utf-8", errors="replace"))


@settings(max_examples=500, deadline=None)
@given(st.text() | st.lists(st.sampled_from(["ｒｅｑ", "\udc80", "é", "e\u0301", "…", "ﬁ", "①", "ᵢ", "x", " ", "\n",
                                              # marks and jamo a line may start with: folded line by line, none
                                              # may combine with what ends the line before
                                              "\u0301", "\u0338", "<", "\u1100", "\u1161", "\u11a8", "\u0f71",
                                              "\u0f72", "\r"])).map("".join))
def test_text_nfkc_leaves_alone_is_given_back_and_other_text_as_nfkc_makes_it(text: str) -> None:
    assert as_parser_reads(text) == unicodedata.normalize("NFKC", text)
