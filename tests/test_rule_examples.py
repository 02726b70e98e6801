"""Every rule's own examples through the engine, in-process: invalid ones report exactly what they mark, valid ones are silent.

An `invalid` example (and the `example` of the docs page) marks each line that must be reported with a
trailing comment naming every code expected there (`# HTP101` or `# HTP101, HTP403`); the engine must report
exactly that set of (line, code). A `valid` example (and `use_instead`) must get no finding of its rule's code.
Cases are named by rule code and the example's first comment, so adding an example renames nothing else.
"""

from __future__ import annotations

import re
import textwrap
from typing import Iterator, List, Set, Tuple

import pytest

from flake8_http_pool.engine import check_source
from flake8_http_pool.rule import FIX_NONE, FIX_SAFE, FIX_UNSAFE, Rule
from flake8_http_pool.rules import ALL_RULES

# Examples that are right per RULES.md but that the engine does not get right yet: case id -> the engine bug.
# strict=True, so a case that starts passing fails until it is taken off this list.
KNOWN_GAPS = {
}

_MARK = re.compile(r"#\s*(HTP\d{3}(?:\s*,\s*HTP\d{3})*)\s*$")
_KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def expected_marks(source: str) -> Set[Tuple[int, str]]:
    """The (line, code) pairs the trailing `# HTPnnn[, HTPnnn]` comments of `source` ask for."""
    marks = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = _MARK.search(line)
        if match:
            marks.update((number, code.strip()) for code in match.group(1).split(","))
    return marks


def reported(source: str) -> Set[Tuple[int, str]]:
    return {(finding.line, finding.code) for finding in check_source(source)}


def slug(source: str) -> str:
    """The example's name: its first line, a comment saying what it shows, in kebab case."""
    first = source.lstrip().splitlines()[0]
    assert first.startswith("#"), f"an example must start with a comment that names it: {first!r}"
    words = re.findall(r"[a-z0-9]+", first.lstrip("#").lower())
    return "-".join(words)[:60].rstrip("-")


def _case(rule: Rule, kind: str, name: str, source: str):
    case_id = f"{rule.code}-{kind}-{name}"
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[case_id])] if case_id in KNOWN_GAPS else []
    return pytest.param(rule, textwrap.dedent(source), id=case_id, marks=marks)


def _flagged_cases() -> Iterator:
    for rule in ALL_RULES:
        yield _case(rule, "example", "docs", rule.example)
        for source in rule.invalid:
            yield _case(rule, "invalid", slug(textwrap.dedent(source)), source)


def _silent_cases() -> Iterator:
    for rule in ALL_RULES:
        yield _case(rule, "use-instead", "docs", rule.use_instead)
        for source in rule.valid:
            yield _case(rule, "valid", slug(textwrap.dedent(source)), source)


@pytest.mark.parametrize("rule,source", list(_flagged_cases()))
def test_flagged_example_reports_exactly_its_marks(rule: Rule, source: str) -> None:
    expected = expected_marks(source)
    assert any(code == rule.code for _, code in expected), f"the example marks no {rule.code} line"
    got = reported(source)
    missing, extra = sorted(expected - got), sorted(got - expected)
    assert not missing and not extra, f"missing {missing}, unexpected {extra}"


@pytest.mark.parametrize("rule,source", list(_silent_cases()))
def test_silent_example_has_no_finding_of_its_rule(rule: Rule, source: str) -> None:
    assert not expected_marks(source), "a valid example must not carry `# HTPnnn` marks"
    hits = sorted(line for line, code in reported(source) if code == rule.code)
    assert not hits, f"{rule.code} reported on lines {hits}"


def test_known_gaps_name_real_cases() -> None:
    ids = {param.id for param in [*_flagged_cases(), *_silent_cases()]}
    assert set(KNOWN_GAPS) <= ids, sorted(set(KNOWN_GAPS) - ids)


def _names(sources: Tuple[str, ...]) -> List[str]:
    return [slug(textwrap.dedent(source)) for source in sources]


@pytest.mark.parametrize("rule", ALL_RULES, ids=[rule.code for rule in ALL_RULES])
def test_rule_is_documented(rule: Rule) -> None:
    for field in ("summary", "message", "what_it_does", "why_bad", "example", "use_instead", "fix_safety"):
        value = getattr(rule, field)
        assert value.strip() and "TODO" not in value, f"{rule.code}.{field} is not written"
    assert rule.references, f"{rule.code} cites no references"
    assert all(ref.startswith("https://") for ref in rule.references)
    assert rule.fix in (FIX_SAFE, FIX_UNSAFE, FIX_NONE)
    assert bool(rule.fix_title) == (rule.fix != FIX_NONE), "a fix title exactly when there is a fix"
    assert len(rule.valid) >= 3 and len(rule.invalid) >= 3, "at least three valid and three invalid examples"
    for kind, sources in (("valid", rule.valid), ("invalid", rule.invalid)):
        names = _names(sources)
        duplicates = sorted({name for name in names if names.count(name) > 1})
        assert not duplicates, f"{rule.code} {kind} examples share a name: {duplicates}"


def test_codes_match_modules_and_names_are_unique_kebab_case() -> None:
    import importlib
    import pkgutil

    from flake8_http_pool import rules as package

    modules = sorted(m.name for m in pkgutil.iter_modules(package.__path__) if m.name.startswith("htp"))
    assert len(modules) == len(ALL_RULES), "every rule module is in ALL_RULES and nothing else"
    for module_name in modules:
        rule = importlib.import_module(f"{package.__name__}.{module_name}").RULE
        assert module_name == f"{rule.code.lower()}_{rule.name.replace('-', '_')}", module_name
        assert rule in ALL_RULES
    codes = [rule.code for rule in ALL_RULES]
    names = [rule.name for rule in ALL_RULES]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)
    assert len(set(names)) == len(names)
    for rule in ALL_RULES:
        assert re.fullmatch(r"HTP\d{3}", rule.code), rule.code
        assert _KEBAB.match(rule.name), rule.name
