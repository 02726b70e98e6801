"""A cloned repository cannot forge the output, abort a run for every file, or keep `fix` from writing (issue 32):
odd file names and cache entries escaped in every format, deep TOML and JSON named in one line, long names fixed.

Every run goes through the installed command (tests/cli_support.py) or the real flake8, with a timeout.
"""

from __future__ import annotations

import glob
import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import pytest

from cli_support import assert_no_traceback, run_cli

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): forged names run through every
# output format and flake8
pytestmark = pytest.mark.slow


WRAPPER = "import requests\n\n\ndef fetch(url):\n    return requests.get(url, timeout=5)\n"
CALLER = "from wrap import fetch\n\nfor u in ['a', 'b']:\n    fetch(u)\n"
LOOP = "import requests\n\nfor u in urls:\n    requests.get(u)\n"

# A caller's file name that, printed raw, clears the screen and splits HTP102's line in two; one that sets the
# terminal's title and returns the cursor over the line. Each with the text the output must show instead.
ODD_NAMES = {
    "c\n\x1b[2Jd.py": "c\\n\\x1b[2Jd.py",
    "e\r\x1b]0;title\x07f.py": "e\\r\\x1b]0;title\\x07f.py",
}
FORGED = " \x1b[2J\rFORGED\n./x.py:1:1: HTP999 fake"
FORGED_SHOWN = " \\x1b[2J\\rFORGED\\n./x.py:1:1: HTP999 fake"


def _raw_controls(text: str) -> List[str]:
    """The characters of `text` that do not print, but for the newlines that end its lines."""
    return sorted({char for char in text if not char.isprintable() and char != "\n"})


def _project(root: Path, caller: str) -> Path:
    """A project (a root marker) whose wrapper in wrap.py is called in a loop from the file named `caller`: HTP102
    in wrap.py, its message naming the caller's path."""
    (root / "pyproject.toml").write_text("")
    (root / "wrap.py").write_text(WRAPPER)
    (root / caller).write_text(CALLER)
    return root


def _flake8(cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", "."], cwd=cwd,
                          capture_output=True, text=True, timeout=120, env=env)


# -- 1. output the repository can forge ---------------------------------------------------------------------
@pytest.mark.parametrize("name", list(ODD_NAMES))
@pytest.mark.parametrize("output", ["text", "concise", "full", "pylint"])
def test_a_caller_s_odd_name_is_escaped_in_the_line_formats(tmp_path: Path, name: str, output: str) -> None:
    _project(tmp_path, name)
    result = run_cli(["check", "--output-format", output, "."], cwd=tmp_path, timeout=120)
    assert_no_traceback(result)
    assert result.returncode == 1, result.stderr
    assert _raw_controls(result.stdout) == [] and _raw_controls(result.stderr) == []
    findings = [line for line in result.stdout.splitlines() if line.startswith("./wrap.py:5")]
    assert len(findings) == 1 and "HTP102" in findings[0] and f"called in a loop at {ODD_NAMES[name]}:4" in findings[0]
    # Nothing but the finding, the `full` format's source line and caret, and the closing summary.
    assert all(line.startswith(("./wrap.py:5", "    ", "Found 1 finding")) for line in result.stdout.splitlines())


@pytest.mark.parametrize("name", list(ODD_NAMES))
def test_a_caller_s_odd_name_is_escaped_in_flake8s_output(tmp_path: Path, name: str) -> None:
    _project(tmp_path, name)
    result = _flake8(tmp_path)
    assert result.returncode == 1, result.stderr
    assert _raw_controls(result.stdout) == [] and _raw_controls(result.stderr) == []
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("./wrap.py:5:12: HTP102 ")
    assert f"called in a loop at {ODD_NAMES[name]}:4" in lines[0]


@pytest.mark.parametrize("name", list(ODD_NAMES))
def test_the_github_format_keeps_one_command_a_finding(tmp_path: Path, name: str) -> None:
    _project(tmp_path, name)
    result = run_cli(["check", "--output-format", "github", "."], cwd=tmp_path, timeout=120)
    assert result.returncode == 1 and _raw_controls(result.stdout) == []
    lines = result.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("::warning file=./wrap.py,line=5,")
    assert f"called in a loop at {ODD_NAMES[name]}:4" in lines[0]


