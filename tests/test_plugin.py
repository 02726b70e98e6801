"""The flake8 plugin as users meet it: registered, cheap to import, `# noqa` honoured."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from conftest import parse_flake8, run_flake8

import flake8_http_pool


def test_flake8_version_lists_the_plugin():
    result = subprocess.run([sys.executable, "-m", "flake8", "--version"], capture_output=True, text=True, check=True)
    assert f"flake8-http-pool: {flake8_http_pool.__version__}" in result.stdout


def test_entry_point_leaves_libcst_and_ast_grep_unimported():
    probe = textwrap.dedent(
        """
        import sys
        from importlib.metadata import entry_points
        found = entry_points()  # entry_points(group=...) and .select() are 3.10+; 3.9 gives a dict of groups
        group = found.select(group="flake8.extension") if hasattr(found, "select") else found["flake8.extension"]
        (ep,) = {e.value: e for e in group if e.name == "HTP"}.values()  # 3.9 may list one install twice
        checker = ep.load()
        import ast
        src = "import requests\\nfor u in urls:\\n    requests.get(u)\\n"
        found = list(checker(ast.parse(src), src.splitlines(True)).run())
        assert found and found[0][2].startswith("HTP101"), found
        print(sorted(m for m in sys.modules if m.split(".")[0] in ("libcst", "ast_grep_py")))
        """
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def _write(tmp_path, body: str):
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_noqa_forms(tmp_path):
    path = _write(
        tmp_path,
        """\
        import requests

        for u in urls:
            requests.get(u)  # noqa
            requests.get(u)  # noqa: HTP101
            requests.get(u)  # noqa:HTP1
            requests.get(u)  # noqa: E501
            requests.get(u)
            requests.get(u)  # NOQA: HTP101,E501
        """,
    )
    result = run_flake8([path])
    assert result.returncode == 1, result.stderr
    assert parse_flake8(result.stdout)[str(path.resolve())] == {(7, "HTP101"), (8, "HTP101")}


def test_disable_noqa_reports_everything(tmp_path):
    path = _write(tmp_path, "import requests\nfor u in urls:\n    requests.get(u)  # noqa\n")
    result = run_flake8([path], "--disable-noqa")
    assert parse_flake8(result.stdout)[str(path.resolve())] == {(3, "HTP101")}


def test_message_names_the_library_and_the_fix(tmp_path):
    path = _write(tmp_path, "import httpx\nfor u in urls:\n    httpx.get(u)\n")
    result = run_flake8([path])
    (line,) = result.stdout.splitlines()
    assert ":3:5: HTP101 " in line
    assert "httpx.get" in line and "httpx.Client" in line


def test_clean_file_exits_zero_and_prints_nothing(tmp_path):
    path = _write(tmp_path, "import requests\nwith requests.Session() as s:\n    for u in urls:\n        s.get(u)\n")
    result = run_flake8([path])
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
