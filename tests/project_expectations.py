"""Read the expectations of a fixture project: every .py file's comments, keyed by the file's path in the project.

Same comment format as the single-file fixtures (tests/fixture_expectations.py), plus one kind that only a
project needs, because there a single-module engine can report a line the whole program proves clean:

`# xfail-absent HTP101: reason` at the end of a line: today's engine reports that code there, but the rule
should not (e.g. `requests.get` where `requests` is the project's own `requests.py`).
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from typing import Dict, List, NamedTuple, Set, Tuple

from fixture_expectations import read_expectations

PROJECTS = Path(__file__).parent / "fixtures" / "projects"
# What marks a project root, as the plugin looks for it above the file it is given.
_ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py")
_ABSENT = re.compile(r"^#\s*xfail-absent\s+(HTP\d{3}):\s*(\S.*)$")

Site = Tuple[int, str]


class FileExpectations(NamedTuple):
    expected: Set[Site]
    xfail: Dict[Site, str]
    # Reported today, wrong for the project model: the reason it is wrong.
    absent: Dict[Site, str]


def _read_absent(path: Path) -> Dict[Site, str]:
    absent: Dict[Site, str] = {}
    for token in tokenize.tokenize(io.BytesIO(path.read_bytes()).readline):
        if token.type == tokenize.COMMENT:
            match = _ABSENT.match(token.string)
            if match:
                absent[(token.start[0], match.group(1))] = match.group(2)
    return absent


def project_root(folder: Path) -> Path:
    """The project's root: the fixture folder itself, or the one folder below it holding a root marker (a fixture
    may keep code beside its root, e.g. a fake site-packages the project imports from but must not read)."""
    if any((folder / marker).exists() for marker in _ROOT_MARKERS):
        return folder
    roots = [child for child in sorted(folder.iterdir())
             if child.is_dir() and any((child / marker).exists() for marker in _ROOT_MARKERS)]
    if len(roots) != 1:
        raise ValueError(f"{folder}: expected one project root (a folder with pyproject.toml), found {roots}")
    return roots[0]


def project_folders() -> List[Path]:
    return sorted(p for p in PROJECTS.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def project_files(root: Path) -> List[Path]:
    """The project's Python files, paths relative to its root, in a stable order."""
    return sorted(p.relative_to(root) for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def read_project(root: Path) -> Dict[str, FileExpectations]:
    """Expectations per file, keyed by the POSIX path relative to the project root."""
    found: Dict[str, FileExpectations] = {}
    for relative in project_files(root):
        path = root / relative
        plain = read_expectations(path)
        found[relative.as_posix()] = FileExpectations(set(plain.expected), dict(plain.xfail), _read_absent(path))
    return found
