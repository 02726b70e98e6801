"""Reads `# noqa` comments as flake8 (7.x) reads them, so `check` and `fix` suppress exactly what flake8 suppresses.

flake8's rules, reproduced here (flake8/defaults.py, processor.py, violation.py):
- inline: `# noqa` anywhere in the line searched (case-insensitive), optionally `:CODES` with at most one space
  after the colon; codes are `[A-Z]+[0-9]+` items separated by commas or spaces. `# noqa: HTP` (no digits)
  does not parse as a code list, so it is a blanket `# noqa`, as in flake8.
- a finding is suppressed when its code is in the list or starts with one of its items (`HTP1` covers HTP101);
  the comparison is case-sensitive (`# noqa: htp101` suppresses nothing, as in flake8).
- the line searched is the finding's physical line, widened to every line of the tokens up to the next NL or
  NEWLINE token: a multi-line string or a backslash continuation joins its lines; a bracketed multi-line call
  does not (each line inside brackets ends with its own NL token).
- file-level: a line that *starts* (after whitespace) with `# flake8: noqa` or `# flake8=noqa`; flake8 7.x
  matches that prefix only, so `# flake8: noqa: E501` on its own line also skips the whole file.
"""

from __future__ import annotations

import io
import re
import tokenize
from functools import lru_cache
from typing import Dict, FrozenSet, List, Optional, Sequence, TypeVar

# The same expressions as flake8's NOQA_INLINE_REGEXP and NOQA_FILE.
NOQA_INLINE = re.compile(r"# noqa(?::[\s]?(?P<codes>([A-Z]+[0-9]+(?:[,\s]+)?)+))?", re.IGNORECASE)
NOQA_FILE = re.compile(r"\s*# flake8[:=]\s*noqa", re.IGNORECASE)
_SEPARATOR = re.compile(r"[,\s]")

T = TypeVar("T")


class Suppressions:
    """The `# noqa` comments of one source text; `suppressed(code, line)` answers as flake8 would."""

    def __init__(self, text: str, python: bool = True) -> None:
        # Universal newlines, as flake8 reads a file (tokenize.open): \r\n and a lone \r end a line.
        self.lines: List[str] = io.StringIO(text, newline=None).readlines()
        self.python = python
        # Cheap gate: no "noqa" anywhere means nothing is suppressed and nothing need be tokenized.
        self.any = "noqa" in text.lower()
        self.whole_file = self.any and any(NOQA_FILE.match(line) for line in self.lines)
        self._mapping: Optional[Dict[int, str]] = None

    def _line_for(self, number: int) -> str:
        if self.python:
            if self._mapping is None:
                self._mapping = _noqa_line_mapping(self.lines)
            found = self._mapping.get(number)
            if found is not None:
                return found
        # flake8 falls back to the physical line (linecache) where the mapping has none.
        return self.lines[number - 1] if 1 <= number <= len(self.lines) else ""

    def suppressed(self, code: str, line: int) -> bool:
        """True when flake8 would drop a finding of `code` reported on `line`."""
        if not self.any:
            return False
        if self.whole_file:
            return True
        codes = _codes_of(self._line_for(line))
        if codes is None:
            return False
        return not codes or code in codes or code.startswith(tuple(codes))


@lru_cache(maxsize=1024)
def _codes_of(line: str) -> Optional[FrozenSet[str]]:
    """None: no `# noqa`; an empty set: a blanket `# noqa`; else the codes listed."""
    match = NOQA_INLINE.search(line)
    if match is None:
        return None
    listed = match.group("codes")
    if listed is None:
        return frozenset()
    return frozenset(item.strip() for item in _SEPARATOR.split(listed) if item.strip())


def _noqa_line_mapping(lines: Sequence[str]) -> Dict[int, str]:
    """flake8's `FileProcessor._noqa_line_mapping`: each line number to the joined lines searched for it."""
    mapping: Dict[int, str] = {}
    iterator = iter(lines)
    try:
        tokens = list(tokenize.generate_tokens(lambda: next(iterator, "")))
    except (tokenize.TokenError, SyntaxError):
        return {}
    low, high = len(lines) + 2, -1
    for token in tokens:
        if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
            continue
        low = min(low, token.start[0])
        high = max(high, token.end[0])
        if token.type in (tokenize.NL, tokenize.NEWLINE):
            joined = "".join(lines[low - 1:high])
            for number in range(low, high + 1):
                mapping[number] = joined
            low, high = len(lines) + 2, -1
    return mapping


def unsuppressed(findings: Sequence[T], text: str, python: bool = True) -> List[T]:
    """The findings (anything with `.code` and `.line`) that no `# noqa` of `text` suppresses."""
    if not findings:
        return list(findings)
    noqa = Suppressions(text, python)
    if not noqa.any:
        return list(findings)
    return [f for f in findings if not noqa.suppressed(f.code, f.line)]  # type: ignore[attr-defined]
