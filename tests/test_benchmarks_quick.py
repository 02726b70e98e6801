"""The benchmarks run: `python benchmarks/run.py --quick` (tiny inputs, one repeat) exits 0.

It fails only when a benchmark is broken (an exception, no numbers), never because a goal was missed on a slow
machine. Slow: it builds two flake8 virtual environments on first use and runs every benchmark once.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_benchmarks_run_quick(tmp_path: Path) -> None:
    output = tmp_path / "benchmarks.md"
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "run.py"), "--quick", "--output", str(output)],
        capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    text = output.read_text()
    assert "## Machine" in text and "## Goals" in text
    for title in ("flake8 with and without the plugin", "Importing the flake8 entry point", "-file tree",
                  "The whole-project analysis and its cache", "`fix` in a pre-commit hook",
                  "The HTTP-dense project", "`fix` on every file of the shared corpus"):
        assert title in text, title
