"""Where the corpus cannot run, tests/test_corpus.py skips it saying why, and under CI (CI=true) fails instead.

Run through the real pytest on a copy of tests/test_corpus.py placed where no ../shared is beside it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

import pytest

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each case runs the corpus test
# in a pytest of its own
pytestmark = pytest.mark.slow

HERE = Path(__file__).parent


def _run_corpus_test(tmp_path: Path, ci: Optional[str]) -> subprocess.CompletedProcess:
    clone = tmp_path / "clone"
    (clone / "tests").mkdir(parents=True)
    shutil.copy(HERE / "test_corpus.py", clone / "tests" / "test_corpus.py")
    (clone / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: long runs\n", encoding="utf-8")
    env: Dict[str, str] = {k: v for k, v in os.environ.items() if k not in ("CI", "FLAKE8_HTTP_POOL_CORPUS")}
    env["FLAKE8_HTTP_POOL_CORPUS"] = str(tmp_path / "cache")  # never the user's cached corpus
    if ci is not None:
        env["CI"] = ci
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "-q",
           "tests/test_corpus.py::test_corpus_runs_without_crash"]
    return subprocess.run(cmd, cwd=clone, env=env, capture_output=True, text=True, timeout=300)


def test_the_shared_directory_is_where_the_corpus_script_is_looked_for() -> None:
    sys.path.insert(0, str(HERE))
    import test_corpus

    assert test_corpus.FETCH == HERE.resolve().parents[1] / "shared" / "corpus" / "fetch.sh"


@pytest.mark.slow
@pytest.mark.parametrize("ci", [None, "", "0", "false"])
def test_without_ci_a_missing_corpus_is_skipped_saying_why(tmp_path: Path, ci: Optional[str]) -> None:
    result = _run_corpus_test(tmp_path, ci)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 skipped" in result.stdout and "corpus script not found" in result.stdout, result.stdout


@pytest.mark.parametrize("ci", ["true", "1"])
def test_under_ci_a_missing_corpus_fails_saying_why(tmp_path: Path, ci: str) -> None:
    result = _run_corpus_test(tmp_path, ci)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 failed" in result.stdout, result.stdout
    assert "corpus script not found" in result.stdout and "CI is set" in result.stdout, result.stdout
