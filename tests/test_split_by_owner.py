"""`fix --split-by-owner DIR` (issue 13) through the installed command, on a small git repository.

Each patch is applied alone to a fresh copy of the repository, with `git apply` and with `patch -p1`, and must
change exactly its owners' files, into what a plain `fix` writes; all of them together must give what a plain
`fix` gives. A change across modules (HTP104's client parameter, tests/fixtures/fix_projects) stays in one patch.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from cli_support import assert_no_traceback, run_cli
from flake8_http_pool.codeowners import CodeOwners, parse_codeowners
from flake8_http_pool.owner_patches import MARKER, OwnerPatches, file_hunks

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each case writes and applies
# one patch per owner
pytestmark = pytest.mark.slow


ACROSS = Path(__file__).parent / "fixtures" / "fix_projects" / "client_parameter_private_across_modules" / "before"
_IGNORED = {".git", "__pycache__", ".flake8-http-pool-cache"}

CODEOWNERS = """\
# Everything: the platform team, unless a later line says otherwise.
*                 @org/platform
/web/             @org/web
/api/             @org/api @org/web   # shared
/api/internal/
/tools/
/script.py
/catalog/         @org/catalog
/sync.py          @org/sync
"""

EXPECTED = {  # patch -> its files; report.py and sync.py come with catalog/client.py's change across modules
    "org-api+org-web.patch": ["api/handlers.py"],
    "org-catalog.patch": ["catalog/client.py", "report.py", "sync.py"],
    "org-platform.patch": ["lib/net.py"],
    "org-web.patch": ["web/jobs.py", "web/views.py"],
    "unowned-api.patch": ["api/internal/batch.py"],
    "unowned-tools.patch": ["tools/crawl.py"],
    "unowned.patch": ["script.py"],
}


def _loop(name: str, call: str = "get") -> str:
    """A module whose loop makes an unpooled call: HTP101, fixed with --unsafe-fixes."""
    return (f'"""{name}."""\nimport requests\n\n\ndef {name}(urls):\n    for url in urls:\n'
            f"        print(requests.{call}(url, timeout=5).status_code)\n")


def _repo(tmp_path: Path, codeowners: Optional[str] = CODEOWNERS) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(ACROSS, repo)  # catalog/client.py, report.py, sync.py: HTP104 across modules
    files = {
        "web/views.py": _loop("views"),
        "web/jobs.py": _loop("jobs", "post"),
        "web/clean.py": "import requests\n\n\ndef once(url):\n    return requests.get(url, timeout=5)\n",
        "api/handlers.py": _loop("handlers", "put"),
        "api/internal/batch.py": _loop("batch"),
        "tools/crawl.py": _loop("crawl", "head"),
        "lib/net.py": _loop("net", "delete"),
        "script.py": _loop("script"),
        "README.md": "not Python\n",
    }
    for relative, text in files.items():
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text(text)
    if codeowners is not None:
        (repo / ".github").mkdir()
        (repo / ".github" / "CODEOWNERS").write_text(codeowners)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def _files(folder: Path) -> Dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not _IGNORED.intersection(path.relative_to(folder).parts)
    }


def _fixed(repo: Path, tmp_path: Path) -> Dict[str, bytes]:
    """What a plain `fix --unsafe-fixes` writes, in a copy."""
    copy = tmp_path / "plain-fix"
    shutil.copytree(repo, copy)
    result = run_cli(["fix", "--no-cache", "--no-progress", "--unsafe-fixes", "."], cwd=copy)
    assert result.returncode == 0, result.stderr
    return _files(copy)


def _split(repo: Path, *extra: str, folder: str = "../rollout") -> subprocess.CompletedProcess:
    result = run_cli(["fix", "--no-cache", "--no-progress", "--unsafe-fixes", *extra, "--split-by-owner", folder,
                      "."], cwd=repo)
    assert_no_traceback(result)
    return result


def _patched_files(patch: bytes) -> List[str]:
    return [m.decode() for m in re.findall(rb"^diff --git a/(\S+) b/", patch, re.M)]


def _apply(repo: Path, patches: List[Path], where: Path, tool: str = "git") -> Dict[str, bytes]:
    """A fresh copy of the repository with `patches` applied in turn; its files."""
    shutil.copytree(repo, where)
    for patch in patches:
        if tool == "git":
            check = subprocess.run(["git", "apply", "--check", str(patch)], cwd=where, capture_output=True, text=True)
            assert check.returncode == 0, f"{patch.name}: {check.stderr}"
            applied = subprocess.run(["git", "apply", str(patch)], cwd=where, capture_output=True, text=True)
        else:
            applied = subprocess.run(["patch", "-p1", "--forward", "--batch", "-i", str(patch)], cwd=where,
                                     capture_output=True, text=True)
        assert applied.returncode == 0, f"{patch.name}: {applied.stdout}{applied.stderr}"
    return _files(where)


def test_one_patch_per_owner_each_applying_alone(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    original = _files(repo)
    fixed = _fixed(repo, tmp_path)
    result = _split(repo)
    assert result.returncode == 1, result.stderr  # as --diff: something would change
    assert result.stdout == ""
    assert _files(repo) == original, "--split-by-owner wrote to the sources"

    rollout = tmp_path / "rollout"
    patches = sorted(rollout.iterdir())
    assert {p.name: _patched_files(p.read_bytes()) for p in patches} == EXPECTED
    assert "wrote 7 patches to ../rollout: org-api+org-web.patch (@org/api @org/web; 1 file), " \
           "org-catalog.patch (@org/catalog; 3 files)," in result.stderr
    assert "sync.py (@org/sync) is in org-catalog.patch: a change across modules" in result.stderr
    assert "report.py (@org/platform) is in org-catalog.patch" in result.stderr

    changed_by_fix = {path for path in original if fixed[path] != original[path]}
    assert changed_by_fix == {path for files in EXPECTED.values() for path in files}
    for number, patch in enumerate(patches):
        data = patch.read_bytes()
        assert data.startswith(MARKER)
        mine = set(EXPECTED[patch.name])
        for tool in ("git", "patch"):
            after = _apply(repo, [patch], tmp_path / f"{tool}-{number}", tool)
            assert {path for path in original if after[path] != original[path]} == mine, (tool, patch.name)
            assert {path: after[path] for path in mine} == {path: fixed[path] for path in mine}, (tool, patch.name)

    together = _apply(repo, patches, tmp_path / "all")
    assert together == fixed


def test_the_change_across_modules_stays_whole_when_every_file_has_another_owner(tmp_path: Path) -> None:
    """Only catalog/client.py holds the finding: its owners get the whole change, the callers' owners none of it."""
    repo = _repo(tmp_path, "/catalog/ @org/catalog\n/report.py @org/report\n/sync.py @org/sync\n")
    result = _split(repo, "--select", "HTP104")
    assert result.returncode == 1, result.stderr
    rollout = tmp_path / "rollout"
    assert sorted(p.name for p in rollout.iterdir()) == ["org-catalog.patch"]
    text = (rollout / "org-catalog.patch").read_text()
    assert _patched_files(text.encode()) == ["catalog/client.py", "report.py", "sync.py"]
    assert "#   sync.py (@org/sync; here because a change across modules edits it with these files)" in text
    original = _files(repo)
    after = _apply(repo, [rollout / "org-catalog.patch"], tmp_path / "applied")
    fixed = _fixed(repo, tmp_path)  # every code: the change's three files are fixed the same, the loops also
    change = {"catalog/client.py", "report.py", "sync.py"}
    assert {path for path in original if after[path] != original[path]} == change
    assert {path: after[path] for path in change} == {path: fixed[path] for path in change}


