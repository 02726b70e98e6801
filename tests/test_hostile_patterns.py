"""Hostile `unpooled-calls` patterns (issue 11): bounded before ast-grep sees them; metavariable callees allowed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cli_support import assert_no_traceback, run_cli
from conftest import parse_flake8, run_flake8

LOOP = "import requests\n\nfor u in urls:\n    requests.get(u)\n"


def _flake8_with_setup_cfg(tmp_path: Path, value: str) -> subprocess.CompletedProcess:
    """flake8 reading the pattern from setup.cfg's [flake8] section (not --isolated, which would skip it)."""
    indented = "\n".join("    " + line for line in value.splitlines())
    (tmp_path / "setup.cfg").write_text(f"[flake8]\nselect = HTP\nhttp-pool-unpooled-calls =\n{indented}\n")
    return subprocess.run([sys.executable, "-m", "flake8", "a.py"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)


def _project(tmp_path: Path, patterns: list) -> None:
    (tmp_path / "a.py").write_text(LOOP)
    listed = ", ".join('"' + p.replace("\\", "\\\\").replace('"', '\\"') + '"' for p in patterns)
    (tmp_path / "pyproject.toml").write_text(f"[tool.flake8-http-pool]\nunpooled-calls = [{listed}]\n")


def test_a_deep_pattern_crashes_ast_grep_itself():
    """The reason for the bounds: ast-grep-py's pattern parser dies with SIGSEGV on a 20,000-deep call."""
    pattern = "f(" * 20000 + ")" * 20000
    code = "import sys\nfrom ast_grep_py import SgRoot\nSgRoot('x', 'python').root().find(pattern=sys.argv[1])"
    crashed = subprocess.run([sys.executable, "-c", code, pattern], capture_output=True, timeout=120)
    if crashed.returncode == 0:
        pytest.skip("this ast-grep-py survives a 20,000-deep pattern")
    assert crashed.returncode == -11  # SIGSEGV: no message, no traceback


@pytest.mark.parametrize("command", [["check"], ["fix", "--diff"], ["fix"]])
def test_a_20000_deep_pattern_in_pyproject_is_one_line_and_exit_2(tmp_path, command):
    deep = "f(" * 20000 + ")" * 20000
    _project(tmp_path, ["mycorp.get($$$)", deep])
    result = run_cli([*command, "a.py"], cwd=tmp_path)
    assert result.returncode == 2, result
    assert result.stderr.count("\n") == 1, result.stderr
    # the config's path is named: a bad pattern may sit in any pyproject.toml of the tree
    assert "unpooled-calls in " in result.stderr and "pyproject.toml: pattern 2 'f(f(f(f(" in result.stderr
    assert "is 60,000 characters long, over the limit of 2,000" in result.stderr
    assert (tmp_path / "a.py").read_text() == LOOP
    assert_no_traceback(result)


def test_a_deep_but_short_pattern_is_refused_for_its_depth(tmp_path):
    deep = "f(" * 60 + ")" * 60
    _project(tmp_path, [deep])
    result = run_cli(["check", "a.py"], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().endswith("nests brackets 60 deep, over the limit of 50"), result.stderr
    # brackets inside a string literal are text, not nesting
    _project(tmp_path, ['mycorp.get("' + "(" * 60 + '", $$$)'])
    assert run_cli(["check", "a.py"], cwd=tmp_path).returncode == 1


def test_too_many_patterns(tmp_path):
    _project(tmp_path, [f"wrapper_{n}($$$)" for n in range(201)])
    result = run_cli(["check", "a.py"], cwd=tmp_path)
    assert result.returncode == 2
    assert "201 patterns, over the limit of 200" in result.stderr
    _project(tmp_path, [f"wrapper_{n}($$$)" for n in range(200)])
    assert run_cli(["check", "a.py"], cwd=tmp_path).returncode == 1  # 200 is allowed; requests.get is found


def test_flake8_with_a_deep_pattern_in_setup_cfg_says_why_and_exits_2(tmp_path):
    (tmp_path / "a.py").write_text(LOOP)
    result = _flake8_with_setup_cfg(tmp_path, "f(" * 20000 + ")" * 20000)
    assert result.returncode == 2, result
    assert result.stderr.startswith("flake8-http-pool: --http-pool-unpooled-calls: 'f(f(f("), result.stderr
    assert "over the limit of 2,000" in result.stderr
    assert_no_traceback(result)


CLIENT_LOOP = '''import mycorp

client = mycorp.Client()
for u in urls:
    client.get(u)
    print(u)
'''


def test_metavariable_callees_are_call_patterns_and_match(tmp_path):
    (tmp_path / "a.py").write_text(CLIENT_LOOP)
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-http-pool]\nunpooled-calls = ["$A.get($$$)"]\n')
    result = run_cli(["check", "a.py"], cwd=tmp_path)
    assert result.returncode == 1, result
    assert result.stdout.startswith("a.py:5:5: HTP101 "), result.stdout
    assert "client.get" in result.stdout or "$A.get" in result.stdout
    flake8 = run_flake8([tmp_path / "a.py"], "--http-pool-unpooled-calls", "$A.get($$$)")
    assert parse_flake8(flake8.stdout) == {str((tmp_path / "a.py").resolve()): {(5, "HTP101")}}
    for pattern in ("print($$$)", "$F($$$)"):
        accepted = run_cli(["check", "--isolated", "--unpooled-calls", pattern, "a.py"], cwd=tmp_path)
        assert accepted.returncode == 1, (pattern, accepted.stderr)
        assert "a.py:6:5: HTP101" in accepted.stdout


@pytest.mark.parametrize("pattern", ["$X", "foo", "1 + 2", "x = f($A)", "f("])
def test_what_cannot_match_a_call_is_refused_with_what_would(tmp_path, pattern):
    (tmp_path / "a.py").write_text(CLIENT_LOOP)
    result = run_cli(["check", "--isolated", "--unpooled-calls", pattern, "a.py"], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == (f"flake8-http-pool: error: unpooled-calls: {pattern!r} cannot match a call: write a "
                             "call, e.g. `mycorp.http.get($$$)` or `$CLIENT.fetch($URL)`\n")


_PATTERN_TEXT = st.text(alphabet=st.sampled_from("f$A.()[]{}'\"# ,x+\\µ\u00e9\n"), max_size=120)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_PATTERN_TEXT)
def test_any_pattern_is_accepted_or_refused_never_raised_otherwise(pattern):
    from flake8_http_pool.custom_calls import PatternError, validate_patterns

    try:
        validate_patterns([pattern])
    except PatternError as error:
        assert "\n" not in str(error)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
# 20,000 levels of `f([])` make 100 KB: one argv string may hold 128 KB
@given(depth=st.integers(min_value=40, max_value=20000), opener=st.sampled_from(["f(", "[", "{", "f(["]))
def test_deep_patterns_never_crash_the_command(tmp_path, depth, opener):
    closer = "".join({"(": ")", "[": "]", "{": "}"}[c] for c in reversed(opener) if c in "([{")
    pattern = "g(" + opener * depth + closer * depth + ")"
    result = run_cli(["check", "--isolated", "--unpooled-calls", pattern, "-"], cwd=tmp_path, stdin=LOOP)
    assert result.returncode in (1, 2), result  # 1: requests.get found; 2: the pattern refused in one line
    if result.returncode == 2:
        assert result.stderr.count("\n") == 1 and "over the limit" in result.stderr, result.stderr


_ARGV_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                     min_size=1, max_size=2500)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(pattern=_ARGV_TEXT)
@example(pattern="-:")  # hypothesis found it: a value starting with `-` given as its own argument
def test_random_patterns_through_the_command_end_in_a_result_or_one_line(tmp_path, pattern):
    # Joined with `=`, as a value that starts with `-` must be given (`--unpooled-calls -:` is argparse's
    # "expected one argument", with its usage, before the command sees the pattern).
    result = run_cli(["check", "--isolated", f"--unpooled-calls={pattern}", "-"], cwd=tmp_path, stdin=LOOP)
    assert result.returncode in (1, 2), result  # never a signal (negative), never a clean pass losing HTP101
    assert_no_traceback(result)
    if result.returncode == 2:
        assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
        assert result.stderr.startswith("flake8-http-pool: error: unpooled-calls: ")
    else:
        assert "HTP101" in result.stdout