@pytest.mark.parametrize("name", list(ODD_NAMES))
@pytest.mark.parametrize("output", ["json", "sarif", "gitlab"])
def test_the_json_formats_stay_valid_and_carry_the_name_whole(tmp_path: Path, name: str, output: str) -> None:
    _project(tmp_path, name)
    result = run_cli(["check", "--output-format", output, "."], cwd=tmp_path, timeout=120)
    assert result.returncode == 1, result.stderr
    assert _raw_controls(result.stdout) == []  # JSON escapes what does not print; nothing reaches a terminal
    document = json.loads(result.stdout)
    wanted = f"called in a loop at {ODD_NAMES[name]}:4"  # the message names the file as the output shows it
    if output == "json":
        (record,) = document
        assert wanted in record["message"]
        assert record["details"]["hot_path"] == name  # the place itself, whole (JSON escapes it)
    elif output == "sarif":
        (found,) = document["runs"][0]["results"]
        assert wanted in found["message"]["text"] and found["properties"]["details"]["hot_path"] == name
    else:
        (issue,) = document
        assert wanted in issue["description"]


def test_the_full_format_escapes_the_source_line_and_keeps_the_caret_under_the_call(tmp_path: Path) -> None:
    # A raw escape inside a string literal is valid Python; the caret still lands under the call.
    (tmp_path / "a.py").write_text("import requests\n\nfor u in urls:\n\tx = '\x1b[2J'; requests.get(u)\n")
    result = run_cli(["check", "--isolated", "--output-format", "full", "a.py"], cwd=tmp_path, timeout=120)
    assert result.returncode == 1, result.stderr
    assert _raw_controls(result.stdout.replace("\t", "")) == []
    lines = result.stdout.splitlines()
    assert lines[1] == "    \tx = '\\x1b[2J'; requests.get(u)"
    assert lines[2] == "    \t" + " " * len("x = '\\x1b[2J'; ") + "^"


def _forge(cache: Path) -> int:
    """Append FORGED to every finding's message in the cache's module entries (a cache committed to the
    repository may hold any text); how many entries changed."""
    from flake8_http_pool.finding import Finding

    def forged(value: Any) -> Any:
        if isinstance(value, Finding):
            return value._replace(message=value.message + FORGED)
        if isinstance(value, tuple) and hasattr(value, "_fields"):
            return type(value)(*(forged(item) for item in value))
        if isinstance(value, (list, tuple)):
            return type(value)(forged(item) for item in value)
        if isinstance(value, dict):
            return {key: forged(item) for key, item in value.items()}
        return value

    changed = 0
    for entry in glob.glob(str(cache / "m" / "*" / "*")):
        with open(entry, "rb") as handle:
            value = pickle.load(handle)
        new = forged(value)
        if new != value:
            changed += 1
            with open(entry, "wb") as handle:
                pickle.dump(new, handle)
    return changed


def test_messages_read_back_from_a_forged_cache_are_escaped(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "a.py").write_text(LOOP)
    (tmp_path / "b.py").write_text("import requests\n")
    assert run_cli(["check", "."], cwd=tmp_path, timeout=120).returncode == 1
    assert _flake8(tmp_path).returncode == 1  # the plugin's entries too
    assert _forge(tmp_path / ".flake8-http-pool-cache") >= 1

    text = run_cli(["check", "."], cwd=tmp_path, timeout=120)
    assert _raw_controls(text.stdout) == []
    lines = text.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("./a.py:4:5: HTP101 ") and lines[0].endswith(FORGED_SHOWN)

    as_json = run_cli(["check", "--output-format", "json", "."], cwd=tmp_path, timeout=120)
    assert _raw_controls(as_json.stdout) == []
    (record,) = json.loads(as_json.stdout)
    assert record["message"].endswith(FORGED)  # carried whole: JSON's escapes protect it

    flake8 = _flake8(tmp_path)
    assert _raw_controls(flake8.stdout) == []
    lines = flake8.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("./a.py:4:5: HTP101 ") and lines[0].endswith(FORGED_SHOWN)


