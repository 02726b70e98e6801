"""docs/sharding.md does what it says: its GitHub Actions workflow parses, and its shell steps, run job by job on a
real git repository (each job on a fresh checkout at the same place, as runners check out), give the SARIF that
one `check` over all the files gives; its `split` and `awk` lines deal the same disjoint shards; its sharded
`fix` patches, applied together, change the tree as one `fix` does; its commands parse."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from cli_support import run_cli
from project_trees import git, python_files, round_robin, sharded_tree
from test_readme_commands import blocks, commands, parses

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): the documented workflow's
# steps run as a shell would run them
pytestmark = pytest.mark.slow

DOC = Path(__file__).resolve().parents[1] / "docs" / "sharding.md"
TEXT = DOC.read_text(encoding="utf-8")
SHARDS = 4


def _workflow() -> Dict[str, Any]:
    yaml = pytest.importorskip("yaml")  # pre-commit (a test dependency) brings PyYAML
    (body,) = blocks(TEXT, "yaml")
    document = yaml.safe_load(body)
    assert isinstance(document, dict)
    return document


def _console(containing: str) -> str:
    (line,) = [line for body in blocks(TEXT, "console") for line in body.splitlines() if containing in line]
    return line


def _bash(script: str, cwd: Path, env: Dict[str, str]) -> subprocess.CompletedProcess:
    """A step's script as the runner runs it (bash -e), with this venv's `flake8-http-pool` on PATH."""
    environment = dict(os.environ, **env)
    environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), environment.get("PATH", "")])
    environment.pop("PYTHONPATH", None)
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=300)


def _expand(text: str, shard: int) -> str:
    return text.replace("${{ matrix.shard }}", str(shard)).replace("${{ strategy.job-total }}", str(SHARDS))


def _checkout(pristine: Path, at: Path) -> Path:
    """A fresh checkout of the repository, always at the same path (runners check out to one place)."""
    if at.exists():
        shutil.rmtree(at)
    return Path(shutil.copytree(pristine, at, symlinks=True))


def _run_steps(job: Dict[str, Any], cwd: Path, shard: int) -> List[subprocess.CompletedProcess]:
    """The job's `run` steps in order (installing aside), as bash -e runs each; a failed step ends the job."""
    done = []
    for step in job["steps"]:
        if "run" not in step or "pip install" in step["run"]:
            continue
        env = {name: _expand(str(value), shard) for name, value in (step.get("env") or {}).items()}
        done.append(_bash(_expand(step["run"], shard), cwd, env))
        assert "Traceback" not in done[-1].stderr, done[-1].stderr
        if done[-1].returncode:
            break
    return done


@pytest.fixture
def pristine(tmp_path: Path) -> Path:
    """The sharding tree without its file that does not parse: shards with findings exit 0 with --exit-zero."""
    tree = sharded_tree(tmp_path / "pristine")
    git(tree, "rm", "-q", "bad.py")
    git(tree, "commit", "-q", "-m", "no syntax error")
    return tree


def test_the_workflow_parses_and_has_its_parts() -> None:
    jobs = _workflow()["jobs"]
    assert jobs["check"]["strategy"]["matrix"]["shard"] == list(range(1, SHARDS + 1))
    assert jobs["merge"]["needs"] == "check"
    assert jobs["merge"]["permissions"]["security-events"] == "write"
    uses = [step.get("uses", "") for step in jobs["check"]["steps"] + jobs["merge"]["steps"]]
    for action in ("actions/upload-artifact@", "actions/download-artifact@", "github/codeql-action/upload-sarif@",
                   "actions/cache@"):
        assert any(use.startswith(action) for use in uses), action
    # The cache kept between runs is the folder the shards' `check` writes, at the checkout's root.
    (cache,) = [step for step in jobs["check"]["steps"] if step.get("uses", "").startswith("actions/cache@")]
    assert cache["with"]["path"] == ".flake8-http-pool-cache"


