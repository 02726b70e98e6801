"""Huge and odd inputs (issue 11): the size limit, --jobs caps, out of memory, UTF-16 cookies, NFKC names."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_support import assert_no_traceback, command, processes, run_cli
from conftest import parse_flake8, run_flake8

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each case runs the commands
# over a tree of odd files
pytestmark = pytest.mark.slow


LOOP = "import requests\n\nfor u in urls:\n    requests.get(u)\n"
GOOD_LINE = "./good.py:4:5: HTP101"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


# -- the size limit --------------------------------------------------------------------------------------
def test_a_1_gb_sparse_file_is_skipped_unread_with_one_line(tmp_path):
    (tmp_path / "good.py").write_text(LOOP)
    with open(tmp_path / "huge.py", "wb") as handle:
        handle.truncate(1024 ** 3)  # sparse: costs no disk; reading it would take 1 GB of memory
    started = time.monotonic()
    result = run_cli(["check", "--isolated", "."], cwd=tmp_path, timeout=60)
    took = time.monotonic() - started
    assert result.returncode == 2
    assert result.stderr == "./huge.py: error: skipped: 1 GB is over the 4 MB limit (--max-file-size)\n"
    assert result.stdout.startswith(GOOD_LINE)
    assert took < 30, took
    fixed = run_cli(["fix", "--isolated", "--diff", "."], cwd=tmp_path, timeout=60)
    assert fixed.returncode == 2
    assert fixed.stderr.startswith("./huge.py: error: skipped: 1 GB is over the 4 MB limit (--max-file-size)\n")
    assert "1 file skipped:\n  ./huge.py: skipped: 1 GB is over the 4 MB limit" in fixed.stderr
    assert_no_traceback(fixed)


def test_the_limit_is_set_on_the_command_line_or_in_pyproject(tmp_path):
    (tmp_path / "good.py").write_text(LOOP)  # 59 bytes
    (tmp_path / "padded.py").write_text("# padding\n" * 300)  # 3,000 bytes
    result = run_cli(["check", "--isolated", "--max-file-size", "1K", "."], cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "./padded.py: error: skipped: 2.9 KB is over the 1 KB limit (--max-file-size)\n"
    assert run_cli(["check", "--isolated", "--max-file-size", "3000", "."], cwd=tmp_path).returncode == 1
    assert run_cli(["check", "--isolated", "--max-file-size", "0", "."], cwd=tmp_path).returncode == 1  # no limit
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-http-pool]\nmax-file-size = "2K"\n')
    assert run_cli(["check", "."], cwd=tmp_path).stderr.startswith("./padded.py: error: skipped: 2.9 KB is over "
                                                                  "the 2 KB limit")
    assert run_cli(["check", "--max-file-size", "4M", "."], cwd=tmp_path).returncode == 1  # the flag wins
    (tmp_path / "pyproject.toml").write_text("[tool.flake8-http-pool]\nmax-file-size = 2999\n")
    assert run_cli(["check", "."], cwd=tmp_path).returncode == 2
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-http-pool]\nmax-file-size = "lots"\n')
    bad = run_cli(["check", "."], cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "pyproject.toml: max-file-size: not a size: 'lots'" in bad.stderr
    (tmp_path / "pyproject.toml").write_text('[tool.flake8-http-pool]\nmax-file-size = ["4M"]\n')
    bad = run_cli(["check", "."], cwd=tmp_path)
    assert bad.returncode == 2 and 'max-file-size must be a size: a number of bytes, or a string such as "4M"' in bad.stderr
    bad = run_cli(["check", "--max-file-size", "4X", "."], cwd=tmp_path)
    assert bad.returncode == 2 and "not a size: '4X'" in bad.stderr


def test_standard_input_over_the_limit_is_skipped(tmp_path):
    big = LOOP + "# padding\n" * 200
    result = run_cli(["check", "--isolated", "--max-file-size", "1K", "-"], cwd=tmp_path, stdin=big)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == "stdin: error: skipped: 2.0 KB is over the 1 KB limit (--max-file-size)\n"
    fixed = run_cli(["fix", "--isolated", "--max-file-size", "1K", "-"], cwd=tmp_path, stdin=big)
    assert fixed.returncode == 2 and fixed.stdout == big  # an editor gets its buffer back unchanged


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limit=st.integers(min_value=64, max_value=4096), delta=st.integers(min_value=-3, max_value=3))
def test_sizes_around_the_limit(tmp_path, limit, delta):
    size = limit + delta
    body = LOOP + "#" * (size - len(LOOP) - 1) + "\n" if size > len(LOOP) + 1 else LOOP[:size]
    (tmp_path / "a.py").write_text(body)
    assert os.path.getsize(tmp_path / "a.py") == size
    result = run_cli(["check", "--isolated", "--max-file-size", str(limit), "a.py"], cwd=tmp_path)
    if size > limit:
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.count("\n") == 1 and "is over the" in result.stderr
    else:
        assert result.stderr == "" and result.returncode in (0, 1)


def test_sizes_parse_and_print():
    from flake8_http_pool.source_files import format_size, parse_size

    assert [parse_size(t) for t in ("0", "4194304", "512K", "4M", "4mb", "1G", " 2k ")] == [
        0, 4194304, 512 * 1024, 4 * 1024 ** 2, 4 * 1024 ** 2, 1024 ** 3, 2048]
    for bad in ("", "-1", "4X", "1.5M", "M", "4 M"):
        with pytest.raises(ValueError):
            parse_size(bad)
    assert [format_size(n) for n in (12, 3000, 4 * 1024 ** 2, 54498210, 1024 ** 3)] == [
        "12 bytes", "2.9 KB", "4 MB", "51 MB", "1 GB"]


# -- out of memory is not "nested too deeply" ------------------------------------------------------------
def _run_with_memory_limit(args, cwd: Path, limit: int) -> subprocess.CompletedProcess:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run([*command(), *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          preexec_fn=cap, env=env)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is enforced as measured on Linux")
@pytest.mark.parametrize("verb", ["check", "fix"])
def test_out_of_memory_is_called_out_of_memory(tmp_path, verb):
    block = "def f{n}(urls):\n    for u in urls:\n        requests.get(u, timeout=5)\n\n"
    (tmp_path / "big.py").write_text("import requests\n\n" + "".join(block.format(n=n) for n in range(30000)))
    result = _run_with_memory_limit([verb, "--isolated", "--jobs", "1", "big.py"], tmp_path, 300 * 1024 ** 2)
    assert result.returncode == 2, result
    assert "nested too deeply" not in result.stdout + result.stderr
    assert "out of memory" in result.stdout + result.stderr, result
    assert_no_traceback(result)


# -- --jobs ------------------------------------------------------------------------------------------------
def _children(pid: int) -> int:
    return sum(1 for _, fields in processes() if int(fields[1]) == pid)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="counts processes through /proc")
def test_jobs_is_capped_at_the_core_count_and_says_so(tmp_path):
    cores = _cores()
    asked = max(8, 2 * cores)
    for n in range(asked * 20):  # enough chunks of files for every worker asked for
        (tmp_path / f"f{n}.py").write_text(LOOP)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    process = subprocess.Popen([*command(), "check", "--isolated", "--jobs", str(asked), "."], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    most = 0
    while process.poll() is None:
        most = max(most, _children(process.pid))
        time.sleep(0.005)
    out, err = process.communicate()
    assert process.returncode == 1
    assert out.count("HTP101") == asked * 20
    assert err == f"flake8-http-pool: --jobs {asked}: using {cores} (the core count)\n"
    assert most <= cores, most


def test_jobs_at_or_under_the_core_count_is_silent(tmp_path):
    for n in range(3):
        (tmp_path / f"f{n}.py").write_text(LOOP)
    result = run_cli(["check", "--isolated", "--jobs", str(_cores()), "."], cwd=tmp_path)
    assert (result.returncode, result.stderr) == (1, "")
    fixed = run_cli(["fix", "--isolated", "--jobs", str(_cores() + 1), "."], cwd=tmp_path)
    assert fixed.stderr.startswith(f"flake8-http-pool: --jobs {_cores() + 1}: using {_cores()} (the core count)\n")


# -- a UTF-16 coding cookie on ASCII bytes -----------------------------------------------------------------
@pytest.mark.parametrize("tail", ["x = 1\n", "x = 12\n"])  # odd and even byte counts fail differently
def test_a_utf16_cookie_on_ascii_bytes_names_the_cookie(tmp_path, tail):
    (tmp_path / "a.py").write_text("# -*- coding: utf-16 -*-\nimport requests\n" + tail)
    expected = ("a.py:1:1: E999 SyntaxError: encoding problem: utf-16 (the coding cookie on line 1 names an "
                "encoding that is not ASCII-compatible, so it cannot be the file's)\n")
    result = run_cli(["check", "--isolated", "a.py"], cwd=tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (2, expected, "")
    fixed = run_cli(["fix", "--isolated", "a.py"], cwd=tmp_path)
    assert fixed.returncode == 2 and fixed.stderr.startswith(expected)
    # Python running the file blames the encoding too
    ran = subprocess.run([sys.executable, "a.py"], cwd=tmp_path, capture_output=True, text=True)
    assert "encoding problem: utf-16" in ran.stderr


def test_ascii_compatible_cookies_still_decode(tmp_path):
    (tmp_path / "a.py").write_bytes(b"# -*- coding: latin-1 -*-\nimport requests\ns = '\xe9'\n"
                                    b"for u in urls:\n    requests.get(u)\n")
    assert run_cli(["check", "--isolated", "a.py"], cwd=tmp_path).stdout.startswith("a.py:5:5: HTP101")


# -- NFKC in the gates -------------------------------------------------------------------------------------
FULLWIDTH = "import ｒｅｑｕｅｓｔｓ\n\nfor u in urls:\n    ｒｅｑｕｅｓｔｓ.get(u)\n"


def test_fullwidth_library_names_are_seen_by_check_flake8_and_fix(tmp_path):
    path = tmp_path / "a.py"
    path.write_text(FULLWIDTH, encoding="utf-8")
    result = run_cli(["check", "--isolated", "a.py"], cwd=tmp_path)
    assert result.returncode == 1 and result.stdout.startswith("a.py:4:5: HTP101 requests.get()"), result
    flake8 = run_flake8([path])
    assert parse_flake8(flake8.stdout) == {str(path.resolve()): {(4, "HTP101")}}
    fixed = run_cli(["fix", "--isolated", "--unsafe-fixes", "--diff", "a.py"], cwd=tmp_path)
    assert "+        session.get(u)" in fixed.stdout, fixed
    # an ASCII file that names no library still passes the gate unparsed... and a non-ASCII one too
    (tmp_path / "b.py").write_text("s = 'ｈｅｌｌｏ'\n", encoding="utf-8")
    assert run_cli(["check", "--isolated", "b.py"], cwd=tmp_path).returncode == 0


def test_the_patch_gate_reads_names_as_the_parser_does():
    from flake8_http_pool.fix_facts import may_patch

    assert may_patch("ｒｅｑｕｅｓｔｓ.Session = Fake\n".encode())
    assert may_patch("ｍｏｃｋｅｒ.stub()\n".encode())  # pytest-mock's fixture, as the parser reads it
    assert may_patch("ｍｏｃｋ.ｐａｔｃｈ(\"a.b\")\n".encode())
    assert not may_patch(b"dispatch(event)\n")
    assert not may_patch("s = 'ｈｅｌｌｏ'\n".encode())
    assert not may_patch(b"x = 1\n")


# -- the parser's own warnings ---------------------------------------------------------------------------
WARNS = LOOP + 'x = 1 if 1else 0\nPATTERN = "\\d"\nif x is 1:\n    pass\n'


@pytest.mark.parametrize("args", [["check", "--isolated", "--preview", "."],
                                  ["fix", "--isolated", "--unsafe-fixes", "."]])
def test_the_parsers_syntax_warnings_are_not_printed(tmp_path, args):
    """`1if`, an invalid escape and `is 1` make the parser or compiler warn on stderr: that is the interpreter's and
    flake8's to say; our run prints its findings and nothing else (in the main process and in the workers)."""
    (tmp_path / "a.py").write_text(WARNS)
    (tmp_path / "b.py").write_text(WARNS)
    result = run_cli([*args[:1], "-q", *args[1:]], cwd=tmp_path, timeout=120)
    assert_no_traceback(result)
    assert "Warning" not in result.stderr, result.stderr
    assert result.stderr == ""
