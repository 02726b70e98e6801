"""Read the expectations a fixture file carries in its comments.

`# HTP101` or `# HTP101, HTP403` at the end of a line: those codes are reported on that line.
`# xfail HTP101: reason` at the end of a line: the rule should report it there but cannot yet.
"""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path
from typing import Dict, NamedTuple, Set, Tuple

_EXPECTED = re.compile(r"^#\s*(HTP\d{3}(?:\s*,\s*HTP\d{3})*)\s*$")
_XFAIL = re.compile(r"^#\s*xfail\s+(HTP\d{3}):\s*(\S.*)$")


class Expectations(NamedTuple):
    expected: Set[Tuple[int, str]]
    xfail: Dict[Tuple[int, str], str]


def read_expectations(path: Path) -> Expectations:
    expected: Set[Tuple[int, str]] = set()
    xfail: Dict[Tuple[int, str], str] = {}
    source = path.read_bytes()
    for token in tokenize.tokenize(io.BytesIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        line = token.start[0]
        match = _EXPECTED.match(token.string)
        if match:
            for code in match.group(1).split(","):
                expected.add((line, code.strip()))
            continue
        match = _XFAIL.match(token.string)
        if match:
            xfail[(line, match.group(1))] = match.group(2)
    return Expectations(expected, xfail)
