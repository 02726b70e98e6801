"""`fix` across modules (issue 12): the project model's seeds reach the fixes, through the real CLI.

Golden projects (tests/fixtures/fix_projects/NAME/{before,after}/...) are copied, fixed with
`python -m flake8_http_pool fix --preview --unsafe-fixes .`, and compared file by file with `after`; the result
compiles, a second fix changes nothing, and `check --preview` after the fix reports nothing new and none of the
fixed findings. End to end, a request wrapper in one module called in a loop in another goes from one
connection per call to one connection in all, against the counting server of tests/safety_server.py.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from safety_server import SafetyServer

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each case plans and applies a
# change over several modules
pytestmark = pytest.mark.slow

PROJECTS = Path(__file__).parent / "fixtures" / "fix_projects"
_IGNORED = {"__pycache__", ".flake8-http-pool-cache"}


def _files(folder: Path) -> Dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not _IGNORED.intersection(path.relative_to(folder).parts)
    }


def _tool(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8_http_pool", *args], cwd=folder, capture_output=True,
                          text=True, timeout=300)


def _findings(folder: Path) -> "Counter[Tuple[str, str]]":
    """`check --preview`'s findings, counted per (file, code)."""
    result = _tool(folder, "check", "--preview", "--format", "json", ".")
    assert result.returncode in (0, 1), result.stderr
    return Counter((Path(f["path"]).as_posix(), f["code"]) for f in json.loads(result.stdout))


def _copy(source: Path, folder: Path) -> Path:
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns(*_IGNORED))
    return folder


def _project_names() -> List[str]:
    return sorted(p.name for p in PROJECTS.iterdir() if (p / "before").is_dir())


@pytest.mark.parametrize("name", _project_names())
def test_golden_project(name: str, tmp_path: Path) -> None:
    project = PROJECTS / name
    folder = _copy(project / "before", tmp_path / "tree")
    before = _findings(folder)
    assert before, "the project has nothing for check --preview to report"

    fixed = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--exit-zero", "--no-progress", ".")
    assert fixed.returncode == 0, fixed.stderr
    assert _files(folder) == _files(project / "after"), fixed.stderr
    for relative, data in _files(folder).items():
        if relative.endswith(".py"):
            compile(ast.parse(data), relative, "exec", dont_inherit=True)

    again = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--exit-zero", "--no-progress", ".")
    assert again.returncode == 0, again.stderr
    assert _files(folder) == _files(project / "after"), "a second fix changed the tree"
    assert "0 changed" in again.stderr

    after = _findings(folder)
    grew = {key: (before[key], n) for key, n in after.items() if n > before[key]}
    assert not grew, f"check --preview reports more after the fix (before, after): {grew}"
    # What the fix rewrote is gone: a changed file that had findings has fewer (a caller's module may have had
    # none: it only gets the client), and the tree has fewer in all.
    expected = _files(project / "after")
    for path in (p for p, data in expected.items() if (project / "before" / p).read_bytes() != data):
        had = sum(n for (p, _), n in before.items() if p == path)
        assert not had or sum(n for (p, _), n in after.items() if p == path) < had, path
    if any((project / "before" / p).read_bytes() != data for p, data in expected.items()):
        assert sum(after.values()) < sum(before.values())


@pytest.mark.parametrize("name", _project_names())
def test_golden_project_diff_and_check_write_nothing(name: str, tmp_path: Path) -> None:
    project = PROJECTS / name
    folder = _copy(project / "before", tmp_path / "tree")
    original = _files(folder)
    expected = _files(project / "after")
    changes = sorted(path for path in original if original[path] != expected[path])
    diff = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--diff", ".")
    check = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--check", ".")
    assert _files(folder) == original
    shown = sorted(line[len("--- ./"):] for line in diff.stdout.splitlines() if line.startswith("--- "))
    assert shown == changes, diff.stdout
    assert diff.returncode == check.returncode == (1 if changes else 0), diff.stderr + check.stderr


