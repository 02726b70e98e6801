"""Every fixture project (tests/fixtures/projects/NAME) through the real front ends: `flake8-http-pool check` on
its root, flake8 on the whole tree, and flake8 on one file at a time from the root (as an editor runs it). Each
must report exactly the (line, code) that each file's comments expect; an expectation marked xfail that is found
fails the test (strict), the missing ones make the project's test xfail with their reasons."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from project_expectations import FileExpectations, Site, project_files, project_folders, project_root, read_project

_LINE = re.compile(r"^(?P<path>.*?):(?P<line>\d+):(?P<col>\d+): (?P<code>HTP\d{3}) ")
_FRONT_ENDS = ("check", "flake8-tree", "flake8-per-file")
# Few workers: the machine is shared, and each subprocess is mostly interpreter start-up.
_WORKERS = 3

Findings = Dict[str, Set[Site]]


def _script(name: str, module: str) -> List[str]:
    """The installed console script, as users run it. Not `python -m`: that puts the working directory (the
    project root) first on sys.path, where a project's own `requests.py` would shadow the real library."""
    script = Path(sys.executable).parent / name
    return [str(script)] if script.exists() else [sys.executable, "-m", module]


def _commands(root: Path, front_end: str) -> List[List[str]]:
    if front_end == "check":
        return [[*_script("flake8-http-pool", "flake8_http_pool"), "check", "--isolated", "--output-format", "text",
                 "."]]
    flake8 = [*_script("flake8", "flake8"), "--isolated", "--select", "HTP"]
    if front_end == "flake8-tree":
        return [[*flake8, "."]]
    return [[*flake8, relative.as_posix()] for relative in project_files(root)]


def _run(root: Path, command: List[str]) -> Tuple[List[str], subprocess.CompletedProcess]:
    result = subprocess.run(command, check=False, cwd=root, capture_output=True, text=True, timeout=300)
    return command, result


def _parse(root: Path, stdout: str) -> Findings:
    """Findings by POSIX path relative to the root; a path outside the root keeps its `..` form, to be caught."""
    found: Findings = defaultdict(set)
    for line in stdout.splitlines():
        match = _LINE.match(line)
        if match:
            path = (root / match["path"]).resolve()
            try:
                key = path.relative_to(root.resolve()).as_posix()
            except ValueError:
                key = str(path)
            found[key].add((int(match["line"]), match["code"]))
    return found


_CACHE: Dict[Tuple[str, str], Findings] = {}


def _findings(folder: Path, front_end: str, scratch: Path) -> Findings:
    """One front end's findings on a fresh copy of one project (its subprocesses in a small pool), computed once.
    A copy, so each front end starts cold and whatever the tool writes at a project root (a cache folder)
    never lands in the repository."""
    key = (folder.name, front_end)
    if key not in _CACHE:
        copy = scratch / f"{folder.name}-{front_end}" / folder.name
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__", ".flake8-http-pool-cache"))
        root = project_root(copy)
        commands = _commands(root, front_end)
        with ThreadPoolExecutor(_WORKERS) as pool:
            results = list(pool.map(lambda command: _run(root, command), commands))
        merged: Findings = defaultdict(set)
        for command, result in results:
            shown = " ".join([Path(command[0]).name, *command[1:]])
            assert result.returncode in (0, 1), f"{folder.name}: `{shown}` exited {result.returncode}: {result.stderr}"
            assert "Traceback" not in result.stderr, f"{folder.name}: `{shown}`: {result.stderr}"
            for path, sites in _parse(root, result.stdout).items():
                merged[path] |= sites
        _CACHE[key] = merged
    return _CACHE[key]


@pytest.fixture(scope="session")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("projects")


