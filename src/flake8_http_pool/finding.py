"""What the engine reports: one `Finding` per offending site, with what a fix needs to know."""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple


class Finding(NamedTuple):
    """One reported site.

    Positions are the `ast` ones: lines from 1, columns from 0 counted in UTF-8 bytes (a fix that works in
    characters must convert). `details` carries what the fix needs (the library, the loop to wrap, ...).
    """

    code: str
    line: int
    col: int
    end_line: int
    end_col: int
    message: str
    details: Mapping[str, Any] = {}

    def text(self) -> str:
        """The flake8-style text: `HTP101 message`."""
        return f"{self.code} {self.message}"


class Hit(NamedTuple):
    """What a rule's predicate yields: the node to report at, the message fields, and details for the fix."""

    node: Any
    fields: Mapping[str, Any]
    details: Mapping[str, Any] = {}