def test_the_model_is_on_by_default_and_preview_changes_nothing(tmp_path: Path) -> None:
    """`fix` runs the project model by default, as `check` does; `--preview` (which asked for it when it was a
    preview) is still accepted and gives the same files."""
    plain = _copy(PROJECTS / "wrapper_in_other_module" / "before", tmp_path / "plain")
    asked = _copy(PROJECTS / "wrapper_in_other_module" / "before", tmp_path / "asked")
    first = _tool(plain, "fix", "--unsafe-fixes", "--no-progress", ".")
    second = _tool(asked, "fix", "--preview", "--unsafe-fixes", "--no-progress", ".")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert (plain / "app" / "utils.py").read_bytes() == \
        (PROJECTS / "wrapper_in_other_module" / "after" / "app" / "utils.py").read_bytes()
    assert _files(plain) == _files(asked)


# -- a private function another module calls keeps its signature -------------------------------------------------
_PRIVATE_CLIENT = '''\
import requests


def _product(base, sku):
    with requests.Session() as session:
        return session.get(f"{base}/item/{sku}", timeout=10).json()["id"]


def sync_all(base):
    for sku in ["tea", "cake"]:
        print(_product(base, sku))
'''
_PRIVATE_CALLER = '''\
import sys

from catalog.client import _product


for sku in ["tea", "cake", "jam"]:
    print(_product(sys.argv[1], sku))
'''


def _private_tree(tmp_path: Path) -> Path:
    folder = tmp_path / "tree"
    (folder / "catalog").mkdir(parents=True)
    (folder / "catalog" / "__init__.py").write_text("")
    (folder / "catalog" / "client.py").write_text(_PRIVATE_CLIENT)
    (folder / "sync.py").write_text(_PRIVATE_CALLER)
    return folder


def test_client_parameter_refused_when_another_module_calls_the_function(tmp_path: Path) -> None:
    """HTP104's in-module fix would give `_product` a new first parameter and update `sync_all` only, breaking
    sync.py's call. With the project model, fix sees the other caller and reports only."""
    folder = _private_tree(tmp_path)
    result = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--no-progress", ".")
    assert (folder / "catalog" / "client.py").read_text() == _PRIVATE_CLIENT, result.stderr
    assert "HTP104: 1" in result.stderr and result.returncode == 1


def test_client_parameter_still_fixed_in_module_when_no_other_module_names_it(tmp_path: Path) -> None:
    folder = _private_tree(tmp_path)
    (folder / "sync.py").write_text("print('nothing imported')\n")
    result = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--no-progress", ".")
    assert result.returncode == 0, result.stderr
    assert "def _product(session, base, sku):" in (folder / "catalog" / "client.py").read_text()


_FILLER = "def helper_{n}(value):\n    return value + {n}\n"


@pytest.mark.parametrize("mode", ["--check", "--diff"])
@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("caller", ["calls", "quiet", "fullwidth"])
def test_the_other_callers_are_found_when_a_plan_asks_for_them(tmp_path: Path, mode: str, jobs: str,
                                                               caller: str) -> None:
    """The names other modules use are looked for only once a plan asks (fix_facts.NamesElsewhere): the file is
    then planned again with the answer, in every mode, with one process or several (250 files: the workers'
    pool), and the verdict is the one writing gives above. `ｆｅｔｃｈ` is `fetch` to Python (NFKC)."""
    folder = _private_tree(tmp_path)
    if caller == "quiet":
        (folder / "sync.py").write_text("print('nothing imported')\n")
    elif caller == "fullwidth":
        (folder / "catalog" / "client.py").write_text(_PRIVATE_CLIENT.replace("_product", "_ｐｒｏｄｕｃｔ"))
    for n in range(250):
        (folder / f"filler_{n:03}.py").write_text(_FILLER.format(n=n))
    before = _files(folder)
    result = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--no-progress", "--jobs", jobs, mode, ".")
    assert _files(folder) == before
    assert "internal error" not in result.stderr, result.stderr
    if caller == "quiet":
        assert result.returncode == 1 and "HTP104: 1" in result.stderr.splitlines()[0], result.stderr
        assert ("def _product(session, base, sku):" in result.stdout) == (mode == "--diff"), result.stdout
    else:
        # sync.py names `_product`: report only, nothing would change.
        assert result.returncode == 0 and "0 would change" in result.stderr, result.stderr
        assert result.stdout == "", result.stdout


