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


# Bounds checked before ast-grep-py sees a pattern: its pattern parser recurses once per nesting level and
# segfaults (exit 139, no message) on a call nested 20,000 deep, and every pattern costs a pass over every
# file (2,000 patterns made `check` 100x slower). Real in-house wrappers are one short call.
MAX_PATTERNS = 200
MAX_PATTERN_LENGTH = 2000
MAX_PATTERN_DEPTH = 50

# ast-grep reads `$NAME` in a Python pattern by swapping `$` for this character, which tree-sitter takes as
# part of an identifier; the shape check below does the same, so `$F($$$)` parses as the call it stands for.
_EXPANDO = "\u00b5"
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = frozenset(_OPENERS.values())


def _root(text: str) -> Any:
    return sg_root_class()(text, LANGUAGE).root()


def _shown(pattern: str, limit: int = 40) -> str:
    """A pattern as messages quote it: cut short (its length said) when long, so the line stays one line."""
    flat = " ".join(pattern.split())
    if len(flat) <= limit:
        return repr(flat)
    return f"{flat[:limit]!r}..."


def bracket_depth(pattern: str) -> int:
    """How deep brackets nest in `pattern`, brackets inside string literals not counted."""
    depth = deepest = 0
    quote = ""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if quote:
            if char == "\\":
                index += 1  # the escaped character cannot end the string
            elif pattern.startswith(quote, index):
                index += len(quote) - 1
                quote = ""
        elif char in "'\"":
            quote = char * 3 if pattern.startswith(char * 3, index) else char
            index += len(quote) - 1
        elif char == "#":
            break  # a comment runs to the end of the line; patterns are one line in practice
        elif char in _OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif char in _CLOSERS:
            depth = max(depth - 1, 0)
        index += 1
    return deepest


def check_bounds(patterns: Sequence[str]) -> None:
    """Raise PatternError for too many patterns, or one too long or nested too deeply; ast-grep is not touched."""
    if len(patterns) > MAX_PATTERNS:
        raise PatternError(f"{len(patterns):,} patterns, over the limit of {MAX_PATTERNS} (each one costs a pass "
                           "over every file)")
    for number, pattern in enumerate(patterns, 1):
        where = f"pattern {number} {_shown(pattern)}" if len(patterns) > 1 else _shown(pattern)
        if len(pattern) > MAX_PATTERN_LENGTH:
            raise PatternError(f"{where} is {len(pattern):,} characters long, over the limit of "
                               f"{MAX_PATTERN_LENGTH:,}")
        depth = bracket_depth(pattern)
        if depth > MAX_PATTERN_DEPTH:
            raise PatternError(f"{where} nests brackets {depth:,} deep, over the limit of {MAX_PATTERN_DEPTH}")


def validate_patterns(patterns: Sequence[str]) -> None:
    """Raise PatternError unless every pattern is one call expression (`mycorp.http.get($$$)`, `$F($$$)`)."""
    check_bounds(patterns)
    for pattern in patterns:
        text = pattern.strip()
        try:
            # The shape is judged on the text as ast-grep parses it, metavariables made identifiers.
            shape = _root(text.replace("$", _EXPANDO))
            call = shape.find(kind="call")
            # The whole pattern must be the call: `x = get($A)`, `get` or `$X` alone would match other things.
            if call is None or call.text().strip() != text.replace("$", _EXPANDO) or shape.find(kind="ERROR"):
                raise PatternError(f"{_shown(pattern)} cannot match a call: write a call, e.g. "
                                   "`mycorp.http.get($$$)` or `$CLIENT.fetch($URL)`")
            _root(text).find(pattern=text)  # ast-grep's own check of the pattern
        except (PatternError, MissingExtra):
            raise
        except Exception as error:  # ast-grep reports bad patterns as RuntimeError with a long backtrace
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise PatternError(f"{_shown(pattern)}: {first}") from None


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
