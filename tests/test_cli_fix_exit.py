"""`fix`'s exit codes (ruff's), --exit-zero, --show-fixes and --quiet, through the real command."""

from __future__ import annotations

from pathlib import Path

from cli_support import assert_no_traceback, run_cli

# HTP203's fix (a `with` around a session's streamed response) is safe; HTP101's loop session is unsafe
# (RULES.md); HTP403 (a blocking call in async def) is report only.
SAFE = "import requests\n\ndef g(u):\n    r = requests.Session().get(u, stream=True)\n    return r.headers\n"
UNSAFE = "import requests\n\ndef f(urls):\n    for u in urls:\n        requests.get(u)\n"
REPORT_ONLY = "import requests\n\nasync def h(u):\n    return requests.get(u)\n"


def _write(root: Path, **files: str) -> Path:
    for name, text in files.items():
        (root / f"{name}.py").write_text(text, encoding="utf-8")
    return root


def test_everything_fixed_exits_0(tmp_path):
    _write(tmp_path, safe=SAFE)
    result = run_cli(["fix", "--isolated", "."], cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert run_cli(["check", "--isolated", "."], cwd=tmp_path).returncode == 0
    # Nothing to do at all: 0 too, and with -q nothing said.
    again = run_cli(["fix", "--isolated", "-q", "."], cwd=tmp_path)
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")


def test_unsafe_fix_held_back_exits_1_and_exit_zero_opts_out(tmp_path):
    _write(tmp_path, unsafe=UNSAFE)
    held = run_cli(["fix", "--isolated", "."], cwd=tmp_path)
    assert held.returncode == 1, held.stderr
    assert run_cli(["fix", "--isolated", "--exit-zero", "."], cwd=tmp_path).returncode == 0
    applied = run_cli(["fix", "--isolated", "--unsafe-fixes", "."], cwd=tmp_path)
    assert applied.returncode == 0, applied.stderr


def test_report_only_finding_exits_1_and_is_named(tmp_path):
    _write(tmp_path, report=REPORT_ONLY, safe=SAFE)
    result = run_cli(["fix", "--isolated", "--unsafe-fixes", "."], cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "1 finding with no fix left (HTP403: 1)" in result.stderr
    assert "with requests.Session().get(u, stream=True) as r" in (tmp_path / "safe.py").read_text()
    assert run_cli(["check", "--isolated", "-q", "."], cwd=tmp_path).stdout.count("HTP403") == 1


def test_diff_and_check_exit_1_only_when_something_would_change(tmp_path):
    _write(tmp_path, safe=SAFE, unsafe=UNSAFE)
    for mode in ("--diff", "--check"):
        assert run_cli(["fix", "--isolated", mode, "."], cwd=tmp_path).returncode == 1, mode
        assert run_cli(["fix", "--isolated", mode, "--exit-zero", "."], cwd=tmp_path).returncode == 0, mode
    assert (tmp_path / "safe.py").read_text() == SAFE  # --diff and --check write nothing
    run_cli(["fix", "--isolated", "."], cwd=tmp_path)
    for mode in ("--diff", "--check"):
        # The unsafe site is left, but nothing would change: ruff's --diff exits 0 then.
        assert run_cli(["fix", "--isolated", mode, "."], cwd=tmp_path).returncode == 0, mode


def test_errors_exit_2_even_with_exit_zero(tmp_path):
    _write(tmp_path, safe=SAFE, bad="import requests\ndef x(:\n")
    result = run_cli(["fix", "--isolated", "--exit-zero", "."], cwd=tmp_path)
    assert result.returncode == 2
    assert "bad.py:2:" in result.stderr and "E999" in result.stderr
    assert "with requests.Session().get(u, stream=True) as r" in (tmp_path / "safe.py").read_text()


def test_show_fixes_lists_each_file(tmp_path):
    _write(tmp_path, safe=SAFE, unsafe=UNSAFE, clean="x = 1\n")
    result = run_cli(["fix", "--isolated", "--unsafe-fixes", "--show-fixes", "--jobs", "1", "."], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.splitlines()) == ["./safe.py: HTP203", "./unsafe.py: HTP101"]
    other = tmp_path / "other"
    other.mkdir()
    plain = run_cli(["fix", "--isolated", "."], cwd=_write(other, safe=SAFE))
    assert plain.returncode == 0 and "with requests" in (other / "safe.py").read_text()
    assert plain.stdout == ""  # without --show-fixes, writing in place prints nothing on stdout


def test_quiet_prints_nothing_but_errors(tmp_path):
    _write(tmp_path, safe=SAFE, unsafe=UNSAFE)
    result = run_cli(["fix", "--isolated", "-q", "."], cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (1, "", "")
    loud = run_cli(["fix", "--isolated", "."], cwd=tmp_path)
    assert "files scanned" in loud.stderr
    _write(tmp_path, bad="import requests\ndef x(:\n")
    broken = run_cli(["fix", "--isolated", "-q", "."], cwd=tmp_path)
    assert broken.returncode == 2 and broken.stderr.startswith("./bad.py:2:")
    assert "files scanned" not in broken.stderr


def test_fix_stdin_exits_1_with_a_finding_left_and_prints_the_source(tmp_path):
    result = run_cli(["fix", "--isolated", "-"], cwd=tmp_path, stdin=UNSAFE)
    assert (result.returncode, result.stdout) == (1, UNSAFE)
    fixed = run_cli(["fix", "--isolated", "--show-fixes", "-"], cwd=tmp_path, stdin=SAFE)
    assert fixed.returncode == 0
    assert "with requests.Session().get(u, stream=True) as r" in fixed.stdout
    assert "stdin: HTP203" in fixed.stderr  # stdout is the source: the list goes to stderr
