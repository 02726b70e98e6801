"""`flake8-http-pool fix` end to end through the installed command: modes, exit codes, selection, errors."""

from __future__ import annotations

import re
from pathlib import Path

from cli_support import assert_no_traceback, run_cli

LOOP = "import requests\n\nfor url in URLS:\n    requests.get(url)\n"
FIXED = "import requests\n\nwith requests.Session() as session:\n    for url in URLS:\n        session.get(url)\n"


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "loop.py").write_text(LOOP)
    (tmp_path / "pkg" / "clean.py").write_text("import requests\nrequests.get(URL)\n")
    (tmp_path / "pkg" / "plain.py").write_text("print('no http here')\n")
    return tmp_path


def test_fix_writes_and_summarises(tmp_path: Path) -> None:
    _tree(tmp_path)
    clean_before = (tmp_path / "pkg" / "clean.py").stat().st_mtime_ns
    result = run_cli(["fix", "--isolated", "--unsafe-fixes", "pkg"], cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "pkg" / "loop.py").read_text() == FIXED
    assert (tmp_path / "pkg" / "clean.py").stat().st_mtime_ns == clean_before
    assert "3 files scanned, 1 changed, 1 fix (HTP101: 1)" in result.stderr
    again = run_cli(["fix", "--isolated", "--unsafe-fixes", "--check", "pkg"], cwd=tmp_path)
    assert again.returncode == 0 and "0 would change" in again.stderr
    check = run_cli(["check", "--isolated", "pkg"], cwd=tmp_path)
    assert "HTP101" not in check.stdout


def test_check_and_diff_write_nothing(tmp_path: Path) -> None:
    _tree(tmp_path)
    result = run_cli(["fix", "--isolated", "--unsafe-fixes", "--check", "pkg"], cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "would fix pkg/loop.py (HTP101: 1)" in result.stdout
    diff = run_cli(["fix", "--isolated", "--unsafe-fixes", "--diff", "pkg"], cwd=tmp_path)
    assert diff.returncode == 1, diff.stderr  # as ruff's --diff: 1 when it would change something
    assert diff.stdout.startswith("--- pkg/loop.py\n+++ pkg/loop.py\n")
    assert "+    for url in URLS:\n" in diff.stdout and "-    requests.get(url)\n" in diff.stdout
    assert (tmp_path / "pkg" / "loop.py").read_text() == LOOP


def test_unsafe_fix_is_declared_and_left_without_the_flag(tmp_path: Path) -> None:
    """HTP101's session changes cookies and connection reuse (RULES.md): `fix` alone leaves it and says so."""
    _tree(tmp_path)
    result = run_cli(["fix", "--isolated", "pkg"], cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # as ruff's: a finding left unfixed exits 1
    assert (tmp_path / "pkg" / "loop.py").read_text() == LOOP
    assert "0 changed" in result.stderr
    assert "1 unsafe fix not applied (HTP101: 1); use --unsafe-fixes to apply" in result.stderr


def test_config_moves_a_rule_between_safe_and_unsafe(tmp_path: Path) -> None:
    """`extend-safe-fixes` makes `fix` apply HTP101 without the flag; `extend-unsafe-fixes` holds a safe one."""
    _tree(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-http-pool]\nextend-safe-fixes = ["HTP101"]\n')
    result = run_cli(["fix", "pkg"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "pkg" / "loop.py").read_text() == FIXED
    (tmp_path / "pkg" / "loop.py").write_text(LOOP)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flake8-http-pool]\nextend-safe-fixes = ["HTP1"]\nextend-unsafe-fixes = ["HTP101"]\n'
    )
    held = run_cli(["fix", "pkg"], cwd=tmp_path)
    assert (tmp_path / "pkg" / "loop.py").read_text() == LOOP
    assert "1 unsafe fix not applied (HTP101: 1)" in held.stderr


def test_select_ignore_and_stdin_list(tmp_path: Path) -> None:
    _tree(tmp_path)
    ignored = run_cli(["fix", "--isolated", "--unsafe-fixes", "--check", "--ignore", "HTP101", "pkg"], cwd=tmp_path)
    assert ignored.returncode == 0, ignored.stderr
    selected = run_cli(["fix", "--isolated", "--unsafe-fixes", "--check", "--select", "HTP1", "--files-from", "-"],
                       cwd=tmp_path,
                       stdin="pkg/loop.py\npkg/plain.py\n")
    assert selected.returncode == 1, selected.stderr
    assert "2 files scanned, 1 would change" in selected.stderr


def test_bad_files_are_reported_and_the_rest_fixed(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "pkg" / "bad.py").write_text("import requests\ndef broken(:\n")
    (tmp_path / "pkg" / "nul.py").write_bytes(b"import requests\x00\n")
    result = run_cli(["fix", "--isolated", "--unsafe-fixes", "--jobs", "2", "pkg", "missing.py"], cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 2
    # flake8's shape; the column is the parser's, which differs between Python versions.
    assert re.search(r"^pkg/bad\.py:2:\d+: E999 SyntaxError: ", result.stderr, re.M), result.stderr
    assert "pkg/nul.py:1:1: E999 SyntaxError: source contains a NUL byte" in result.stderr
    assert "missing.py: error:" in result.stderr
    assert "skipped:" in result.stderr
    assert (tmp_path / "pkg" / "loop.py").read_text() == FIXED


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    result = run_cli(["fix", "--diff", "--check", "."], cwd=tmp_path)
    assert result.returncode == 2
    result = run_cli(["fix", "--isolated", "--select", "XYZ!", "."], cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
