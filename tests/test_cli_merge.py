"""`merge` through the real command: the shards' JSON and SARIF reports joined give, in every format, the bytes
(report, stderr, exit code) that `check` over all the files gives; duplicates from overlapping shards count
once; a report that cannot be read is named and the others still merged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Dict, List, Tuple

import jsonschema
import pytest

from cli_support import assert_no_traceback, run_cli
from flake8_http_pool.formats import FORMATS
from project_trees import python_files, round_robin, sharded_tree

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): reports are made by whole
# runs, then merged
pytestmark = pytest.mark.slow

NEW_FIELDS = ("char_col", "end_char_col", "source_line", "reason", "where")
SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


class Run:
    """The sharding tree checked whole, and by three shards writing JSON and SARIF reports."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        (tree / "all.txt").write_text("".join(p + "\n" for p in python_files(tree)), encoding="utf-8")
        self.reports: Dict[str, List[str]] = {"json": [], "sarif": []}
        self._whole: Dict[Tuple[str, ...], Tuple[str, str, int]] = {}
        for number, part in enumerate(round_robin(python_files(tree), 3)):
            (tree / f"s{number}.txt").write_text("".join(p + "\n" for p in part), encoding="utf-8")
            for kind in self.reports:
                name = f"shard-{number}.{kind}"
                done = run_cli(["check", "--files-from", f"s{number}.txt", "--project-from", "all.txt",
                                "--output-format", kind, "-o", name, "--exit-zero"], cwd=tree)
                assert_no_traceback(done)
                self.reports[kind].append(name)

    def whole(self, *args: str) -> Tuple[str, str, int]:
        """`check` over all the files, run once per set of arguments."""
        if args not in self._whole:
            done = run_cli(["check", "--files-from", "all.txt", *args], cwd=self.tree)
            assert_no_traceback(done)
            self._whole[args] = done.stdout, done.stderr, done.returncode
        return self._whole[args]

    def merge(self, *args: str) -> Tuple[str, str, int]:
        done = run_cli(["merge", *args], cwd=self.tree)
        assert_no_traceback(done)
        return done.stdout, done.stderr, done.returncode


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    return Run(sharded_tree(tmp_path_factory.mktemp("merge") / "tree"))


def test_the_tree_has_what_the_round_trip_must_carry(run: Run) -> None:
    records = json.loads(run.whole("--output-format", "json")[0])
    codes = {r["code"] for r in records}
    assert codes == {"HTP101", "HTP102", "HTP104", "HTP203", "E999"}
    assert {r["fix"] for r in records} == {"safe", "unsafe", None}
    assert any(r["details"].get("hot_file") for r in records)  # a related location in SARIF
    assert any(r.get("char_col") != r["col"] for r in records)  # columns in characters and bytes differ


@pytest.mark.parametrize("kind", ["json", "sarif", "mixed"])
@pytest.mark.parametrize("output", FORMATS)
def test_merge_writes_what_check_writes(run: Run, output: str, kind: str) -> None:
    reports = run.reports["json" if kind != "sarif" else "sarif"][:]
    if kind == "mixed":
        reports[1] = run.reports["sarif"][1]
    expected = run.whole("--output-format", output)
    assert expected[2] == 2  # bad.py
    assert run.merge(*reports, "--output-format", output) == expected


def test_merge_to_a_file_with_statistics_and_count(run: Run) -> None:
    for output in ("sarif", "text"):
        whole = run.whole("--output-format", output, "-o", "whole.out", "--statistics", "--count")
        merged = run.merge(*run.reports["json"], "--output-format", output, "-o", "merged.out", "--statistics",
                           "--count")
        assert merged == whole
        assert (run.tree / "merged.out").read_bytes() == (run.tree / "whole.out").read_bytes()


def test_merged_sarif_validates_and_keeps_related_locations(run: Run) -> None:
    document = json.loads(run.merge(*run.reports["json"], "--output-format", "sarif")[0])
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    (wrapper,) = [r for r in document["runs"][0]["results"] if r["ruleId"] == "HTP102"]
    place = wrapper["relatedLocations"][0]["physicalLocation"]
    assert place["artifactLocation"] == {"uri": "app/sync.py", "uriBaseId": "%SRCROOT%"}
    assert place["region"] == {"startLine": 6}


def test_overlapping_shards_count_each_finding_once(run: Run) -> None:
    run.whole("--output-format", "json", "-o", "everything.json")
    shutil.copy(run.tree / "everything.json", run.tree / "copy.json")
    reports = [run.reports["json"][0], run.reports["sarif"][0], "everything.json", *run.reports["json"], "copy.json"]
    assert run.merge(*reports) == run.whole()


