"""`.ci/run`: the README's test command exactly, then the slow runs, and every run's failure (pytest's exit 5
included) fails CI."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CI_RUN = ROOT / ".ci" / "run"


def _readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Quick start\n+```console\n(.*?)```", readme, re.S)
    assert block, "README has no quick-start console block"
    return block.group(1).splitlines()[1]


def _script_variable(script: str, name: str) -> str:
    line = next(line for line in script.splitlines() if line.startswith(f"{name}="))
    return subprocess.run(["bash", "-c", line + f'\nprintf %s "${name}"'], capture_output=True, text=True,
                          check=True).stdout


def test_ci_runs_the_readme_test_command_exactly_then_the_slow_runs() -> None:
    script = CI_RUN.read_text(encoding="utf-8")
    assert _script_variable(script, "QUICK_START_TESTS") == _readme_test_command()
    assert all(" -m slow" in _script_variable(script, name) for name in ("SLOW_TESTS", "ALONE_TESTS"))
    main = script[script.index("main() {"):]
    assert main.index('run quick "$QUICK_START_TESTS"') < main.index('run slow "$SLOW_TESTS"') \
        < main.index('run alone "$ALONE_TESTS"')


def _source_and_run(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    """Source a copy of .ci/run in an empty tree (so its logs land there) and run `body` with its functions."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(CI_RUN, tmp_path / ".ci" / "run")
    script = f'source "{tmp_path}/.ci/run"\n{body}\nprintf "%s\\n" "${{summaries[@]}}"\necho "failed=$failed"\n'
    return subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("exit_code", [1, 2, 5])
def test_a_failing_run_fails_ci_and_says_so(tmp_path: Path, exit_code: int) -> None:
    body = f"run quick 'echo \"===== 3 passed, 1 skipped in 0.50s =====\"; exit {exit_code}'"
    result = _source_and_run(tmp_path, body)
    assert "failed=1" in result.stdout, result.stdout + result.stderr
    summary = next(line for line in result.stdout.splitlines() if line.startswith("quick: exit"))
    assert summary.startswith(f"quick: exit {exit_code} after ") and "3 passed, 1 skipped in 0.50s" in summary
    if exit_code == 5:
        assert "no tests were collected" in summary


def test_a_passing_run_passes_and_its_summary_is_printed(tmp_path: Path) -> None:
    result = _source_and_run(tmp_path, "run quick 'echo \"1200 passed, 3 skipped in 200.10s (0:03:20)\"'")
    assert "failed=0" in result.stdout, result.stdout + result.stderr
    assert "quick: exit 0 after " in result.stdout and "1200 passed, 3 skipped in 200.10s (0:03:20)" in result.stdout


def test_ci_sets_ci_and_makes_the_venvs_it_names_in_gitignore() -> None:
    script = CI_RUN.read_text(encoding="utf-8")
    assert "export CI=true" in script
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert {".venv/", ".venv39/", ".venv313/", ".ci/logs/"} <= set(ignored)
    assert "quick py39 3.9" in script and "quick py313 3.13" in script
    assert "tests/test_hostile_{cache,files,output,patterns,reads}.py" in script  # on 3.9 and 3.13 as well