@pytest.mark.parametrize("name", list(ODD_NAMES))
def test_fix_names_an_odd_file_escaped(tmp_path: Path, name: str) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / name).write_text(LOOP)
    checked = run_cli(["fix", "--no-progress", "--check", "--unsafe-fixes", "."], cwd=tmp_path, timeout=120)
    assert checked.returncode == 1, checked.stderr
    assert _raw_controls(checked.stdout) == [] and _raw_controls(checked.stderr) == []
    assert checked.stdout == f"would fix ./{ODD_NAMES[name]} (HTP101: 1)\n"
    diff = run_cli(["fix", "--no-progress", "--diff", "--unsafe-fixes", "."], cwd=tmp_path, timeout=120)
    assert diff.stdout.startswith(f"--- ./{ODD_NAMES[name]}\n+++ ./{ODD_NAMES[name]}\n")
    fixed = run_cli(["fix", "--no-progress", "--show-fixes", "--unsafe-fixes", "."], cwd=tmp_path, timeout=120)
    assert fixed.returncode == 0, fixed.stderr
    assert _raw_controls(fixed.stdout) == [] and _raw_controls(fixed.stderr) == []
    assert fixed.stdout == f"./{ODD_NAMES[name]}: HTP101\n"
    assert "requests.Session()" in (tmp_path / name).read_text()