def test_names_named_counts_files_holding_the_word(tmp_path: Path) -> None:
    from flake8_http_pool.project_run import names_named

    (tmp_path / "a.py").write_text("def fetch(url):\n    pass\n\n\ndef lonely():\n    pass\n")
    (tmp_path / "b.py").write_text("from a import ｆｅｔｃｈ\n# prefetch_all is not a word of fetch\n")
    (tmp_path / "c.py").write_bytes(b"\xff\xfe not even text, still searched: lonelyness\n")
    a, b, c = (str(tmp_path / name) for name in ("a.py", "b.py", "c.py"))
    asked = frozenset({"fetch", "lonely", "fétch"})
    assert names_named([a, b, c], asked) == ({"fetch", "fétch"}, {"fétch"})
    assert names_named([a, b, c, str(tmp_path / "gone.py")], frozenset({"lonely"})) == (set(), set())
    # b.py outside the run: `fetch` is named twice, and named where the run edits nothing.
    assert names_named([a, c], asked, outside=[b]) == ({"fetch", "fétch"}, {"fetch", "fétch"})
    # A file both in the run and listed outside is the run's.
    assert names_named([a, b], asked, outside=[b, c]) == ({"fetch", "fétch"}, {"fétch"})


def test_names_elsewhere_asks_for_what_it_does_not_know() -> None:
    from flake8_http_pool.fix_facts import AskNames, NamesElsewhere

    names = NamesElsewhere()
    assert names  # a project's answers, even before any is known
    with pytest.raises(AskNames) as asked:
        "fetch" in names
    assert asked.value.names == {"fetch"}
    names = names.answered(["fetch"], ["fetch", "lonely"], outside=["fetch"])
    assert "fetch" in names and "lonely" not in names
    assert names.named_outside_the_run("fetch") and not names.named_outside_the_run("lonely")
    with pytest.raises(AskNames):
        "other" in names
    with pytest.raises(AskNames):
        names.named_outside_the_run("other")



def test_a_plan_that_keeps_asking_gets_the_safe_answer(tmp_path: Path) -> None:
    """Each round answers every name asked; a plan asking a new name every time is a bug of ours, and its last
    plan must count what it asks as named (no new parameter), never let AskNames end the run."""
    from flake8_http_pool.fix_command import _Names

    _with_root(tmp_path)
    (tmp_path / "a.py").write_text("def a0(): pass\n")
    names = _Names([str(tmp_path / "a.py")], [(str(tmp_path), None)], jobs=1)
    asked: List[str] = []

    def plan() -> Tuple[bool, bool]:
        name = f"a{len(asked)}"
        asked.append(name)
        return name in names.current, names.current.named_outside_the_run(name)

    assert names.answering(plan) == (True, True)
    assert len(asked) == _Names.ROUNDS + 1
    assert names.current.known == frozenset(asked[:-1]) and not names.current.rest_named  # not kept for others


