"""The `unpooled-calls` option: in-house wrappers given as ast-grep patterns count as unpooled calls."""

from __future__ import annotations

import subprocess
import sys

from cli_support import run_cli
from conftest import parse_flake8, run_flake8

SOURCE = '''import mycorp.http

def legacy_fetch(url):
    pass

for u in urls:
    mycorp.http.get(u, timeout=3)
    x = "é"; legacy_fetch(u)
    legacy_fetch(u, 2)  # the pattern takes one argument
legacy_fetch("once")  # not in a loop

@app.get("/")
def handler():
    return mycorp.http.get("https://x")
'''
EXPECTED = {(7, "HTP101"), (8, "HTP101"), (14, "HTP102")}


def test_check_and_flake8_report_the_in_house_calls(tmp_path):
    path = tmp_path / "client.py"
    path.write_text(SOURCE, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flake8-http-pool]\nunpooled-calls = ["mycorp.http.get($$$)", "legacy_fetch($URL)"]\n'
    )
    ours = parse_flake8(run_cli(["check", str(path)], cwd=tmp_path).stdout)
    assert ours == {str(path.resolve()): EXPECTED}
    flake8 = run_flake8([path], "--http-pool-unpooled-calls", "mycorp.http.get($$$)\nlegacy_fetch($URL)")
    assert parse_flake8(flake8.stdout) == ours
    # columns agree too (ast counts UTF-8 bytes, ast-grep characters)
    assert "client.py:8:15: HTP101" in run_cli(["check", "client.py"], cwd=tmp_path).stdout


def test_without_the_option_nothing_is_reported_and_ast_grep_is_not_imported(tmp_path):
    path = tmp_path / "client.py"
    path.write_text(SOURCE, encoding="utf-8")
    assert run_cli(["check", "--isolated", "client.py"], cwd=tmp_path).returncode == 0
    code = (
        "import sys, flake8_http_pool.engine as e, flake8_http_pool.plugin, flake8_http_pool.checking;"
        f"e.check_source(open({str(path)!r}).read());"
        "print('ast_grep_py' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_positions_are_ast_positions():
    from flake8_http_pool.custom_calls import find_custom_calls

    assert find_custom_calls('s = "日本"; fetch(1)\n', ["fetch($A)"]) == {(1, 14): "fetch"}