def test_a_patch_summary_escapes_the_owners_codeowners_names(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text(LOOP)
    (repo / ".github").mkdir()
    (repo / ".github" / "CODEOWNERS").write_text("* @org/te\x1b[2Jam\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=60)
    result = run_cli(["fix", "--no-cache", "--no-progress", "--unsafe-fixes", "--split-by-owner", "../out", "."],
                     cwd=repo, timeout=120)
    assert_no_traceback(result)
    assert result.returncode == 1, result.stderr  # as --check: the patches hold changes not made
    assert _raw_controls(result.stderr) == []
    assert "(@org/te\\x1b[2Jam; 1 file)" in result.stderr


def test_merge_escapes_what_a_report_says(tmp_path: Path) -> None:
    record = {"path": "./a\n\x1b[2J.py", "code": "HTP101", "name": "unpooled-call-in-loop",
              "message": "m\x1b[31m\rX\n./b.py:1:1: HTP999 fake", "line": 4, "col": 5, "end_line": 4, "end_col": 19,
              "fix": "unsafe", "details": {}, "char_col": 5, "end_char_col": 19, "source_line": "    x\x1b[2J\n"}
    (tmp_path / "shard.json").write_text(json.dumps([record]))
    for output in ("text", "full", "pylint", "github"):
        result = run_cli(["merge", "--output-format", output, "shard.json", "gone\x1b[2J.json"], cwd=tmp_path,
                         timeout=120)
        assert result.returncode == 2, result.stderr  # the missing report
        assert _raw_controls(result.stdout) == [] and _raw_controls(result.stderr) == [], output
        assert result.stderr == ("flake8-http-pool: error: gone\\x1b[2J.json: cannot be read: no such file or "
                                 "directory\n")
        lines = [line for line in result.stdout.splitlines() if "HTP101" in line]
        # GitHub's runner reads CR and LF back from its own escapes; the rest is shown escaped everywhere.
        shown = "m\\x1b[31m%0DX%0A./b.py" if output == "github" else "m\\x1b[31m\\rX\\n./b.py"
        assert len(lines) == 1 and shown + ":1:1: HTP999 fake" in lines[0], output
    as_json = run_cli(["merge", "--output-format", "json", "shard.json"], cwd=tmp_path, timeout=120)
    assert _raw_controls(as_json.stdout) == []
    (back,) = json.loads(as_json.stdout)
    assert back["message"] == record["message"] and back["source_line"] == record["source_line"]


def test_a_config_s_warning_and_error_lines_escape_its_folder(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    odd = tmp_path / "s\x1b[2Jd"
    odd.mkdir()
    (odd / "pyproject.toml").write_text("[tool.flake8-http-pool]\nbogus = 1\n")
    (odd / "a.py").write_text(LOOP)
    result = run_cli(["check", "."], cwd=tmp_path, timeout=120)
    assert result.returncode == 1, result.stderr
    assert _raw_controls(result.stdout) == [] and _raw_controls(result.stderr) == []
    assert "s\\x1b[2Jd/pyproject.toml: unknown key 'bogus'" in result.stderr
    (odd / "pyproject.toml").write_text("[tool.flake8-http-pool]\nselect = [\n")
    broken = run_cli(["check", "."], cwd=tmp_path, timeout=120)
    assert broken.returncode == 2
    assert _raw_controls(broken.stdout) == [] and _raw_controls(broken.stderr) == []
    assert "s\\x1b[2Jd/pyproject.toml: error: invalid TOML" in broken.stderr


# -- 2. one bad file never costs the findings of the others ----------------------------------------------------
# Valid TOML to a parser that does not recurse; RecursionError to tomllib and tomli, which recurse per array.
DEEP_TOML = "a = " + "[" * 3000 + "]" * 3000 + "\n"
DEEP = "invalid TOML: nested too deeply (recursion limit reached)"


@pytest.mark.parametrize("content, reason", [
    (DEEP_TOML, DEEP),
    ("a = [\n", "invalid TOML: Invalid value (at end of document)"),  # malformed: what the deep one must match
])
def test_a_deep_root_pyproject_is_named_in_one_line_and_the_rest_checked(tmp_path: Path, content: str,
                                                                        reason: str) -> None:
    (tmp_path / "pyproject.toml").write_text(content)
    (tmp_path / "a.py").write_text(LOOP)
    (tmp_path / "b.py").write_text(LOOP)
    checked = run_cli(["check", "."], cwd=tmp_path, timeout=120)
    assert_no_traceback(checked)
    assert checked.returncode == 2
    assert checked.stderr == f"./pyproject.toml: error: {reason}\n"
    assert [line.split(" ")[:2] for line in checked.stdout.splitlines()[:2]] == [
        ["./a.py:4:5:", "HTP101"], ["./b.py:4:5:", "HTP101"]]
    # fix reads pyproject.toml for what it declares (HTP401's facts, requests' version): one it cannot parse
    # declares nothing, as a malformed one does; it neither stops the run nor is blamed on a.py.
    diff = run_cli(["fix", "--no-progress", "--diff", "--unsafe-fixes", "."], cwd=tmp_path, timeout=120)
    assert_no_traceback(diff)
    assert diff.returncode == 1 and "error" not in diff.stderr, diff.stderr
    assert diff.stdout.count("+with requests.Session() as session:") == 2
    fixed = run_cli(["fix", "--no-progress", "--unsafe-fixes", "."], cwd=tmp_path, timeout=120)
    assert fixed.returncode == 0 and "error" not in fixed.stderr, fixed.stderr
    assert "requests.Session()" in (tmp_path / "a.py").read_text()
    assert _flake8(tmp_path).returncode == 0  # fixed


def test_a_deep_config_of_ours_is_a_config_error_at_the_root_and_below(tmp_path: Path) -> None:
    ours = '[tool.flake8-http-pool]\nselect = ["HTP"]\n' + DEEP_TOML
    (tmp_path / "pyproject.toml").write_text(ours)
    (tmp_path / "a.py").write_text(LOOP)
    root = run_cli(["check", "."], cwd=tmp_path, timeout=120)
    assert_no_traceback(root)
    assert (root.returncode, root.stdout) == (2, "")  # as any config that does not load
    assert root.stderr == f"flake8-http-pool: error: {tmp_path / 'pyproject.toml'}: {DEEP}\n"
    fixed = run_cli(["fix", "--no-progress", "--diff", "."], cwd=tmp_path, timeout=120)
    assert fixed.returncode == 2 and fixed.stderr == root.stderr
    flake8 = _flake8(tmp_path)  # reads the project's cache-dir from it, and goes on with the default
    assert flake8.returncode == 1 and flake8.stdout.startswith("./a.py:4:5: HTP101 "), flake8.stderr

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "pyproject.toml").write_text(ours)
    (tmp_path / "sub" / "b.py").write_text(LOOP)
    below = run_cli(["check", "."], cwd=tmp_path, timeout=120)
    assert below.returncode == 2
    assert below.stderr == f"{tmp_path / 'sub' / 'pyproject.toml'}: error: {DEEP}\n"
    assert below.stdout.startswith("./a.py:4:5: HTP101 ") and "b.py" not in below.stdout  # not checked under it


def test_merge_names_a_deep_report_and_merges_the_others(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(LOOP)
    good = run_cli(["check", "--isolated", "--output-format", "json", "a.py"], cwd=tmp_path, timeout=120)
    (tmp_path / "good.json").write_text(good.stdout)
    (tmp_path / "deep.json").write_text("[" * 100000 + "]" * 100000)
    (tmp_path / "deep.sarif").write_text('{"runs": ' + "[" * 100000 + "]" * 100000 + "}")
    result = run_cli(["merge", "deep.json", "good.json", "deep.sarif"], cwd=tmp_path, timeout=120)
    assert_no_traceback(result)
    assert result.returncode == 2
    assert result.stderr == (
        "flake8-http-pool: error: deep.json: not a report: nested too deeply (recursion limit reached)\n"
        "flake8-http-pool: error: deep.sarif: not a report: nested too deeply (recursion limit reached)\n")
    assert result.stdout.startswith("a.py:4:5: HTP101 ")


# -- 3. a name near the file system's limit can be fixed ------------------------------------------------------
# 240 bytes of ASCII; 243 of two-byte characters (120 of them); 255, the limit itself, in 126 of them.
LONG_NAMES = ["m" * 237 + ".py", "é" * 120 + ".py", "ü" * 126 + ".py"]


def _leftovers(folder: Path) -> List[str]:
    return [name for name in os.listdir(folder) if name.endswith((".fix-tmp", ".fix-bak"))]


@pytest.mark.parametrize("name", LONG_NAMES)
def test_a_module_named_near_the_limit_is_fixed(tmp_path: Path, name: str) -> None:
    assert len(os.fsencode(name)) <= 255
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / name).write_text(LOOP)
    result = run_cli(["fix", "--no-progress", "--unsafe-fixes", "."], cwd=tmp_path, timeout=120)
    assert_no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "flake8-http-pool fix: 1 file scanned, 1 changed, 1 fix (HTP101: 1)\n"
    assert "with requests.Session() as session:" in (tmp_path / name).read_text()
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("name", LONG_NAMES)
def test_a_hard_linked_module_named_near_the_limit_is_rewritten_in_place(tmp_path: Path, name: str) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / name).write_text(LOOP)
    os.link(tmp_path / name, tmp_path / "link.txt")  # two links: rewritten in place, a backup beside it
    result = run_cli(["fix", "--no-progress", "--unsafe-fixes", "."], cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "with requests.Session() as session:" in (tmp_path / "link.txt").read_text()
    assert _leftovers(tmp_path) == []


def test_a_change_across_modules_writes_a_module_named_near_the_limit(tmp_path: Path) -> None:
    """HTP104's client parameter edits three files all or nothing: each staged beside itself, with a backup."""
    import shutil

    fixture = Path(__file__).parent / "fixtures" / "fix_projects" / "client_parameter_private_across_modules"
    shutil.copytree(fixture / "before", tmp_path / "repo")
    repo = tmp_path / "repo"
    long_name = "r" * 237 + ".py"
    (repo / "report.py").rename(repo / long_name)
    (repo / "pyproject.toml").write_text("")
    result = run_cli(["fix", "--no-cache", "--no-progress", "--unsafe-fixes", "."], cwd=repo, timeout=120)
    assert_no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert (repo / long_name).read_text() == (fixture / "after" / "report.py").read_text()
    for relative in ("catalog/client.py", "sync.py"):
        assert (repo / relative).read_text() == (fixture / "after" / relative).read_text()
    assert _leftovers(repo) == [] and _leftovers(repo / "catalog") == []