def _compare(expectations: Dict[str, FileExpectations], found: Findings) -> Tuple[List[str], List[str]]:
    """(failures, known gaps): what breaks the contract, and the xfail expectations still unmet."""
    failures: List[str] = []
    gaps: List[str] = []
    for path in sorted(set(found) - set(expectations)):
        failures.append(f"{path}: reported outside the project's own files: {sorted(found[path])}")
    for path, expected in sorted(expectations.items()):
        got = found.get(path, set())
        missing = sorted(expected.expected - got)
        extra = sorted(got - expected.expected - set(expected.xfail) - set(expected.absent))
        if missing:
            failures.append(f"{path}: missing {missing}")
        if extra:
            failures.append(f"{path}: unexpected {extra}")
        for site in sorted(set(expected.xfail) & got):
            failures.append(f"{path}:{site[0]}: {site[1]} is now reported: XPASS(strict), remove the xfail")
        for site in sorted(set(expected.absent) - got):
            failures.append(f"{path}:{site[0]}: {site[1]} is no longer reported: XPASS(strict), "
                            "remove the xfail-absent")
        for site in sorted(set(expected.xfail) - got):
            gaps.append(f"{path}:{site[0]}: {site[1]} not reported ({expected.xfail[site]})")
        for site in sorted(set(expected.absent) & got):
            gaps.append(f"{path}:{site[0]}: {site[1]} still reported ({expected.absent[site]})")
    return failures, gaps


_PROJECTS = project_folders()


@pytest.mark.parametrize("front_end", _FRONT_ENDS)
@pytest.mark.parametrize("folder", _PROJECTS, ids=[p.name for p in _PROJECTS])
def test_project_reports_exactly_what_it_expects(folder: Path, front_end: str, scratch: Path) -> None:
    expectations = read_project(project_root(folder))
    failures, gaps = _compare(expectations, _findings(folder, front_end, scratch))
    assert not failures, f"{folder.name} through {front_end}:\n" + "\n".join(failures)
    if gaps:
        pytest.xfail(f"{len(gaps)} known gap(s):\n" + "\n".join(gaps))


def test_every_project_has_a_described_top_module_and_a_root() -> None:
    """A project says what it exercises in its top module's docstring, and has a root marker for the plugin."""
    import ast

    assert len(_PROJECTS) >= 10
    for folder in _PROJECTS:
        root = project_root(folder)
        tops = [root / name for name in ("main.py", "__init__.py", "app.py", "bot.py", "manage.py", "run.py")
                if (root / name).exists()]
        tops += sorted(root.glob("*/__init__.py")) + sorted(root.glob("src/*/__init__.py"))
        assert tops, f"{folder.name}: no top module"
        assert ast.get_docstring(ast.parse(tops[0].read_text(encoding="utf-8"))), f"{tops[0]}: no docstring"


def test_projects_are_not_single_file_fixtures() -> None:
    """The single-file fixture collection (tests/test_fixtures.py) must not pick up project files."""
    from conftest import fixture_files

    assert not [p for p in fixture_files() if "projects" in p.parts]
    assert not [p for folder in _PROJECTS for p in folder.rglob("HTP*.py")]


def test_compare_tells_every_kind_of_difference() -> None:
    """The runner's verdicts on made-up findings: each way a project can disagree with its comments."""
    expectations = {"a.py": FileExpectations({(1, "HTP101")}, {(2, "HTP102"): "later"}, {(3, "HTP101"): "wrong"})}
    assert _compare(expectations, {"a.py": {(1, "HTP101"), (3, "HTP101")}}) == (
        [], ["a.py:2: HTP102 not reported (later)", "a.py:3: HTP101 still reported (wrong)"])
    found = {"a.py": {(2, "HTP102"), (4, "HTP103")}, "/elsewhere/b.py": {(1, "HTP101")}}
    failures, gaps = _compare(expectations, found)
    assert failures == ["/elsewhere/b.py: reported outside the project's own files: [(1, 'HTP101')]",
                        "a.py: missing [(1, 'HTP101')]", "a.py: unexpected [(4, 'HTP103')]",
                        "a.py:2: HTP102 is now reported: XPASS(strict), remove the xfail",
                        "a.py:3: HTP101 is no longer reported: XPASS(strict), remove the xfail-absent"]
    assert gaps == []


@pytest.mark.parametrize("folder", _PROJECTS, ids=[p.name for p in _PROJECTS])
def test_check_and_flake8_report_the_same_findings(folder: Path, scratch: Path) -> None:
    """The issue's contract: flake8 (on the tree, and one file at a time) gives the same findings as `check`,
    including those whose reason is in another module -- known gaps included, they are the same everywhere."""
    found = {front_end: {path: sites for path, sites in _findings(folder, front_end, scratch).items() if sites}
             for front_end in _FRONT_ENDS}
    assert found["flake8-tree"] == found["check"]
    assert found["flake8-per-file"] == found["check"]
