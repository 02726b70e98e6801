"""The one options object both front ends (flake8 and the standalone command) fill."""

from __future__ import annotations

from typing import Iterable, NamedTuple, Tuple


class Options(NamedTuple):
    """Settings that change what the engine reports."""

    hot_decorators: Tuple[str, ...] = ()
    unpooled_calls: Tuple[str, ...] = ()
    # Files larger than this many bytes are skipped with one line (0: no limit); see source_files.
    max_file_size: int = 4 * 1024 * 1024


def split_list(value: "str | Iterable[str] | None") -> Tuple[str, ...]:
    """Split a comma- or newline-separated option value (or a list of them) into clean items."""
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else list(value)
    out = []
    for item in items:
        for part in str(item).replace("\n", ",").split(","):
            part = part.strip()
            if part:
                out.append(part)
    return tuple(out)


DEFAULT_OPTIONS = Options()
