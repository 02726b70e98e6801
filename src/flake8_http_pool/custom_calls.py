"""In-house unpooled calls: finds the calls matching the user's ast-grep patterns (option `unpooled-calls`).

ast-grep-py (the `[patterns]` extra) is imported only when patterns are set, so nobody else pays for loading
it, or needs it installed; without it `extras.MissingExtra` says what to install.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Sequence, Tuple

from .extras import MissingExtra, sg_root_class

LANGUAGE = "python"


class PatternError(ValueError):
    """A pattern ast-grep cannot use as a call pattern."""


def _root(text: str) -> Any:
    return sg_root_class()(text, LANGUAGE).root()


def validate_patterns(patterns: Sequence[str]) -> None:
    """Raise PatternError unless every pattern is one call expression (`mycorp.http.get($$$)`)."""
    for pattern in patterns:
        text = pattern.strip()
        try:
            root = _root(text)
            call = root.find(kind="call")
            # The whole pattern must be the call: `x = get($A)` or `get` alone would match other things.
            if call is None or call.text().strip() != text:
                raise PatternError(f"{pattern!r} is not a call pattern like `mycorp.http.get($$$)`")
            root.find(pattern=text)  # ast-grep's own check of the pattern
        except (PatternError, MissingExtra):
            raise
        except Exception as error:  # ast-grep reports bad patterns as RuntimeError with a long backtrace
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise PatternError(f"{pattern!r}: {first}") from None


def _callee(pattern: str) -> str:
    """`mycorp.http.get($$$)` -> `mycorp.http.get`: the name used in messages."""
    return re.split(r"\s*\(", pattern.strip(), maxsplit=1)[0]


def find_custom_calls(text: str, patterns: Sequence[str]) -> Dict[Tuple[int, int], str]:
    """Start positions of the calls in `text` matching any pattern, as `ast` counts them, mapped to the callee.

    Keys are (line from 1, column in UTF-8 bytes) so they compare equal to an `ast.Call`'s
    (lineno, col_offset); ast-grep counts lines from 0 and columns in characters.
    """
    if not patterns:
        return {}
    root = _root(text)
    lines: List[str] = text.splitlines(keepends=True)
    found: Dict[Tuple[int, int], str] = {}
    for pattern in patterns:
        for node in root.find_all(pattern=pattern.strip()):
            if node.kind() != "call":
                continue
            start = node.range().start
            line = lines[start.line] if start.line < len(lines) else ""
            key = (start.line + 1, len(line[: start.column].encode("utf-8")))
            found.setdefault(key, _callee(pattern))
    return found