def test_an_unreadable_report_is_named_and_the_others_are_merged(run: Run) -> None:
    (run.tree / "garbage.json").write_text("{not json", encoding="utf-8")
    (run.tree / "other.json").write_text('[{"description": "x", "fingerprint": "y"}]', encoding="utf-8")
    run_cli(["check", "--files-from", "all.txt", "--output-format", "gitlab", "-o", "gitlab.json"], cwd=run.tree)
    good = run.reports["json"]
    stdout, stderr, code = run.merge(good[0], "missing.json", "garbage.json", good[1], "other.json",
                                     "gitlab.json", good[2])
    expected = run.whole()
    assert (stdout, code) == (expected[0], 2)
    bad = [line for line in stderr.splitlines() if line.startswith("flake8-http-pool: error: ")]
    assert [line.split(": ")[2] for line in bad] == ["missing.json", "garbage.json", "other.json", "gitlab.json"]
    assert "missing.json: cannot be read: no such file or directory" in stderr
    assert stderr.replace("\n".join(bad) + "\n", "") == expected[1]


def test_exit_codes(run: Run, tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_text("[]\n", encoding="utf-8")
    clean = run_cli(["merge", "empty.json"], cwd=tmp_path)
    assert (clean.stdout, clean.returncode) == ("", 0)
    records = json.loads((run.tree / run.reports["json"][0]).read_text(encoding="utf-8"))
    findings = [r for r in records if r["name"] != "error"]
    assert findings
    (tmp_path / "findings.json").write_text(json.dumps(findings), encoding="utf-8")
    assert run_cli(["merge", "findings.json"], cwd=tmp_path).returncode == 1
    assert run_cli(["merge", "--exit-zero", "findings.json"], cwd=tmp_path).returncode == 0
    assert run_cli(["merge", "--exit-zero", "findings.json", "missing.json"], cwd=tmp_path).returncode == 2


def test_reports_from_before_the_exact_fields_still_merge(run: Run, tmp_path: Path) -> None:
    """A JSON report without char_col, end_char_col, source_line, reason and where (and a SARIF one without its
    extra properties) reads: the formats that show none of them come out the same."""
    old_json, old_sarif = [], []
    for number, (json_name, sarif_name) in enumerate(zip(run.reports["json"], run.reports["sarif"])):
        records = json.loads((run.tree / json_name).read_text(encoding="utf-8"))
        for record in records:
            for key in NEW_FIELDS:
                record.pop(key, None)
        old_json.append(f"old-{number}.json")
        (run.tree / old_json[-1]).write_text(json.dumps(records), encoding="utf-8")
        document = json.loads((run.tree / sarif_name).read_text(encoding="utf-8"))
        for result in document["runs"][0]["results"]:
            result["properties"] = {"fix": result["properties"]["fix"]}
        for invocation in document["runs"][0]["invocations"]:
            for note in invocation.get("toolExecutionNotifications", ()):
                del note["properties"]
        old_sarif.append(f"old-{number}.sarif")
        (run.tree / old_sarif[-1]).write_text(json.dumps(document), encoding="utf-8")
    for output in ("text", "pylint"):
        assert run.merge(*old_json, "--output-format", output) == run.whole("--output-format", output), output

    def without_new_fields(done: Tuple[str, str, int]) -> Tuple[List[dict], int]:
        return [{k: v for k, v in r.items() if k not in NEW_FIELDS} for r in json.loads(done[0])], done[2]

    assert without_new_fields(run.merge(*old_json, "--output-format", "json")) == \
        without_new_fields(run.whole("--output-format", "json"))

    # SARIF counts characters: the same findings, places and related places, the byte columns aside.

    def places(records: List[dict]) -> List[Tuple[object, ...]]:
        return [(r["path"].lstrip("./"), r["code"], r["line"], r["message"], r["fix"],
                 r["details"].get("hot_line")) for r in records]

    merged_records = json.loads(run.merge(*old_sarif, "--output-format", "json")[0])
    assert places(merged_records) == places(json.loads(run.whole("--output-format", "json")[0]))


def test_help_says_what_merge_reads_writes_and_returns() -> None:
    done = run_cli(["merge", "--help"])
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    for words in ("REPORT", "--output-format", "sarif", "json", "--output-file", "--exit-zero",
                  "--project-from", "Exit 0", "2: a report that could not be read"):
        assert words in text, words
    assert "merge" in run_cli(["--help"]).stdout
