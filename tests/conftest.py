"""Shared helpers: run the real flake8 command on files, as users run it."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Dict, Iterable, List, Set, Tuple

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
# The fix-safety programs hold their own test modules; only tests/test_fix_safety_harness.py runs them.
collect_ignore = ["safety_programs"]
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


def fixture_files() -> List[Path]:
    return sorted(FIXTURES.glob("HTP*.py"))


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
