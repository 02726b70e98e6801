"""Which codes are reported: flake8's `--select` / `--ignore` / `--extend-select` prefix matching."""

from __future__ import annotations

import re
from typing import FrozenSet, Iterable, List, Optional, Sequence

# flake8's own check of a code prefix given on the command line or in a config file.
_VALID_PREFIX = re.compile(r"^[A-Z]{1,3}[0-9]{0,3}$")


class SelectionError(ValueError):
    """A code prefix that flake8 would not accept either."""


def _checked(prefixes: Iterable[str], option: str) -> tuple:
    out = []
    for prefix in prefixes:
        prefix = prefix.strip().upper()
        if not prefix:
            continue
        if not _VALID_PREFIX.match(prefix):
            raise SelectionError(f"{option}: {prefix!r} is not a code or code prefix (like HTP or HTP101)")
        out.append(prefix)
    return tuple(out)


class Selection:
    """Decides each code as flake8 does: the longest matching prefix wins; between equally long ones, ignore wins.

    No `select` means every rule of this tool. `extend_select` adds to whichever select list is in force.
    """

    def __init__(
        self, select: Optional[Sequence[str]] = None, ignore: Sequence[str] = (), extend_select: Sequence[str] = ()
    ) -> None:
        self._default = select is None
        base = ("HTP",) if select is None else _checked(select, "--select")
        self.select = base + _checked(extend_select, "--extend-select")
        self.ignore = _checked(ignore, "--ignore")

    def unknown(self, all_codes: Iterable[str]) -> List[str]:
        """The prefixes of select, extend-select and ignore that match none of `all_codes` (ruff refuses them)."""
        codes = tuple(all_codes)
        listed = dict.fromkeys(self.select[1:] if self._default else self.select)
        listed.update(dict.fromkeys(self.ignore))
        return [prefix for prefix in listed if not any(code.startswith(prefix) for code in codes)]

    def wants(self, code: str) -> bool:
        """True when findings with `code` are reported."""
        selected = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        if selected < 0:
            return False
        ignored = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        return selected > ignored

    def codes(self, all_codes: Iterable[str]) -> FrozenSet[str]:
        """The codes of `all_codes` that are reported."""
        return frozenset(code for code in all_codes if self.wants(code))