def test_a_buffer_counts_one_other_file_where_a_run_needs_two(tmp_path: Path) -> None:
    """`fix -` fixes a buffer, not the file on disk it stands for: there `_fetch` may be new, not saved yet,
    and one other file naming it is a caller. A run fixing the file on disk needs a second file holding the
    word (the one defining it holds it), though a file outside the run is one still."""
    from flake8_http_pool.fix_command import _Names

    _with_root(tmp_path)
    (tmp_path / "app_http.py").write_text("def _alone(): pass\n")  # the buffer adds `def _fetch()`
    (tmp_path / "other.py").write_text("from app_http import _fetch\n")
    buffer = _Names.of_buffer(str(tmp_path / "app_http.py"), jobs=1)
    run = _Names([str(tmp_path / "app_http.py")], [(str(tmp_path), None)], jobs=1)
    for names in (buffer, run):
        names.answer(["_fetch", "_alone"])
        assert "_alone" not in names.current and not names.current.named_outside_the_run("_alone")
        assert names.current.named_outside_the_run("_fetch")
    assert "_fetch" in buffer.current and "_fetch" not in run.current
    unsaved = _Names.of_buffer(str(tmp_path / "new" / "http.py"), jobs=1)  # a new folder: the root above it
    unsaved.answer(["_fetch"])
    assert "_fetch" in unsaved.current
    nameless = _Names.of_buffer(None, jobs=1)  # `fix -` with no --stdin-filename: no project to search
    nameless.answer(["_fetch"])
    assert "_fetch" not in nameless.current

# -- a run over part of a project: callers in the files it does not fix --------------------------------------------
def _with_root(folder: Path) -> Path:
    """The folder made a project root, as a repository is (pre-commit runs in one)."""
    (folder / "pyproject.toml").write_text("")
    return folder


@pytest.mark.parametrize("run", [
    pytest.param(["catalog/client.py"], id="the-file-alone"),
    pytest.param(["--extend-exclude", "sync.py", "."], id="the-caller-excluded"),
])
def test_a_part_of_the_project_keeps_the_signature_the_rest_calls(tmp_path: Path, server: SafetyServer,
                                                                  run: List[str]) -> None:
    """Pre-commit hands `fix` the changed files only. HTP104's plan in client.py would give `_product` a new
    first parameter, which sync.py (not in the run, so never edited) still calls the old way: the file's
    project is searched for other callers, the fix is report only, and sync.py still runs."""
    pytest.importorskip("requests")
    folder = _with_root(_private_tree(tmp_path))
    out_before, _ = _run_script(folder, "sync.py", server)
    result = _tool(folder, "fix", "--unsafe-fixes", "--no-progress", *run)
    assert "internal error" not in result.stderr, result.stderr
    assert (folder / "catalog" / "client.py").read_text() == _PRIVATE_CLIENT, result.stderr
    assert result.returncode == 1 and "HTP104: 1" in result.stderr, result.stderr
    assert _run_script(folder, "sync.py", server)[0] == out_before == "tea\ncake\njam\n"


def test_the_file_alone_is_fixed_when_nothing_else_in_its_project_names_the_function(tmp_path: Path) -> None:
    folder = _with_root(_private_tree(tmp_path))
    (folder / "sync.py").write_text("print('nothing imported')\n")
    result = _tool(folder, "fix", "--unsafe-fixes", "--no-progress", "catalog/client.py")
    assert result.returncode == 0, result.stderr
    assert "def _product(session, base, sku):" in (folder / "catalog" / "client.py").read_text()


def test_a_change_across_modules_is_not_made_when_a_caller_is_outside_the_run(tmp_path: Path,
                                                                            server: SafetyServer) -> None:
    """The change that threads the client through sync.py and report.py is made when both are in the run; with
    report.py left out it would break report.py's call, so nothing is changed and both scripts still run."""
    pytest.importorskip("requests")
    folder = _with_root(_copy(THREADED / "before", tmp_path / "tree"))
    before = {script: _run_script(folder, script, server)[0] for script in ("sync.py", "report.py")}
    original = _files(folder)
    part = _tool(folder, "fix", "--unsafe-fixes", "--no-progress", "catalog/client.py", "sync.py")
    assert "internal error" not in part.stderr, part.stderr
    assert _files(folder) == original, part.stderr
    assert {script: _run_script(folder, script, server)[0] for script in before} == before
    whole = _tool(folder, "fix", "--unsafe-fixes", "--no-progress", "catalog/client.py", "sync.py", "report.py")
    assert whole.returncode == 0 and "3 changed" in whole.stderr, whole.stderr
    assert {script: _run_script(folder, script, server)[0] for script in before} == before


