"""Shared helpers: run the real flake8 command on files, as users run it; list the fixtures this Python can parse."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, Iterable, Iterator, List, Optional, Set, Tuple

import pytest
from packaging.specifiers import InvalidSpecifier, SpecifierSet

if TYPE_CHECKING:  # pragma: no cover
    from safety_server import SafetyServer

FIXTURES = Path(__file__).parent / "fixtures"
# The fix-safety programs hold their own test modules; only tests/test_fix_safety_harness.py runs them.
collect_ignore = ["safety_programs"]
# A fixture written in syntax newer than the oldest supported Python says so in its leading comments, e.g.
# `# requires-python: >=3.10` for `match`; older Pythons skip it with that reason instead of failing to parse it.
_REQUIRES = re.compile(r"^#\s*requires-python:\s*(?P<spec>\S.*?)\s*$")
_RUNNING = ".".join(map(str, sys.version_info[:3]))
_LINE = re.compile(r"^(?P<path>.*?):(?P<line>\d+):(?P<col>\d+): (?P<code>[A-Z]+\d+) ")


def run_flake8(paths: Iterable[Path], *extra: str) -> subprocess.CompletedProcess:
    """The real `flake8` command (`python -m flake8`), isolated from any user config unless asked."""
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", *extra, *map(str, paths)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def parse_flake8(stdout: str) -> Dict[str, Set[Tuple[int, str]]]:
    found: Dict[str, Set[Tuple[int, str]]] = defaultdict(set)
    for line in stdout.splitlines():
        match = _LINE.match(line)
        if match:
            found[str(Path(match["path"]).resolve())].add((int(match["line"]), match["code"]))
    return found


def python_requirement(path: Path) -> Optional[SpecifierSet]:
    """The `# requires-python:` specifier in the file's leading comment lines, if any."""
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.startswith("#"):
                break
            match = _REQUIRES.match(line.strip())
            if match:
                try:
                    return SpecifierSet(match["spec"])
                except InvalidSpecifier as exc:
                    raise ValueError(f"{path}: bad requires-python comment: {exc}") from None
    return None


def skip_reason(path: Path) -> Optional[str]:
    """Why the running Python cannot take this fixture, or None when it can."""
    required = python_requirement(path)
    if required is None or required.contains(_RUNNING, prereleases=True):
        return None
    return f"{path.name} requires Python {required}; this is {_RUNNING}"


def _all_fixtures(folders: Tuple[str, ...], pattern: str) -> List[Path]:
    found = [p for folder in folders for p in (FIXTURES / folder).glob(pattern) if not p.name.endswith(".fixed.py")]
    return sorted(found)


def _relative(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix()


def fixture_files(*folders: str, pattern: str = "HTP*.py") -> List[Path]:
    """The fixture files (not golden outputs) under tests/fixtures/<folder> (default: the top) that the running
    Python can parse; the one place fixtures are listed, so a version requirement is honoured everywhere."""
    return [p for p in _all_fixtures(folders or ("",), pattern) if skip_reason(p) is None]


def fixture_params(*folders: str, pattern: str = "HTP*.py", label: Callable[[Path], str] = _relative) -> list:
    """Every fixture as a pytest.param (id from `label`), the ones this Python cannot parse marked skip."""
    params = []
    for path in _all_fixtures(folders or ("",), pattern):
        reason = skip_reason(path)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        params.append(pytest.param(path, marks=marks, id=label(path)))
    return params


@pytest.fixture(scope="session")
def flake8_on_fixtures() -> Dict[str, Set[Tuple[int, str]]]:
    """flake8 run once over every fixture file; results by resolved path."""
    result = run_flake8(fixture_files())
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    return parse_flake8(result.stdout)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the expected outputs of the fix golden tests (tests/fixtures/fixes/*.fixed.py)")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator["SafetyServer"]:
    """The shared counting test server (tests/safety_server.py) on 127.0.0.1, stopped after the module's tests."""
    from safety_server import running_server

    with running_server(tmp_path_factory.mktemp("server")) as running:
        yield running
