"""Bad input: one error line each, exit 2, no traceback, and the good files still reported.

A source Python refuses gets flake8's shape on stdout (`path:2:6: E999 SyntaxError: ...`), with the findings; a
file that cannot be read gets `path: error: reason` on stderr.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from cli_support import assert_no_traceback, run_cli

LOOP = "import requests\nfor u in urls:\n    requests.get(u)\n"
# How deep a `1 + 1 + ...` sum CPython's parser accepts depends on the version: 3.9 and 3.10 take 30,000 terms,
# 3.11 and 3.12 refuse 3,000, 3.13 takes 3,000 and refuses 30,000. Each candidate is asked of the running
# interpreter (in a child, so a C-level crash cannot take pytest down).
_SUM_TERMS = (3000, 30000)


def _deep_sum(terms: int) -> str:
    return "import requests\nx = " + " + ".join(["1"] * terms) + "\nfor u in urls:\n    requests.get(u)\n"


@functools.lru_cache(maxsize=None)
def _parser_refuses(source: str) -> bool:
    """Whether the running interpreter's `ast.parse` refuses `source` (RecursionError, MemoryError, SyntaxError)."""
    probe = (
        "import ast, sys\n"
        "try:\n    ast.parse(sys.stdin.read())\n"
        "except (RecursionError, MemoryError, SyntaxError):\n    sys.exit(3)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], input=source, text=True, capture_output=True, timeout=120)
    assert result.returncode in (0, 3), f"the parser probe died: exit {result.returncode}\n{result.stderr[-2000:]}"
    return result.returncode == 3


def _refused_deep_sum() -> Optional[bytes]:
    """The shallowest candidate sum the running parser refuses, or None when it takes them all."""
    for terms in _SUM_TERMS:
        if _parser_refuses(_deep_sum(terms)):
            return _deep_sum(terms).encode()
    return None


# Each one names an HTTP library, so it is parsed (a file naming none is never parsed: see test_gate_*).
BAD_FILES = {
    "undecodable": b"import requests\nx = '\xff\xfe'\n",
    "bad_cookie": b"# -*- coding: no-such-codec -*-\nimport requests\n",
    "nul_bytes": b"import requests\nx = 1\x00\n",
    "syntax_error": b"import requests\ndef f(:\n",
    "deep_parens": ("import requests\nx = " + "(" * 1000 + ")" * 1000 + "\n").encode(),
    "null_in_cookie_file": b"\xef\xbb\xbf# coding: latin-1\nimport requests\n",  # BOM contradicts the cookie
}
if _refused_deep_sum() is not None:  # a sum too deep for this parser is bad input like the others
    BAD_FILES["deep_sum"] = _refused_deep_sum()


def _good(root: Path) -> None:
    (root / "good.py").write_text(LOOP, encoding="utf-8")


def _check(root: Path, *args: str):
    result = run_cli(["check", "--isolated", *args, "."], cwd=root)
    assert_no_traceback(result)
    return result


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_bad_file_gives_one_error_line_and_the_good_file_is_reported(tmp_path, kind):
    _good(tmp_path)
    (tmp_path / f"{kind}.py").write_bytes(BAD_FILES[kind])
    for jobs in ("1", "2"):
        result = _check(tmp_path, "--jobs", jobs)
        assert result.returncode == 2
        assert result.stderr == ""
        lines = [line for line in result.stdout.splitlines() if line.startswith(f"./{kind}.py:")]
        assert len(lines) == 1 and re.match(rf"\./{kind}\.py:\d+:\d+: E999 \w+Error: \S", lines[0]), result.stdout
        assert any(line.startswith("./good.py:3:5: HTP101") for line in result.stdout.splitlines())


def test_all_bad_files_at_once(tmp_path):
    _good(tmp_path)
    for kind, data in BAD_FILES.items():
        (tmp_path / f"{kind}.py").write_bytes(data)
    result = _check(tmp_path)
    assert result.returncode == 2
    assert result.stderr == ""
    errors = [line.split(":")[0] for line in result.stdout.splitlines() if " E999 " in line]
    assert sorted(errors) == sorted(f"./{k}.py" for k in BAD_FILES)
    assert "./good.py:3:5: HTP101" in result.stdout


@pytest.mark.parametrize("terms", _SUM_TERMS)
def test_a_deep_sum_gives_the_finding_or_one_clean_error_line(tmp_path, terms):
    """Whichever the running parser does with the sum: it parses, so the loop below it is reported, or it
    refuses, so the file gets one error line; either way no traceback and the good file is still reported."""
    _good(tmp_path)
    source = _deep_sum(terms)
    (tmp_path / "deep_sum.py").write_text(source, encoding="utf-8")
    result = _check(tmp_path)
    assert "./good.py:3:5: HTP101" in result.stdout, result.stdout
    if _parser_refuses(source):
        assert result.returncode == 2
        # One line for the file, in flake8's shape (`path:line:col: E999 ...`) among the findings.
        lines = [line for line in (result.stdout + result.stderr).splitlines() if line.startswith("./deep_sum.py:")]
        assert len(lines) == 1 and " E999 " in lines[0], result.stdout + result.stderr
        assert "./deep_sum.py:4:5: HTP101" not in result.stdout
    else:
        assert result.returncode == 1 and result.stderr == "", result.stderr
        assert "./deep_sum.py:4:5: HTP101" in result.stdout, result.stdout


@pytest.mark.parametrize(
    "name,data",
    [
        ("latin1_cookie", b"# -*- coding: latin-1 -*-\nimport requests\nname = 'caf\xe9'\nfor u in urls:\n    requests.get(u)\n"),
        ("bom", b"\xef\xbb\xbfimport requests\nfor u in urls:\n    requests.get(u)\n"),
        ("crlf", b"import requests\r\nfor u in urls:\r\n    requests.get(u)\r\n"),
    ],
)
def test_valid_encodings_are_read(tmp_path, name, data):
    line = 5 if name == "latin1_cookie" else 3
    (tmp_path / f"{name}.py").write_bytes(data)
    result = _check(tmp_path)
    assert result.stderr == ""
    assert result.stdout.startswith(f"./{name}.py:{line}:5: HTP101")


def test_unreadable_file(tmp_path):
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        pytest.skip("root reads files whatever their mode; test_unreadable_path_in_the_list covers a path that cannot be opened")
    _good(tmp_path)
    bad = tmp_path / "secret.py"
    bad.write_text(LOOP)
    bad.chmod(0)
    try:
        result = _check(tmp_path)
    finally:
        bad.chmod(0o644)
    assert result.returncode == 2
    assert result.stderr == "./secret.py: error: cannot read: permission denied\n"


def test_unreadable_path_in_the_list(tmp_path):
    # A path that cannot be opened even by root: a file "inside" a regular file.
    _good(tmp_path)
    result = run_cli(["check", "--isolated", "--files-from", "-"], cwd=tmp_path, stdin="good.py\ngood.py/inner.py\n")
    assert_no_traceback(result)
    assert result.returncode == 2
    assert result.stderr == "good.py/inner.py: error: not a directory\n"
    assert result.stdout.startswith("good.py:3:5: HTP101")


def test_fifo_symlink_loop_and_symlink_out_of_the_root_are_skipped(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    _good(root)
    os.mkfifo(root / "x.py")
    (root / "loop_a.py").symlink_to("loop_b.py")
    (root / "loop_b.py").symlink_to("loop_a.py")
    (root / "cycle").mkdir()
    (root / "cycle" / "up").symlink_to("..", target_is_directory=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.py").write_text(LOOP)
    (root / "far.py").symlink_to(outside / "far.py")
    (root / "far_dir").symlink_to(outside, target_is_directory=True)
    (root / "inside_link.py").symlink_to(root / "good.py")  # same file: checked once
    result = run_cli(["check", "--isolated", "-q", "."], cwd=root, timeout=60)
    assert_no_traceback(result)
    assert result.stderr == ""
    assert result.returncode == 1
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["./good.py"]


def test_files_that_name_no_http_library_are_not_parsed(tmp_path):
    """The byte gate skips the parse too (DESIGN/issue 13: parsing every file was most of check's time): a
    syntax error in a file that names no HTTP library is flake8's and ruff's to report. Bytes that cannot be
    source at all (a NUL) are still reported, since every file is decoded."""
    from conftest import run_flake8

    (tmp_path / "plain.py").write_text("def f(:\n")
    (tmp_path / "nul.py").write_bytes(b"x = 1\x00\n")
    (tmp_path / "broken_client.py").write_text("import requests\ndef f(:\n")
    result = _check(tmp_path)
    assert result.stderr == ""
    broken, nul = sorted(result.stdout.splitlines())
    assert nul == "./nul.py:1:1: E999 SyntaxError: source contains a NUL byte"
    assert re.match(r"\./broken_client\.py:2:\d+: E999 SyntaxError: ", broken), broken  # the column is the parser's
    assert result.returncode == 2
    # flake8 (E999 is its own) reports the file check passes over.
    assert re.search(r"plain\.py:1:\d+: E999 ", run_flake8([tmp_path / "plain.py"], "--select", "E999").stdout)


def test_a_syntax_error_is_where_flake8_puts_its_e999(tmp_path):
    from conftest import run_flake8

    sources = {"never_closed.py": "import requests\nx = (1,\ny = 2 2\n", "indent.py": "import requests\n  x = 1\n",
               "plain.py": "import requests\ndef f(:\n",
               "late.py": "import requests\n\n\ndef g():\n    return [1,, 2]\n"}
    for name, text in sources.items():
        (tmp_path / name).write_text(text)
    ours = _check(tmp_path)
    flake8 = run_flake8(sorted(tmp_path.iterdir()), "--select", "E999")
    assert ours.returncode == 2
    expected = sorted(line.replace(str(tmp_path), ".") for line in flake8.stdout.splitlines())
    assert len(expected) == len(sources)
    assert sorted(ours.stdout.splitlines()) == expected
