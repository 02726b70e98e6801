"""Source on standard input (`-`, `--stdin-filename`) and path lists (`--files-from`), as editors and CI use them.

The shell sessions pipe a buffer the way pylsp (`flake8 -`) and ALE (`flake8 --stdin-display-name NAME -`, and
our `--stdin-filename NAME -`) do, through the real commands.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from cli_support import assert_no_traceback, command, run_cli

LOOP = "import requests\nfor u in urls:\n    requests.get(u)\n"
FIXED = "import requests\nwith requests.Session() as session:\n    for u in urls:\n        session.get(u)\n"
MESSAGE_START = ":3:5: HTP101 requests.get() in a loop"


def _shell(script: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return subprocess.run(["sh", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


def test_pylsp_pipes_the_buffer_to_flake8_dash(tmp_path: Path) -> None:
    (tmp_path / "buffer.py").write_text(LOOP)
    flake8 = f"{shlex.quote(sys.executable)} -m flake8 --isolated --select HTP"
    result = _shell(f"cat buffer.py | {flake8} -", tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("stdin" + MESSAGE_START), result.stdout


def test_ale_pipes_the_buffer_with_its_display_name(tmp_path: Path) -> None:
    (tmp_path / "buffer.py").write_text(LOOP)
    flake8 = f"{shlex.quote(sys.executable)} -m flake8 --isolated --select HTP"
    ours = " ".join(map(shlex.quote, command()))
    via_flake8 = _shell(f"cat buffer.py | {flake8} --stdin-display-name app/views.py -", tmp_path)
    via_ours = _shell(f"cat buffer.py | {ours} check --isolated -q --stdin-filename app/views.py -", tmp_path)
    assert via_flake8.returncode == via_ours.returncode == 1, via_ours.stderr
    assert via_ours.stdout == via_flake8.stdout
    assert via_ours.stdout.startswith("app/views.py" + MESSAGE_START)


def test_check_dash_checks_the_source_not_a_path_list(tmp_path: Path) -> None:
    result = run_cli(["check", "--isolated", "-"], cwd=tmp_path, stdin=LOOP)
    assert_no_traceback(result)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    assert result.stdout.splitlines()[0].startswith("stdin" + MESSAGE_START)
    clean = run_cli(["check", "--isolated", "-"], cwd=tmp_path, stdin="import requests\n")
    assert (clean.returncode, clean.stdout, clean.stderr) == (0, "", "")


def test_stdin_honours_noqa_and_reports_syntax_errors_in_flake8_shape(tmp_path: Path) -> None:
    quiet = run_cli(["check", "--isolated", "-"], cwd=tmp_path, stdin=LOOP.replace("(u)\n", "(u)  # noqa: HTP1\n"))
    assert (quiet.returncode, quiet.stdout) == (0, "")
    broken = run_cli(["check", "--isolated", "--stdin-filename", "x.py", "-"], cwd=tmp_path,
                     stdin="import requests\nx = (1,\ny = 2 2\n")
    assert broken.returncode == 2
    # The line is the running parser's (3.9 blames line 3, 3.10+ the unclosed parenthesis on line 2).
    assert re.match(r"x\.py:[23]:\d+: E999 SyntaxError: ", broken.stdout), broken.stdout


def test_stdin_filename_finds_the_config_of_its_folder_and_its_excludes(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text('[tool.flake8-http-pool]\nignore = ["HTP101"]\n')
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "pyproject.toml").write_text('[tool.flake8-http-pool]\nexclude = ["generated"]\n')
    ignored = run_cli(["check", "--stdin-filename", "sub/mod.py", "-"], cwd=tmp_path, stdin=LOOP)
    assert (ignored.returncode, ignored.stdout, ignored.stderr) == (0, "", "")
    reported = run_cli(["check", "--stdin-filename", "other/mod.py", "-"], cwd=tmp_path, stdin=LOOP)
    assert reported.returncode == 1 and reported.stdout.startswith("other/mod.py" + MESSAGE_START)
    excluded = run_cli(["check", "--stdin-filename", "other/generated/mod.py", "-"], cwd=tmp_path, stdin=LOOP)
    assert (excluded.returncode, excluded.stdout, excluded.stderr) == (0, "", "")
    fixed = run_cli(["fix", "--stdin-filename", "other/generated/mod.py", "-"], cwd=tmp_path, stdin=LOOP)
    assert (fixed.returncode, fixed.stdout) == (0, LOOP)  # an excluded buffer comes back as it was


def test_fix_dash_prints_the_fixed_source_and_writes_nothing(tmp_path: Path) -> None:
    result = run_cli(["fix", "--isolated", "--unsafe-fixes", "-"], cwd=tmp_path, stdin=LOOP)
    assert_no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert result.stdout == FIXED
    assert list(tmp_path.iterdir()) == []
    unchanged = run_cli(["fix", "--isolated", "-"], cwd=tmp_path, stdin="import requests\n")
    assert (unchanged.returncode, unchanged.stdout) == (0, "import requests\n")
    check = run_cli(["fix", "--isolated", "--unsafe-fixes", "--check", "--stdin-filename", "m.py", "-"],
                    cwd=tmp_path, stdin=LOOP)
    assert check.returncode == 1 and check.stdout == "would fix m.py (HTP101: 1)\n"
    diff = run_cli(["fix", "--isolated", "--unsafe-fixes", "--diff", "-"], cwd=tmp_path, stdin=LOOP)
    assert diff.stdout.startswith("--- stdin\n+++ stdin\n")


def test_fix_dash_gives_a_broken_buffer_back_unchanged(tmp_path: Path) -> None:
    source = "import requests\nfor u in urls:\n    requests.get(u\n"
    result = run_cli(["fix", "--isolated", "--stdin-filename", "b.py", "-"], cwd=tmp_path, stdin=source)
    assert result.returncode == 2
    assert result.stdout == source
    assert result.stderr.startswith("b.py:3:") and " E999 SyntaxError: " in result.stderr.splitlines()[0]


def test_fix_dash_with_other_paths_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(LOOP)
    result = run_cli(["fix", "--isolated", "-", "a.py"], cwd=tmp_path, stdin=LOOP)
    assert result.returncode == 2 and result.stdout == ""
    assert (tmp_path / "a.py").read_text() == LOOP
    twice = run_cli(["check", "--isolated", "--files-from", "-", "-"], cwd=tmp_path, stdin=LOOP)
    assert twice.returncode == 2 and "standard input" in twice.stderr


def test_files_from_a_file_with_bad_entries_reports_each_and_checks_the_rest(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(LOOP)
    (tmp_path / "b.py").write_text(LOOP)
    (tmp_path / "list.txt").write_bytes(b"a.py\r\nbad\x00name.py\n\nmissing.py\nb.py\n")
    result = run_cli(["check", "--isolated", "-q", "--files-from", "list.txt"], cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "bad\\0name.py: error: a path in the file list holds a NUL byte; skipped",
        "missing.py: error: no such file or directory",
    ]
    assert sorted(line.split(":")[0] for line in result.stdout.splitlines()) == ["a.py", "b.py"]
    fix = run_cli(["fix", "--isolated", "--unsafe-fixes", "--no-progress", "--files-from", "list.txt"], cwd=tmp_path)
    assert fix.returncode == 2
    assert (tmp_path / "a.py").read_text() == FIXED and (tmp_path / "b.py").read_text() == FIXED
    gone = run_cli(["check", "--isolated", "--files-from", "nope.txt"], cwd=tmp_path)
    assert gone.returncode == 2
    assert gone.stderr == "nope.txt: error: cannot read the file list: no such file or directory\n"
