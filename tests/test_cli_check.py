"""`flake8-http-pool check` as a subprocess: the same findings as flake8, exit codes, selection, discovery."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cli_support import assert_no_traceback, run_cli
from conftest import fixture_files, parse_flake8

LOOP = "import requests\nfor u in urls:\n    requests.get(u)\n"
CLEAN = "import requests\nwith requests.Session() as s:\n    for u in urls:\n        s.get(u)\n"
ASYNC = "import requests\nasync def f(u):\n    return requests.get(u)\n"  # HTP403 only


@pytest.fixture(scope="module")
def check_on_fixtures():
    result = run_cli(["check", "--isolated", *fixture_files()])
    assert result.returncode == 1, result.stderr
    assert_no_traceback(result)
    assert result.stderr == ""
    return result


def test_every_fixture_gives_the_same_findings_as_flake8(check_on_fixtures, flake8_on_fixtures):
    ours = parse_flake8(check_on_fixtures.stdout)
    for path in fixture_files():
        key = str(path.resolve())
        assert ours.get(key, set()) == flake8_on_fixtures.get(key, set()), path.name


def test_lines_are_flake8_lines_with_the_same_columns(check_on_fixtures):
    from conftest import run_flake8

    path = fixture_files()[0]
    flake8 = run_flake8([path]).stdout.splitlines()
    ours = [line for line in check_on_fixtures.stdout.splitlines() if line.startswith(str(path) + ":")]
    assert ours == flake8


def test_one_process_and_many_give_the_same_output(tmp_path, check_on_fixtures):
    single = run_cli(["check", "--isolated", "--jobs", "1", *fixture_files()])
    assert single.stdout == check_on_fixtures.stdout


def _tree(root: Path, files: dict) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _codes(stdout: str) -> set:
    return {(Path(line.split(":")[0]).name, int(line.split(":")[1]), line.split()[1]) for line in stdout.splitlines()}


def test_exit_0_when_clean(tmp_path):
    _tree(tmp_path, {"a.py": CLEAN, "b.py": "x = 1\n"})
    result = run_cli(["check", "--isolated", "."], cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_exit_1_with_findings(tmp_path):
    _tree(tmp_path, {"a.py": LOOP, "b.py": CLEAN})
    result = run_cli(["check", "--isolated", "-q", "."], cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "./a.py:3:5: HTP101 " + result.stdout.split(" HTP101 ", 1)[1].splitlines()[0]
    ]


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--no-such-option"],
        ["check", "--select", "http"],
        ["check", "--format", "xml"],
        ["check", "--jobs", "0"],
        ["explain", "HTP999"],
        ["check", "--unpooled-calls", "not a call"],
        [],
    ],
    ids=["unknown-option", "bad-code", "bad-format", "bad-jobs", "unknown-rule", "bad-pattern", "no-command"],
)
def test_exit_2_on_usage_errors(tmp_path, args):
    result = run_cli(args, cwd=tmp_path)
    assert result.returncode == 2, result
    assert result.stderr.strip()
    assert_no_traceback(result)


def test_exit_2_for_a_missing_path_and_the_rest_still_checked(tmp_path):
    _tree(tmp_path, {"a.py": LOOP})
    result = run_cli(["check", "--isolated", "missing.py", "a.py"], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "missing.py: error: no such file or directory\n"
    assert "a.py:3:5: HTP101" in result.stdout


@pytest.mark.parametrize(
    "args,expected",
    [
        ([], {("a.py", 3, "HTP101"), ("b.py", 3, "HTP403")}),
        (["--select", "HTP1"], {("a.py", 3, "HTP101")}),
        (["--select", "HTP4"], {("b.py", 3, "HTP403")}),
        (["--ignore", "HTP403"], {("a.py", 3, "HTP101")}),
        (["--ignore", "HTP"], set()),
        (["--select", "HTP1", "--extend-select", "HTP403"], {("a.py", 3, "HTP101"), ("b.py", 3, "HTP403")}),
        # flake8's rule: the longer prefix wins
        (["--ignore", "HTP4", "--select", "HTP403"], {("b.py", 3, "HTP403")}),
        (["--select", "HTP", "--ignore", "HTP40"], {("a.py", 3, "HTP101")}),
    ],
)
def test_select_ignore_extend_select_match_prefixes(tmp_path, args, expected):
    _tree(tmp_path, {"a.py": LOOP, "b.py": ASYNC})
    result = run_cli(["check", "--isolated", "-q", *args, "."], cwd=tmp_path)
    assert _codes(result.stdout) == expected
    assert result.returncode == (1 if expected else 0)


def test_discovery_skips_tool_and_environment_folders(tmp_path):
    skipped = [".git", "__pycache__", "build", "dist", ".tox", ".nox", "node_modules", "venv", "legacy"]
    _tree(tmp_path, {f"{name}/x.py": LOOP for name in skipped})
    _tree(tmp_path, {"pkg/keep.py": LOOP, "pkg/data.txt": LOOP, "venv/pyvenv.cfg": "home = /usr\n"})
    _tree(tmp_path, {"pkg/old_one.py": LOOP})
    result = run_cli(["check", "--isolated", "-q", "--exclude", "legacy,old_*.py", "."], cwd=tmp_path)
    assert result.stdout.splitlines() and all(line.startswith("./pkg/keep.py:") for line in result.stdout.splitlines())
    assert result.returncode == 1


def test_an_explicit_file_is_checked_whatever_its_name(tmp_path):
    _tree(tmp_path, {"script": LOOP})
    result = run_cli(["check", "--isolated", "script"], cwd=tmp_path)
    assert result.stdout.startswith("script:3:5: HTP101")


def test_files_from_dash_reads_the_file_list_from_stdin(tmp_path):
    _tree(tmp_path, {"a.py": LOOP, "b.py": LOOP, "c.py": LOOP})
    result = run_cli(["check", "--isolated", "-q", "--files-from", "-"], cwd=tmp_path, stdin="a.py\n\nc.py\n")
    assert sorted(line.split(":")[0] for line in result.stdout.splitlines()) == ["a.py", "c.py"]


def test_json_format(tmp_path):
    _tree(tmp_path, {"a.py": LOOP, "b.py": CLEAN})
    result = run_cli(["check", "--isolated", "--format", "json", "."], cwd=tmp_path)
    records = json.loads(result.stdout)
    assert [(r["path"], r["line"], r["col"], r["code"]) for r in records] == [("./a.py", 3, 5, "HTP101")]
    assert records[0]["name"] == "unpooled-call-in-loop"
    assert json.loads(run_cli(["check", "--isolated", "--format", "json", "b.py"], cwd=tmp_path).stdout) == []


def test_rules_explain_help_and_version():
    from flake8_http_pool import __version__
    from flake8_http_pool.rules import ALL_RULES

    rules = run_cli(["rules"])
    assert rules.returncode == 0
    table = [line.split() for line in rules.stdout.split("\n\n")[0].splitlines()]
    assert [row[0] for row in table] == [r.code for r in ALL_RULES]
    # Each rule's fix class, marked `*` where RULES.md decides it per site.
    classes = {row[0]: row[3] for row in table}
    assert classes["HTP101"] == "unsafe*" and classes["HTP202"] == "safe*" and classes["HTP403"] == "none"
    assert "decided per site" in rules.stdout
    records = json.loads(run_cli(["rules", "--format", "json"]).stdout)
    assert [r["code"] for r in records] == [r.code for r in ALL_RULES]
    assert {r["code"]: r["fix"] for r in records}["HTP201"] == "unsafe"
    for rule in ALL_RULES:
        explained = run_cli(["explain", rule.code.lower()])
        assert explained.returncode == 0 and explained.stdout.startswith(f"# {rule.code} {rule.name}")
        assert "## Fix safety" in explained.stdout and f"\nFix: {rule.fix}" in explained.stdout
        assert (f"Per site: {rule.fix_sites}" in explained.stdout) == bool(rule.fix_sites)
    assert run_cli(["explain", "unpooled-call-in-loop"]).stdout.startswith("# HTP101")
    for args in (["--help"], ["check", "--help"], ["rules", "--help"], ["explain", "--help"]):
        helped = run_cli(args)
        assert helped.returncode == 0 and "usage: flake8-http-pool" in helped.stdout
    assert run_cli(["--version"]).stdout.strip() == f"flake8-http-pool {__version__}"


def test_python_dash_m_runs_the_same_command(tmp_path):
    import subprocess
    import sys

    _tree(tmp_path, {"a.py": LOOP})
    result = subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "--isolated", "a.py"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and result.stdout.startswith("a.py:3:5: HTP101")


def test_many_files_in_parallel_keep_their_order(tmp_path):
    names = [f"m{i:03d}.py" for i in range(120)]
    _tree(tmp_path, {name: (LOOP if i % 3 == 0 else CLEAN) for i, name in enumerate(names)})
    result = run_cli(["check", "--isolated", "-q", "--jobs", "2", "."], cwd=tmp_path)
    listed = [line.split(":")[0] for line in result.stdout.splitlines()]
    assert listed == [f"./{name}" for i, name in enumerate(names) if i % 3 == 0]
    assert os.cpu_count()
