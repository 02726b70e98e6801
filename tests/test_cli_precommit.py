"""The `http-pool-check` hook run by the real `pre-commit try-repo` in a temporary git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


@pytest.mark.slow
def test_try_repo_fails_a_loop_and_passes_a_clean_file(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = dict(os.environ)
    env.update(HOME=str(tmp_path / "home"), PRE_COMMIT_HOME=str(tmp_path / "cache"),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    env.pop("PYTHONPATH", None)
    # The hook repository: this working tree as it is now, committed in a copy (try-repo installs from a rev).
    hooks = tmp_path / "hooks"
    shutil.copytree(REPO, hooks, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", ".pytest_cache",
                                                                "build", "dist", ".venv", "venv"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "hooks"]):
        subprocess.run(["git", *args], cwd=hooks, check=True, capture_output=True, env=env)

    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=env)
    (project / "loop.py").write_text("import requests\nfor u in urls:\n    requests.get(u)\n")
    (project / "clean.py").write_text("import requests\nwith requests.Session() as s:\n    s.get('u')\n")
    subprocess.run(["git", "add", "loop.py", "clean.py"], cwd=project, check=True, env=env)

    def try_repo(*files: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "http-pool-check", "--files", *files],
            cwd=project, capture_output=True, text=True, env=env, timeout=900,
        )

    failing = try_repo("loop.py")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "loop.py:3:5: HTP101" in failing.stdout
    passing = try_repo("clean.py")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout
