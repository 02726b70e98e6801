"""Fixed code is clean code (RULES.md, "Fix safety"): after `fix`, `check` reports nothing at the sites it fixed
and nothing new that the fix wrote.

For every file, in both modes, code by code: a fixable rule has at most its findings before the fix less one
per applied fix (a fix may settle a neighbouring finding too: HTP201's `with` also closes what HTP203 reports),
and a rule without a fix keeps exactly its findings. A fix that leaves its own finding behind, writes code
another rule reports (an HTP101 session inside a hot function would be HTP104), or hides another rule's
finding (a blocking call through the new shared session in an `async def` is still HTP403) fails.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Iterable, List, Tuple

import pytest

from flake8_http_pool.engine import check_source
from flake8_http_pool.fixing import fix_source
from flake8_http_pool.rule import FIX_NONE
from flake8_http_pool.rules import ALL_RULES
from flake8_http_pool.source_files import SourceError, decode_source

from conftest import fixture_params
from test_corpus import NOT_STDLIB

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): fix, then check, over whole
# trees
pytestmark = pytest.mark.slow


FIXTURES = Path(__file__).parent / "fixtures"


_UNFIXABLE = frozenset(rule.code for rule in ALL_RULES if rule.fix == FIX_NONE)


def _codes(text: str) -> "Counter[str]":
    return Counter(f.code for f in check_source(text))


def unclean(text: str, unsafe: bool) -> Tuple[int, str]:
    """(fixes applied, "" or what is wrong with the fixed text's findings)."""
    result = fix_source(text, unsafe=unsafe)
    if result.error or result.text == text:
        return 0, ""
    before, after = _codes(text), _codes(result.text)
    wrong = sorted(
        code for code in set(before) | set(after)
        if (after[code] != before[code] if code in _UNFIXABLE else after[code] > before[code] - result.applied[code])
    )
    problem = f"{', '.join(wrong)}: before {dict(before)}, applied {dict(result.applied)}, after {dict(after)}"
    return sum(result.applied.values()), problem if wrong else ""


# Files whose fixed text is not yet clean, and why: each must be mended, not kept (strict: a pass fails).
_NOT_YET = {
}


def _cases() -> List[object]:
    cases = []
    for param in fixture_params("", "fixes"):  # a file the running Python cannot parse is skipped, saying why
        path = param.values[0]
        for unsafe in (False, True):
            reason = _NOT_YET.get((path.relative_to(FIXTURES).as_posix(), unsafe))
            marks = [*param.marks, *([pytest.mark.xfail(strict=True, reason=reason)] if reason else [])]
            label = f"{path.relative_to(FIXTURES).as_posix()}-{'unsafe' if unsafe else 'safe'}"
            cases.append(pytest.param(path, unsafe, marks=marks, id=label))
    return cases


@pytest.mark.parametrize("path, unsafe", _cases())
def test_fixtures_and_golden_cases_are_clean_after_fix(path: Path, unsafe: bool) -> None:
    _, problem = unclean(decode_source(path.read_bytes()), unsafe)
    assert not problem, problem


def _python_files(root: Path) -> Iterable[Path]:
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (*NOT_STDLIB, "__pycache__")]
        for name in files:
            if name.endswith(".py"):
                yield Path(directory) / name


def _sweep(root: Path) -> Tuple[int, int, List[str]]:
    """(files fixed, fixes applied, problems) over every file of `root` that names an HTTP library."""
    fixed = applied = 0
    problems: List[str] = []
    for path in _python_files(root):
        data = path.read_bytes()
        if not any(name in data for name in (b"requests", b"httpx", b"aiohttp", b"urllib", b"urllib3", b"gevent",
                                              b"grequests", b"niquests")):
            continue
        try:
            text = decode_source(data)
        except SourceError:
            continue
        for unsafe in (False, True):
            count, problem = unclean(text, unsafe)
            fixed += bool(count)
            applied += count
            if problem:
                problems.append(f"{path} ({'unsafe' if unsafe else 'safe'}): {problem}")
    return fixed, applied, problems


@pytest.mark.slow
def test_standard_library_is_clean_after_fix() -> None:
    stdlib = Path(os.__file__).parent
    fixed, applied, problems = _sweep(stdlib)
    print(f"standard library: {fixed} file fixes, {applied} fixes applied, {len(problems)} unclean")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_corpus_is_clean_after_fix() -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from test_corpus import _fetch_corpus

    corpus = _fetch_corpus()
    fixed, applied, problems = _sweep(corpus)
    print(f"corpus: {fixed} file fixes, {applied} fixes applied, {len(problems)} unclean")
    assert not problems, "\n".join(problems)
