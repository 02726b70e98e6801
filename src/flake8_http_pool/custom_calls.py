"""In-house unpooled calls: finds the calls matching the user's ast-grep patterns (option `unpooled-calls`)."""

from __future__ import annotations

from typing import Sequence


class PatternError(ValueError):
    """A pattern ast-grep cannot use."""


def validate_patterns(patterns: Sequence[str]) -> None:
    """Raise PatternError for a pattern that is not a call pattern ast-grep can parse."""