def test_the_workflow_s_steps_give_the_report_of_one_check(pristine: Path, tmp_path: Path) -> None:
    jobs = _workflow()["jobs"]
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    repo = tmp_path / "work" / "repo"
    for shard in range(1, SHARDS + 1):
        checkout = _checkout(pristine, repo)
        ran = _run_steps(jobs["check"], checkout, shard)
        assert [step.returncode for step in ran] == [0, 0], [step.stderr for step in ran]
        (upload,) = [step for step in jobs["check"]["steps"] if step.get("uses", "").startswith("actions/upload")]
        shutil.copy(checkout / _expand(upload["with"]["path"], shard), artifacts)
    assert len(list(artifacts.iterdir())) == SHARDS

    checkout = _checkout(pristine, repo)
    (download,) = [step for step in jobs["merge"]["steps"] if step.get("uses", "").startswith("actions/download")]
    shutil.copytree(artifacts, checkout / download["with"]["path"])
    ran = _run_steps(jobs["merge"], checkout, 0)
    assert [step.returncode for step in ran] == [0, 1]  # the SARIF written, then the findings fail the job
    (upload,) = [step for step in jobs["merge"]["steps"] if "upload-sarif" in step.get("uses", "")]
    sarif = (checkout / upload["with"]["sarif_file"]).read_bytes()

    whole = _checkout(pristine, repo)
    (whole / "all.txt").write_text("".join(p + "\n" for p in python_files(whole)), encoding="utf-8")
    one = run_cli(["check", "--files-from", "all.txt", "--output-format", "sarif", "-o", "one.sarif"], cwd=whole)
    assert one.returncode == 1, one.stderr
    assert sarif == (whole / "one.sarif").read_bytes()
    results = json.loads(sarif)["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"HTP101", "HTP102", "HTP104", "HTP203"}
    text = run_cli(["check", "--files-from", "all.txt"], cwd=whole)
    assert (ran[1].stdout, ran[1].returncode) == (text.stdout, text.returncode)
    assert text.stdout.endswith("Found 4 findings. [*] 1 fixable with `flake8-http-pool fix` (2 more with "
                                "`fix --unsafe-fixes`).\n")


@pytest.mark.parametrize("shards", [1, 3, 4, 20])
def test_split_and_awk_deal_the_same_disjoint_shards(pristine: Path, shards: int) -> None:
    listing = _console("ls-files")
    assert _bash(listing, pristine, {}).returncode == 0
    everything = (pristine / "all-files.txt").read_text(encoding="utf-8").splitlines()
    assert everything == python_files(pristine) and "loop_é.py" in everything  # not quoted
    dealt: Dict[str, List[List[str]]] = {}
    for tool, line in (("split", _console("split -n")), ("awk", _console("awk "))):
        dealt[tool] = []
        for shard in range(1, shards + 1):
            done = _bash(line, pristine, {"SHARD": str(shard), "SHARDS": str(shards)})
            assert done.returncode == 0, done.stderr
            dealt[tool].append((pristine / "shard-files.txt").read_text(encoding="utf-8").splitlines())
    assert dealt["split"] == dealt["awk"] == round_robin(everything, shards)
    assert sorted(p for part in dealt["split"] for p in part) == sorted(everything)


def test_the_sharded_fix_patches_change_what_one_fix_changes(pristine: Path, tmp_path: Path) -> None:
    repo = tmp_path / "work" / "repo"
    patches = tmp_path / "patches"
    patches.mkdir()
    for shard in range(1, 3):
        checkout = _checkout(pristine, repo)
        env = {"SHARD": str(shard), "SHARDS": "2"}
        for line in (_console("ls-files"), _console("split -n"), _console("fix --unsafe-fixes --diff")):
            done = _bash(line, checkout, env)
            assert done.returncode == 0, done.stderr
        shutil.copy(checkout / f"fix-{shard}.patch", patches)
    checkout = _checkout(pristine, repo)
    for patch in patches.iterdir():
        shutil.copy(patch, checkout)
    applied = _bash(_console("git apply"), checkout, {})
    assert applied.returncode == 0, applied.stderr
    changed = git(checkout, "diff")

    whole = _checkout(pristine, repo)
    (whole / "all.txt").write_text("".join(p + "\n" for p in python_files(whole)), encoding="utf-8")
    fixed = run_cli(["fix", "--unsafe-fixes", "--no-progress", "--files-from", "all.txt"], cwd=whole)
    assert fixed.returncode == 0, fixed.stderr
    assert changed == git(whole, "diff") != ""
    assert "+++ catalog/client.py" not in changed and "catalog/client.py" in changed


def test_every_documented_command_parses() -> None:
    found = [args for body in blocks(TEXT, "console") for args in commands(body)]
    steps = [step for job in _workflow()["jobs"].values() for step in job["steps"]
             if "run" in step and "pip install" not in step["run"]]
    found += [args for step in steps for args in commands(" ".join(step["run"].split()))]
    assert {args[0] for args in found} == {"check", "merge", "fix"}
    for args in found:
        assert parses(args)[0], args
