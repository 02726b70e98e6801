"""Position units: `ast` reports UTF-8 byte columns, libcst counts characters; convert with the line's text."""

from __future__ import annotations

import re
from typing import List, Sequence, Tuple

# Python's tokenizer ends lines at \n, \r\n and \r only (not at \f, \v or U+2028 as str.splitlines does).
_LINE_END = re.compile(r"\r\n|\r|\n")

Span = Tuple[int, int, int, int]


def source_lines(text: str) -> List[str]:
    """The lines of `text` as the tokenizer numbers them, without their line ends (index 0 is line 1)."""
    return _LINE_END.split(text)


def char_column(lines: Sequence[str], line: int, byte_col: int) -> int:
    """The character column of UTF-8 byte offset `byte_col` on 1-based `line`."""
    if not 1 <= line <= len(lines):
        return byte_col
    text = lines[line - 1]
    if text.isascii():
        return byte_col
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def char_span(lines: Sequence[str], span: Span) -> Span:
    """An `ast` span (line, byte col, end line, end byte col) in libcst's units (characters)."""
    line, col, end_line, end_col = span
    return (line, char_column(lines, line, col), end_line, char_column(lines, end_line, end_col))
