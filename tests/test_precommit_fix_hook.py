"""The `http-pool-fix` hook through the real `pre-commit try-repo`, and a config whose `repo:` is a local path.

pre-commit installs the hook repository without extras, so the fix hook works only because
.pre-commit-hooks.yaml gives it libcst as an additional dependency; the README tells people to point `repo:`
at a clone's path before a release is published, which the second test does exactly as written there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Tuple

import pytest

REPO = Path(__file__).resolve().parents[1]

# HTP203's safe fix: a session's response goes into a `with` block (see docs/rules/HTP203.md).
UNCLOSED = '''import requests


def first_line(url):
    r = requests.Session().get(url, stream=True, timeout=10)
    for line in r.iter_lines():
        return line
'''


def _env(tmp_path: Path) -> Dict[str, str]:
    env = dict(os.environ)
    env.update(HOME=str(tmp_path / "home"), PRE_COMMIT_HOME=str(tmp_path / "cache"),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    env.pop("PYTHONPATH", None)
    return env


def _hook_repository(tmp_path: Path, env: Dict[str, str]) -> Path:
    """This working tree as it is now, committed in a copy (pre-commit installs from a revision)."""
    hooks = tmp_path / "hooks"
    shutil.copytree(REPO, hooks, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", ".pytest_cache",
                                                                "build", "dist", ".venv*", "venv", ".ci"))
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "hooks"]):
        subprocess.run(["git", *args], cwd=hooks, check=True, capture_output=True, env=env)
    return hooks


def _hook_revision(tmp_path: Path, env: Dict[str, str]) -> Tuple[Path, str]:
    """The hook repository (see _hook_repository) and its commit, for a config's `repo:` and `rev:`."""
    hooks = _hook_repository(tmp_path, env)
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hooks, check=True, capture_output=True, text=True,
                         env=env).stdout.strip()
    return hooks, rev


def _project(tmp_path: Path, env: Dict[str, str]) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=env)
    (project / "fetch.py").write_text(UNCLOSED)
    subprocess.run(["git", "add", "fetch.py"], cwd=project, check=True, env=env)
    return project


@pytest.mark.slow
def test_try_repo_fix_hook_rewrites_the_file_with_libcst_from_its_additional_dependency(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = _env(tmp_path)
    hooks = _hook_repository(tmp_path, env)
    project = _project(tmp_path, env)
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "http-pool-fix", "--files", "fetch.py"],
        cwd=project, capture_output=True, text=True, env=env, timeout=900,
    )
    output = result.stdout + result.stderr
    # pre-commit fails a hook that changed files: the user reviews the rewrite and adds it again.
    assert result.returncode == 1, output
    assert "files were modified by this hook" in output, output
    assert "needs libcst" not in output, output
    fixed = (project / "fetch.py").read_text()
    assert "with requests.Session().get(url, stream=True, timeout=10) as r:" in fixed, fixed


@pytest.mark.slow
def test_a_config_whose_repo_is_a_local_clone_runs_the_check_hook(tmp_path: Path) -> None:
    """The README's pre-release form: `repo:` a path to a clone, `rev:` a commit of it."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = _env(tmp_path)
    hooks, rev = _hook_revision(tmp_path, env)
    project = _project(tmp_path, env)
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: {rev}\n    hooks:\n      - id: http-pool-check\n"
    )
    result = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=project,
                            capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "fetch.py:5:9: HTP203" in result.stdout, result.stdout + result.stderr


# HTP104's unsafe fix would give `_product` a client parameter; sync.py, which pre-commit does not hand the hook,
# calls it the old way.
PRIVATE_CALLER = "import sys\n\nfrom client import _product\n\nprint(_product(sys.argv[1], 'jam'))\n"


@pytest.mark.slow
def test_the_fix_hook_on_one_changed_file_keeps_a_signature_an_unchanged_file_calls(tmp_path: Path) -> None:
    """pre-commit passes the hook the changed files only; the repository's other modules are still the
    project, so the unsafe fix that would break sync.py's call is not made (and is made once nothing calls)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = _env(tmp_path)
    hooks, rev = _hook_revision(tmp_path, env)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=env)
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hooks}\n    rev: {rev}\n    hooks:\n      - id: http-pool-fix\n"
        "        args: [--unsafe-fixes]\n"
    )
    from test_fix_across_modules import _PRIVATE_CLIENT as PRIVATE_CLIENT

    (project / "client.py").write_text(PRIVATE_CLIENT)
    (project / "sync.py").write_text(PRIVATE_CALLER)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True, env=env)

    def hook() -> str:
        result = subprocess.run([sys.executable, "-m", "pre_commit", "run", "http-pool-fix", "--files", "client.py"],
                                cwd=project, capture_output=True, text=True, env=env, timeout=900)
        return result.stdout + result.stderr

    output = hook()
    assert (project / "client.py").read_text() == PRIVATE_CLIENT, output
    assert "files were modified by this hook" not in output and "HTP104" in output, output
    (project / "sync.py").write_text("print('no caller')\n")
    output = hook()
    assert "def _product(session, base, sku):" in (project / "client.py").read_text(), output
