"""`fix --check` answers from the planners alone; it must give the same verdict as really fixing the file."""

from __future__ import annotations

from pathlib import Path
import pytest

from flake8_http_pool.fixing import fix_source, planned_fixes
from flake8_http_pool.source_files import decode_source

from conftest import fixture_params


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
@pytest.mark.parametrize("path", fixture_params("", "fixes"))
def test_planned_verdict_matches_the_fix(path: Path, unsafe: bool) -> None:
    text = decode_source(path.read_bytes())
    planned = planned_fixes(text, unsafe=unsafe, filename=str(path))
    fixed = fix_source(text, unsafe=unsafe, filename=str(path))
    assert planned.error == fixed.error
    assert bool(planned.applied) == (fixed.text != text), (dict(planned.applied), dict(fixed.applied))
    if fixed.applied:  # later rounds may fix what the first fix uncovered, but the first is planned here
        assert set(fixed.applied) & set(planned.applied)
