"""Very deep expressions that `ast.parse` accepts must not crash the plugin: the walk is iterative.

A 900-term `1 + 1 + ... + 1` is a left-leaning `BinOp` chain 900 levels deep; a recursive visitor needs a
few frames per level and overruns the default recursion limit (1000).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from flake8_http_pool.engine import check_source
from flake8_http_pool.plugin import HttpPoolChecker

_TERMS = 900
_DEFAULT_RECURSION_LIMIT = 1000


def _deep_module() -> str:
    expr = " + ".join(["1"] * _TERMS)
    return (
        "import requests\n"
        "\n"
        f"TOTAL = {expr}\n"
        "\n"
        "\n"
        "def fetch_all(urls):\n"
        "    for u in urls:\n"
        "        requests.get(u)\n"
    )


_CALL_LINE = 8  # the requests.get in the loop


@pytest.fixture
def deep_file(tmp_path: Path) -> Path:
    path = tmp_path / "deep_expression.py"
    path.write_text(_deep_module(), encoding="utf-8")
    return path


@pytest.fixture
def default_recursion_limit():
    """Run at Python's default recursion limit, whatever pytest or a plugin set it to."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(_DEFAULT_RECURSION_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def _htp101_lines(stdout: str, path: Path) -> set:
    lines = set()
    for line in stdout.splitlines():
        if line.startswith(str(path)) and " HTP101 " in line:
            lines.add(int(line[len(str(path)) + 1:].split(":", 1)[0]))
    return lines


def test_real_flake8_reports_htp101_without_a_traceback(deep_file: Path) -> None:
    cmd = [sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", str(deep_file)]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in result.stderr, result.stderr
    output = result.stdout + result.stderr
    assert "flake8_http_pool" not in output and "flake8-http-pool" not in output, output  # our plugin never fails
    if _CALL_LINE in _htp101_lines(result.stdout, deep_file):
        return
    # flake8 always runs its built-in pyflakes, whose recursive visitor overruns the default limit on this
    # input and makes flake8 drop the whole file. That is pyflakes' limit, not ours: say so, then show our
    # finding comes through the same flake8 once pyflakes has the stack it needs.
    assert 'pyflakes[F]" failed during execution due to RecursionError' in output, output
    raised = (
        "import sys; sys.setrecursionlimit(20000); from flake8.main.cli import main; "
        f"raise SystemExit(main(['--isolated', '--select', 'HTP', {str(deep_file)!r}]))"
    )
    result = subprocess.run([sys.executable, "-c", raised], capture_output=True, text=True, timeout=300)
    assert "Traceback" not in result.stderr, result.stderr
    assert "failed during execution" not in result.stdout + result.stderr, result.stdout
    assert _CALL_LINE in _htp101_lines(result.stdout, deep_file), result.stdout


def test_engine_in_process_at_default_recursion_limit(default_recursion_limit) -> None:
    findings = check_source(_deep_module(), filename="deep_expression.py")
    assert [(f.line, f.code) for f in findings] == [(_CALL_LINE, "HTP101")]


def test_plugin_class_in_process_at_default_recursion_limit(default_recursion_limit) -> None:
    source = _deep_module()
    tree = ast.parse(source)
    checker = HttpPoolChecker(tree, source.splitlines(keepends=True))
    reported = [(line, text.split(" ", 1)[0]) for line, _, text, _ in checker.run()]
    assert reported == [(_CALL_LINE, "HTP101")]
