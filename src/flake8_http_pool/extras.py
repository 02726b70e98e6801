"""Optional dependencies: `fix` needs libcst (extra `[fix]`), `unpooled-calls` needs ast-grep-py (`[patterns]`).

A flake8-only user installs neither (about 60 MB between them, see the README). Each feature asks here once,
before it starts any work, and a missing package becomes one line that says what to install.
"""

from __future__ import annotations

import importlib.util
from typing import Any

FIX_MESSAGE = "fix needs libcst: pip install 'flake8-http-pool[fix]'"
PATTERNS_MESSAGE = "unpooled-calls needs ast-grep-py: pip install 'flake8-http-pool[patterns]'"


class MissingExtra(Exception):
    """An optional dependency is not installed: the message names the extra that brings it."""


def _missing(module: str) -> bool:
    # find_spec looks without importing, so asking costs nothing even when the package is there.
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # a broken or half-removed install counts as missing
        return True


def require_libcst() -> None:
    """Raise MissingExtra unless libcst can be imported (the `fix` command's codemods are written with it).

    `fix` asks once, before it reads a file; libcst itself is imported later, only for a file with work.
    """
    if _missing("libcst"):
        raise MissingExtra(FIX_MESSAGE)


def sg_root_class() -> Any:
    """ast-grep-py's `SgRoot`, which matches the `unpooled-calls` patterns; MissingExtra if it is not installed.

    The only place ast-grep-py is imported: patterns are checked up front (`check`, the flake8 plugin), so
    a missing package is reported there, once, before any file is read.
    """
    try:
        from ast_grep_py import SgRoot
    except ImportError:
        raise MissingExtra(PATTERNS_MESSAGE) from None
    return SgRoot
