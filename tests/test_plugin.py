"""The flake8 plugin as users meet it: registered, cheap to import, `# noqa` honoured."""

from __future__ import annotations

import os
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


def test_the_urllib_package_passes_the_text_gate_only_when_it_can_name_urlopen_or_urlretrieve(tmp_path):
    """urllib.parse alone cannot open a connection, so most of the standard library skips the walk; every way
    of reaching urllib.request.urlopen or urlretrieve (or urllib3) is still walked, and still found through
    flake8."""
    from flake8_http_pool.engine import may_have_findings

    assert not may_have_findings("from urllib.parse import quote\nimport urllib.error\n")
    assert not may_have_findings("import urllib.parse\n\nfor u in urls:\n    urllib.parse.quote(u)\n")
    assert may_have_findings("import urllib.parse, urllib3\n")
    bodies = {
        "a.py": "import urllib.parse\nfor u in urls:\n    urllib.request.urlopen(u)\n",
        "b.py": "from urllib import request\nfor u in urls:\n    request.urlopen(u)\n",
        "c.py": "from urllib.request import urlopen as fetch\nfor u in urls:\n    fetch(u)\n",
        "d.py": "import urllib.parse, urllib3\nfor u in urls:\n    urllib3.PoolManager().request('GET', u)\n",
        "e.py": "from urllib import request\nfor u in urls:\n    request.urlretrieve(u, u + '.html')\n",
        "f.py": "from urllib.request import urlretrieve as save\nfor u in urls:\n    save(u)\n",
    }
    paths = []
    for name, body in bodies.items():
        paths.append(tmp_path / name)
        paths[-1].write_text(body, encoding="utf-8")
    found = parse_flake8(run_flake8(paths).stdout)
    assert sorted(os.path.basename(path) for path, codes in found.items() if codes) == sorted(bodies), found


def test_checking_many_modules_keeps_no_tree_of_an_earlier_one_alive():
    """flake8 runs every plugin in one long process: a tree the plugin kept would grow the garbage collector's
    work for every later file (the status-code constants of a retry loop are remembered for one module only)."""
    import ast
    import gc
    import weakref

    from flake8_http_pool.plugin import HttpPoolChecker

    source = ("import requests\nCODES = {429, 503}\nwhile True:\n    r = requests.get(u)\n"
              "    if r.status_code not in CODES:\n        break\n")
    trees = []
    for _ in range(5):
        tree = ast.parse(source)
        trees.append(weakref.ref(tree))
        list(HttpPoolChecker(tree, source.splitlines(True)).run())
        del tree
    gc.collect()
    # Only the trees this test made are counted: other tests of the same process may keep their own alive.
    assert sum(ref() is not None for ref in trees[:-1]) == 0