def test_without_codeowners_every_file_is_unowned_per_top_level_folder(tmp_path: Path) -> None:
    repo = _repo(tmp_path, codeowners=None)
    result = _split(repo)
    assert result.returncode == 1, result.stderr
    assert "no CODEOWNERS in " in result.stderr and "every file is unowned" in result.stderr
    patches = {p.name: _patched_files(p.read_bytes()) for p in (tmp_path / "rollout").iterdir()}
    assert patches == {
        "unowned-api.patch": ["api/handlers.py", "api/internal/batch.py"],
        "unowned-catalog.patch": ["catalog/client.py", "report.py", "sync.py"],
        "unowned-lib.patch": ["lib/net.py"],
        "unowned-tools.patch": ["tools/crawl.py"],
        "unowned-web.patch": ["web/jobs.py", "web/views.py"],
        "unowned.patch": ["script.py"],
    }


def test_an_explicit_codeowners_file_and_a_file_list(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (tmp_path / "OWNERS-ELSEWHERE").write_text("* @Org/All\n/web/ @org/all @org/web\n")
    listed = "web/views.py\nlib/net.py\ntools/crawl.py\n"
    result = run_cli(["fix", "--no-cache", "--unsafe-fixes", "--codeowners", str(tmp_path / "OWNERS-ELSEWHERE"),
                      "--split-by-owner", str(tmp_path / "out"), "--files-from", "-"], cwd=repo, stdin=listed)
    assert result.returncode == 1, result.stderr
    patches = {p.name: _patched_files(p.read_bytes()) for p in (tmp_path / "out").iterdir()}
    assert patches == {"org-all.patch": ["lib/net.py", "tools/crawl.py"],
                       "org-all+org-web.patch": ["web/views.py"]}


def test_a_rerun_replaces_its_own_patches_and_refuses_other_ones(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    rollout = tmp_path / "rollout"
    rollout.mkdir()
    (rollout / "notes.txt").write_text("kept\n")
    (rollout / "org-gone.patch").write_bytes(MARKER + b"# from an earlier run\n")
    (rollout / "org-web.patch").write_bytes(MARKER + b"# stale\n")
    result = _split(repo)
    assert result.returncode == 1, result.stderr
    names = sorted(p.name for p in rollout.iterdir())
    assert names == sorted([*EXPECTED, "notes.txt"])  # org-gone.patch removed, notes.txt left alone
    assert b"# stale" not in (rollout / "org-web.patch").read_bytes()

    (rollout / "mine.patch").write_text("--- a/x\n+++ b/x\n")
    before = _files(rollout)
    refused = _split(repo)
    assert refused.returncode == 2
    assert "mine.patch was not written by --split-by-owner" in refused.stderr
    assert _files(rollout) == before


def test_nothing_to_change_writes_no_patch(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "clean.py").write_text("import requests\n\n\ndef once(url):\n    return requests.get(url)\n")
    (repo / "CODEOWNERS").write_text("* @org/all\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    result = _split(repo)
    assert result.returncode == 0, result.stderr
    assert "nothing would change; no patch written to ../rollout" in result.stderr
    assert (tmp_path / "rollout").is_dir() and not list((tmp_path / "rollout").iterdir())


@pytest.mark.parametrize("args, message", [
    (["--diff", "--split-by-owner", "out"], "not allowed with argument"),
    (["--check", "--split-by-owner", "out"], "not allowed with argument"),
    (["--codeowners", "CODEOWNERS"], "--codeowners is read by --split-by-owner only"),
    (["--split-by-owner", "out", "--codeowners", "missing"], "--codeowners missing: no such file"),
    (["--split-by-owner", "out", "-"], "cannot take `-`"),
    (["--split-by-owner", "script.py"], "--split-by-owner script.py: not a folder"),
])
def test_usage_errors(tmp_path: Path, args: List[str], message: str) -> None:
    repo = _repo(tmp_path)
    original = _files(repo)
    result = run_cli(["fix", "--no-cache", "--unsafe-fixes", *args], cwd=repo)
    assert_no_traceback(result)
    assert result.returncode == 2
    assert message in result.stderr
    assert _files(repo) == original
    assert not (repo / "out").exists()


# -- the parts, without the command ------------------------------------------------------------------------------
def _patches(codeowners: str, changed: List[str], tmp_path: Path) -> Dict[str, List[str]]:
    owners = CodeOwners("CODEOWNERS", tuple(parse_codeowners(codeowners)))
    split = OwnerPatches(str(tmp_path / "out"), [], str(tmp_path), owners)
    for relative in changed:
        split.add(str(tmp_path / relative), b"@@ -1 +1 @@\n-a\n+b\n")
    return {patch.name: [name for name, _ in patch.files] for patch in split.patches()}


def test_owner_sets_and_safe_distinct_names(tmp_path: Path) -> None:
    codeowners = (
        "/a/ @org/team-a\n"
        "/b/ @org-team-a\n"  # a user whose safe name is the team's: both get a hash
        "/c/ @Org/Web @org/api\n"
        "/d/ @org/api @org/web @ORG/WEB\n"  # the same set as /c/, spelled otherwise: one patch
        "/e/ dev@example.com\n"
        "/f/ @con\n"  # a Windows device name
        "/g/ " + " ".join(f"@org/team-with-a-long-name-{n}" for n in range(6)) + "\n"
        "/h/ @../etc\n"  # a name made of path parts becomes a plain file name
        "/j/ @../../etc\n"  # not an owner GitHub accepts: the line is skipped, j/ is unowned
    )
    changed = ["a/1.py", "b/1.py", "c/1.py", "d/1.py", "e/1.py", "f/1.py", "g/1.py", "h/1.py", "j/1.py", "z.py",
               "i/1.py"]
    patches = _patches(codeowners, changed, tmp_path)
    names = sorted(patches)
    assert len({name.lower() for name in names}) == len(names) == 10
    assert all(re.fullmatch(r"[A-Za-z0-9._+-]+\.patch", name) and len(name) <= 110 for name in names), names
    assert patches["org-api+org-web.patch"] == ["c/1.py", "d/1.py"]  # owners compared without case, sorted
    assert patches["dev-at-example.com.patch"] == ["e/1.py"]
    assert patches["con_.patch"] == ["f/1.py"]
    assert patches["unowned.patch"] == ["z.py"] and patches["unowned-i.patch"] == ["i/1.py"]
    assert patches["etc.patch"] == ["h/1.py"] and patches["unowned-j.patch"] == ["j/1.py"]
    team_a = [name for name in names if name.startswith("org-team-a-")]
    assert len(team_a) == 2 and "org-team-a.patch" not in names
    assert not any(name.startswith(".") for name in names)


def test_hunks_are_made_on_bytes_split_at_newlines_only() -> None:
    old = b"a\r\nb\rc\r\nlast"
    new = b"a\r\nB\rc\r\nlast\n"
    hunks = file_hunks(old, new)
    assert hunks == (b"@@ -1,3 +1,3 @@\n a\r\n-b\rc\r\n-last\n\\ No newline at end of file\n+B\rc\r\n+last\n")
    assert file_hunks(b"same\n", b"same\n") == b""
