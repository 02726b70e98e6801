"""`per-file-ignores` in `[tool.flake8-http-pool]`: `check` does not report, and `fix` never touches, an ignored site."""

from __future__ import annotations

from pathlib import Path

from cli_support import assert_no_traceback, run_cli

LOOP = "import requests\n\n\ndef f(urls):\n    for u in urls:\n        requests.get(u)\n"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _project(root: Path, table: str) -> None:
    _write(root / "pyproject.toml", f"[tool.flake8-http-pool]\n{table}\n")
    for name in ("app.py", "tests/test_app.py", "tests/deep/test_more.py", "conftest.py", "other/conftest.py"):
        _write(root / name, LOOP)


def test_check_skips_the_ignored_codes_in_matching_files(tmp_path):
    _project(tmp_path, 'per-file-ignores = {"tests/*" = ["HTP101"], "conftest.py" = ["HTP1"]}')
    result = run_cli(["check", "."], cwd=tmp_path)
    # `tests/*` is anchored at the config's folder and crosses folders; a bare name matches in any folder
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["./app.py"], result.stdout
    # the same from another working directory: globs are relative to the config, not to where the command runs
    elsewhere = run_cli(["check", str(tmp_path)], cwd=tmp_path / "tests")
    assert [line.split(":")[0] for line in elsewhere.stdout.splitlines()] == [f"{tmp_path}/app.py"]
    assert_no_traceback(result)


def test_fix_never_touches_an_ignored_site(tmp_path):
    _project(tmp_path, 'per-file-ignores = {"tests/*" = ["HTP101"]}\nextend-safe-fixes = ["HTP101"]')
    result = run_cli(["fix", "."], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Session" in (tmp_path / "app.py").read_text() and "Session" in (tmp_path / "conftest.py").read_text()
    assert (tmp_path / "tests" / "test_app.py").read_text() == LOOP
    assert (tmp_path / "tests" / "deep" / "test_more.py").read_text() == LOOP
    assert "3 changed" in result.stderr and "unsafe" not in result.stderr  # an ignored site is no fix "left"


def test_per_file_ignores_codes_are_checked(tmp_path):
    _project(tmp_path, 'per-file-ignores = {"tests/*" = ["HTP1O1"]}')
    result = run_cli(["check", "."], cwd=tmp_path)
    assert result.returncode == 2 and "per-file-ignores" in result.stderr and "HTP1O1" in result.stderr
    _project(tmp_path, 'per-file-ignores = ["tests/*"]')
    result = run_cli(["check", "."], cwd=tmp_path)
    assert result.returncode == 2 and "per-file-ignores must be a table" in result.stderr
    assert_no_traceback(result)