# -- end to end: connections counted by a real server -------------------------------------------------------------
def _run(folder: Path, server: SafetyServer) -> Tuple[str, int]:
    return _run_script(folder, "-m app.main", server)


def _run_script(folder: Path, script: str, server: SafetyServer) -> Tuple[str, int]:
    """Run `python SCRIPT BASE` in `folder` (SCRIPT may be `-m module`): its stdout and the connections it opened."""
    before = server.connections
    result = subprocess.run([sys.executable, *script.split(), server.base], cwd=folder, capture_output=True,
                            text=True, timeout=120, env={**_clean_env(), "PYTHONDONTWRITEBYTECODE": "1"})
    assert result.returncode == 0, result.stderr
    return result.stdout, server.connections - before


def _clean_env() -> Dict[str, str]:
    import os

    dropped = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "pythonpath")
    env = {k: v for k, v in os.environ.items() if k.lower() not in dropped}
    env.update(NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    return env


def test_wrapper_in_another_module_end_to_end(tmp_path: Path, server: SafetyServer) -> None:
    pytest.importorskip("requests")
    folder = _copy(PROJECTS / "wrapper_in_other_module" / "before", tmp_path / "tree")
    out_before, before = _run(folder, server)
    fixed = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--no-progress", ".")
    assert fixed.returncode == 0, fixed.stderr
    assert "1 changed" in fixed.stderr
    out_after, after = _run(folder, server)
    print(f"wrapper in another module: connections {before} -> {after}")
    assert out_after == out_before and out_before.split() == ["0", "1", "2", "3", "4"]
    assert before == 5 and after == 1


# -- HTP104 threaded through other modules: all or nothing ---------------------------------------------------------
THREADED = PROJECTS / "client_parameter_private_across_modules"


def _fix_in_process(folder: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> Tuple[int, str]:
    """The real `fix` entry point in this process (one worker), so a test can break one step of it."""
    from flake8_http_pool.cli import main

    monkeypatch.chdir(folder)
    code = main(["fix", "--preview", "--unsafe-fixes", "--no-progress", "-j", "1", "."])
    return code, capsys.readouterr().err


def test_a_change_across_files_is_not_written_when_one_file_fails_verification(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    import flake8_http_pool.fix_across as fix_across

    folder = _copy(THREADED / "before", tmp_path / "tree")
    original = _files(folder)
    real = fix_across.verify_file

    def failing(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if file.path.endswith("report.py"):
            return "injected failure"
        return real(file, *args, **kwargs)

    monkeypatch.setattr(fix_across, "verify_file", failing)
    code, err = _fix_in_process(folder, capsys, monkeypatch)
    assert _files(folder) == original, "a file of the failed change was written"
    assert "report.py: error: HTP104 across modules (_product() in catalog/client.py): injected failure; none of " \
           "its files written" in err
    assert code == 2


def test_a_change_across_files_is_rolled_back_when_a_rename_fails(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from flake8_http_pool import writing

    folder = _copy(THREADED / "before", tmp_path / "tree")
    original = _files(folder)
    real = os.replace
    renames: List[str] = []

    def replace(src, dst, **kwargs):  # type: ignore[no-untyped-def]
        if str(src).endswith(writing.TEMP_SUFFIX):
            renames.append(str(dst))
            if len(renames) == 2:
                raise OSError(28, "No space left on device")
        return real(src, dst, **kwargs)

    monkeypatch.setattr(writing.os, "replace", replace)
    code, err = _fix_in_process(folder, capsys, monkeypatch)
    assert len(renames) == 2, "the group was not written by renames in order"
    assert _files(folder) == original, "the file renamed before the failure was not put back"
    assert "No space left on device; none of its files written" in err and code == 2
    leftovers = [p.name for p in folder.rglob("*") if p.name.endswith((writing.TEMP_SUFFIX, writing.BACKUP_SUFFIX))]
    assert not leftovers


def test_a_change_across_files_is_not_written_when_one_file_changed_meanwhile(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file edited between the read and the write refuses the whole change, not just itself."""
    import flake8_http_pool.fix_across as fix_across

    folder = _copy(THREADED / "before", tmp_path / "tree")
    real = fix_across.verify_change

    def verify_then_edit(change, *args, **kwargs):  # type: ignore[no-untyped-def]
        found = real(change, *args, **kwargs)
        (folder / "sync.py").write_text((folder / "sync.py").read_text() + "# edited meanwhile\n")
        return found

    monkeypatch.setattr(fix_across, "verify_change", verify_then_edit)
    code, err = _fix_in_process(folder, capsys, monkeypatch)
    after = _files(folder)
    before = _files(THREADED / "before")
    assert after["catalog/client.py"] == before["catalog/client.py"]
    assert after["report.py"] == before["report.py"]
    assert "changed on disk while fixing" in err and code == 2


def test_threaded_client_end_to_end(tmp_path: Path, server: SafetyServer) -> None:
    pytest.importorskip("requests")
    folder = _copy(THREADED / "before", tmp_path / "tree")
    before = {script: _run_script(folder, script, server) for script in ("sync.py", "report.py")}
    fixed = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--no-progress", ".")
    assert fixed.returncode == 0, fixed.stderr
    after = {script: _run_script(folder, script, server) for script in ("sync.py", "report.py")}
    print(f"client threaded across modules: connections {before} -> {after}")
    assert {s: out for s, (out, _) in after.items()} == {s: out for s, (out, _) in before.items()}
    assert before["sync.py"][1] == 3 and after["sync.py"][1] == 1
    assert before["report.py"][1] == 2 and after["report.py"][1] == 1


def test_threading_refused_when_a_module_passes_the_function_on(tmp_path: Path) -> None:
    folder = _copy(THREADED / "before", tmp_path / "tree")
    (folder / "pool.py").write_text("from concurrent.futures import ThreadPoolExecutor\n\n"
                                    "from catalog.client import _product\n\n"
                                    "CALLBACK = _product\n")
    original = _files(folder)
    result = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--no-progress", ".")
    assert _files(folder) == original, result.stderr
    assert result.returncode == 1 and "HTP104: 1" in result.stderr


def test_threading_refused_for_a_public_function_unless_application(tmp_path: Path) -> None:
    folder = _copy(THREADED / "before", tmp_path / "tree")
    for path in folder.rglob("*.py"):
        path.write_text(path.read_text().replace("_product", "product_of"))
    original = _files(folder)
    result = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--no-progress", ".")
    assert _files(folder) == original, result.stderr
    (folder / "pyproject.toml").write_text("[tool.flake8-http-pool]\napplication = true\n")
    result = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--no-progress", ".")
    assert result.returncode == 0, result.stderr
    assert "def product_of(session, base, sku):" in (folder / "catalog" / "client.py").read_text()


def test_threading_refused_when_a_test_patches_the_client_where_it_is_made(tmp_path: Path) -> None:
    """Made in the callers' modules, the client would escape `mock.patch("catalog.client.requests.Session")`."""
    folder = _copy(THREADED / "before", tmp_path / "tree")
    (folder / "pyproject.toml").write_text("[project]\nname = 'tree'\n")
    (folder / "tests").mkdir()
    (folder / "tests" / "test_client.py").write_text(
        "from unittest import mock\n\n\n"
        "def test_product():\n"
        "    with mock.patch(\"catalog.client.requests.Session\"):\n"
        "        pass\n")
    original = _files(folder)
    result = _tool(folder, "fix", "--preview", "--unsafe-fixes", "--no-progress", ".")
    assert _files(folder) == original, result.stderr
    assert result.returncode == 1 and "HTP104: 1" in result.stderr
