"""Every fixture file through the real flake8: the exact set of (line, code) its comments expect."""

from __future__ import annotations

import pytest

from conftest import fixture_files, fixture_params
from fixture_expectations import read_expectations

_FILES = fixture_files()


@pytest.mark.parametrize("path", fixture_params(label=lambda p: p.name))
def test_fixture_reports_exactly_what_it_expects(path, flake8_on_fixtures):
    expectations = read_expectations(path)
    got = flake8_on_fixtures.get(str(path.resolve()), set())
    known_gaps = set(expectations.xfail)
    got_checked = got - known_gaps
    missing = sorted(expectations.expected - got_checked)
    extra = sorted(got_checked - expectations.expected)
    assert not missing and not extra, f"missing {missing}, unexpected {extra}"


def _xfail_cases():
    for path in _FILES:
        for (line, code), reason in sorted(read_expectations(path).xfail.items()):
            yield pytest.param(path, line, code, id=f"{path.name}:{line}:{code}",
                               marks=pytest.mark.xfail(strict=True, reason=reason))


@pytest.mark.parametrize("path,line,code", list(_xfail_cases()))
def test_known_gap_is_reported(path, line, code, flake8_on_fixtures):
    assert (line, code) in flake8_on_fixtures.get(str(path.resolve()), set())


def test_every_rule_has_five_positive_and_five_negative_lines():
    from flake8_http_pool.rules import ALL_RULES

    for rule in ALL_RULES:
        files = [p for p in _FILES if p.name.startswith(rule.code)]
        positives = sum(1 for p in files for _, code in read_expectations(p).expected if code == rule.code)
        negatives = sum(p.read_text(encoding="utf-8").count("# negative") for p in files)
        assert positives >= 5, f"{rule.code}: {positives} positive lines"
        assert negatives >= 5, f"{rule.code}: {negatives} negative cases"
