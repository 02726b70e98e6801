"""Where a project's root is: light enough for flake8's path, where every lint of an editor looks for it."""

from __future__ import annotations

import os
from typing import Optional

# What marks a project's root, nearest first (as ruff, mypy and pre-commit find one).
ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")


def find_project_root(path: str) -> Optional[str]:
    """The nearest folder at or above `path` that holds a project marker, None when there is none."""
    start = os.path.abspath(path)
    here = start if os.path.isdir(start) else os.path.dirname(start)
    while True:
        if any(os.path.exists(os.path.join(here, marker)) for marker in ROOT_MARKERS):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
