"""`check`'s output formats and reporting flags through the real command: each format parses as its consumer
reads it, --output-file, colour on a terminal and not in a pipe, --statistics, --count, --quiet, --exit-zero,
and the `[*]` marks agreeing with what `fix` really fixes."""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Dict, List, Optional

import jsonschema
import pytest

from cli_support import assert_no_traceback, command, run_cli

HERE = Path(__file__).parent
SCHEMA = json.loads((HERE / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
FIXTURES = HERE / "fixtures"

LOOP = "import requests\n\ndef f(urls):\n    for u in urls:\n        requests.get(u)\n"
STREAMED = "import requests\n\ndef g(u):\n    r = requests.Session().get(u, stream=True)\n    return r.headers\n"
ESC = "\x1b["


def _project(tmp_path: Path) -> Path:
    (tmp_path / "loop.py").write_text(LOOP, encoding="utf-8")
    (tmp_path / "streamed.py").write_text(STREAMED, encoding="utf-8")
    (tmp_path / "bad.py").write_text("import requests\ndef x(:\n    pass\n", encoding="utf-8")
    return tmp_path


def test_json_has_fix_classes_and_an_e999_record(tmp_path):
    result = run_cli(["check", "--output-format", "json", "."], cwd=_project(tmp_path))
    assert_no_traceback(result)
    assert result.returncode == 2  # the syntax error
    records = json.loads(result.stdout)
    by_code = {r["code"]: r for r in records}
    assert by_code["HTP101"]["fix"] == "unsafe"  # RULES.md: a session around a loop is an unsafe fix
    assert by_code["HTP203"]["fix"] == "safe"
    assert by_code["E999"]["path"].endswith("bad.py") and by_code["E999"]["line"] == 2
    assert by_code["E999"]["fix"] is None


def test_format_is_still_an_alias(tmp_path):
    result = run_cli(["check", "--format", "json", "loop.py"], cwd=_project(tmp_path))
    assert [r["code"] for r in json.loads(result.stdout)] == ["HTP101"]


def test_sarif_validates_with_fix_properties_and_the_syntax_error(tmp_path):
    result = run_cli(["check", "--output-format", "sarif", "."], cwd=_project(tmp_path))
    document = json.loads(result.stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(document)
    run = document["runs"][0]
    assert sorted(r["properties"]["fix"] for r in run["results"]) == ["safe", "unsafe"]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert notes[0]["descriptor"]["id"] == "E999"
    assert notes[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


GITHUB_LINE = re.compile(
    r"^::(warning|error) file=[^,:]+(,line=\d+,col=\d+(,endLine=\d+,endColumn=\d+)?)?,title=[A-Z]+\d+::\S.*$"
)


def test_github_workflow_commands(tmp_path):
    project = _project(tmp_path)
    # A name with the characters a property must escape: `,` and `:` would end it, `%` starts an escape.
    shutil.copy(project / "loop.py", project / "we,ird:50%.py")
    result = run_cli(["check", "--output-format", "github", "."], cwd=project)
    lines = result.stdout.splitlines()
    assert lines and all(GITHUB_LINE.match(line) for line in lines), lines
    assert any(line.startswith("::error file=./bad.py,line=2,") and "title=E999::E999 SyntaxError" in line
               for line in lines)
    assert any("file=./we%2Cird%3A50%25.py,line=5,col=9," in line and "title=HTP101::" in line for line in lines)
    assert "bad.py: error: E999" in result.stderr  # people reading the log still get the plain line


def test_gitlab_code_quality(tmp_path):
    project = _project(tmp_path)
    (project / "twice.py").write_text(
        "import requests\n\ndef f(urls):\n    for u in urls:\n        requests.get(u)\n"
        "    for u in urls:\n        requests.get(u)\n", encoding="utf-8")
    first = json.loads(run_cli(["check", "--output-format", "gitlab", "."], cwd=project).stdout)
    for issue in first:
        assert set(issue) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] in {"info", "minor", "major", "critical", "blocker"}
        assert isinstance(issue["location"]["lines"]["begin"], int)
        assert not issue["location"]["path"].startswith(("./", "/"))
    assert len({i["fingerprint"] for i in first}) == len(first)  # two identical lines still two issues
    assert {i["check_name"] for i in first} == {"HTP101", "HTP203", "E999"}
    # Lines added above a finding move it, but its fingerprint stays: GitLab then sees the same issue.
    (project / "loop.py").write_text("# a comment\n\n" + LOOP, encoding="utf-8")
    second = json.loads(run_cli(["check", "--output-format", "gitlab", "."], cwd=project).stdout)
    assert {i["fingerprint"] for i in first} == {i["fingerprint"] for i in second}
    assert ({i["location"]["lines"]["begin"] for i in first if i["location"]["path"] == "loop.py"}
            != {i["location"]["lines"]["begin"] for i in second if i["location"]["path"] == "loop.py"})


def test_pylint_lines(tmp_path):
    result = run_cli(["check", "--output-format", "pylint", "."], cwd=_project(tmp_path))
    lines = result.stdout.splitlines()
    assert sorted(line.split(": ", 1)[0] for line in lines) == ["./bad.py:2", "./loop.py:5", "./streamed.py:4"]
    assert all(re.match(r"^\S+:\d+: \[[A-Z]+\d+\] \S", line) for line in lines), lines


def test_full_shows_the_source_line_and_a_caret(tmp_path):
    result = run_cli(["check", "--output-format", "full", "loop.py"], cwd=_project(tmp_path))
    lines = result.stdout.splitlines()
    assert lines[0].startswith("loop.py:5:9: HTP101 ")
    assert lines[1] == "            requests.get(u)"
    assert lines[2] == "            ^"  # under column 9 of the line, after the 4-space indent of the block
    concise = run_cli(["check", "--output-format", "concise", "loop.py"], cwd=tmp_path)
    text = run_cli(["check", "loop.py"], cwd=tmp_path)
    assert concise.stdout == text.stdout and "requests.get(u)\n" not in text.stdout


def test_text_marks_safe_fixes_and_ends_with_a_summary(tmp_path):
    result = run_cli(["check", "loop.py", "streamed.py"], cwd=_project(tmp_path))
    lines = result.stdout.splitlines()
    assert re.match(r"^streamed\.py:4:9: HTP203 \[\*\] stream=True", lines[1]), lines
    assert "[*]" not in lines[0]  # HTP101's loop fix is unsafe
    assert lines[-1] == ("Found 2 findings. [*] 1 fixable with `flake8-http-pool fix` "
                         "(1 more with `fix --unsafe-fixes`).")
    # The summary is no finding to a flake8-style parser.
    assert not re.match(r"^[^:]+:\d+:\d+: ", lines[-1])
    quiet = run_cli(["check", "-q", "loop.py", "streamed.py"], cwd=tmp_path)
    assert quiet.stdout.splitlines() == lines[:-1]
    clean = run_cli(["check", "bad.py", "--exit-zero"], cwd=tmp_path)
    assert "Found" not in clean.stdout


def test_statistics_and_count(tmp_path):
    project = _project(tmp_path)
    (project / "bad.py").unlink()
    shutil.copy(project / "loop.py", project / "loop2.py")
    result = run_cli(["check", "--statistics", "--count", "."], cwd=project)
    lines = result.stdout.splitlines()
    assert lines[-4:] == [
        "2  HTP101      unpooled-call-in-loop",
        "1  HTP203  [*] streamed-response-not-closed",
        "Found 3 findings. [*] 1 fixable with `flake8-http-pool fix` (2 more with `fix --unsafe-fixes`).",
        "3",
    ]
    # In a machine format they go to stderr, and the document stays whole.
    machine = run_cli(["check", "--format", "json", "--statistics", "--count", "."], cwd=project)
    assert len(json.loads(machine.stdout)) == 3
    assert machine.stderr.splitlines()[-1] == "3"


def test_exit_zero(tmp_path):
    project = _project(tmp_path)
    assert run_cli(["check", "loop.py"], cwd=project).returncode == 1
    assert run_cli(["check", "--exit-zero", "loop.py"], cwd=project).returncode == 0
    # Like ruff, --exit-zero is about findings: a file that could not be checked still exits 2.
    assert run_cli(["check", "--exit-zero", "."], cwd=project).returncode == 2
    assert run_cli(["check", "--exit-zero", "--select", "HPT"], cwd=project).returncode == 2


def test_output_file_is_written_whole_and_stdout_stays_empty(tmp_path):
    project = _project(tmp_path)
    report = project / "out" / "report.json"
    report.parent.mkdir()
    report.write_text("old report\n", encoding="utf-8")
    result = run_cli(["check", "--output-format", "json", "--output-file", str(report), "."], cwd=project)
    assert result.returncode == 2 and result.stdout == ""
    assert "bad.py: error: E999" in result.stderr  # messages for people stay on stderr
    direct = run_cli(["check", "--output-format", "json", "."], cwd=project)
    assert report.read_text(encoding="utf-8") == direct.stdout
    assert sorted(p.name for p in report.parent.iterdir()) == ["report.json"]  # no temporary left behind
    text = project / "out" / "report.txt"
    run_cli(["check", "--color", "always", "-o", str(text), "loop.py", "streamed.py"], cwd=project)
    written = text.read_text(encoding="utf-8")
    assert ESC not in written and written.splitlines()[-1].startswith("Found 2 findings.")


def test_output_file_in_a_missing_folder_is_one_usage_error(tmp_path):
    result = run_cli(["check", "--output-file", str(tmp_path / "nowhere" / "r.txt"), "."], cwd=_project(tmp_path))
    assert result.returncode == 2
    assert_no_traceback(result)
    assert len(result.stderr.splitlines()) == 1 and "--output-file" in result.stderr


def _on_a_terminal(args: List[str], cwd: Path, env: Optional[Dict[str, str]] = None) -> str:
    """Run the command with its stdout on a pseudo-terminal; what it printed there."""
    primary, secondary = pty.openpty()
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "PYTHONPATH")}
    environment.update(env or {})
    process = subprocess.Popen([*command(), *args], cwd=cwd, stdout=secondary, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, env=environment)
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # EIO: the terminal's other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=120)
    os.close(primary)
    return b"".join(chunks).decode("utf-8", "replace")


def test_colour_on_a_terminal_only(tmp_path):
    project = _project(tmp_path)
    shown = _on_a_terminal(["check", "loop.py", "streamed.py"], project)
    assert f"{ESC}1mloop.py{ESC}0m:5:9: {ESC}1;31mHTP101{ESC}0m " in shown
    assert f"{ESC}1;31mHTP203{ESC}0m {ESC}36m[*]{ESC}0m " in shown
    assert ESC not in _on_a_terminal(["check", "loop.py"], project, {"NO_COLOR": "1"})
    assert ESC in _on_a_terminal(["check", "loop.py"], project, {"NO_COLOR": ""})  # empty: not set (no-color.org)
    assert ESC not in _on_a_terminal(["check", "--color", "never", "loop.py"], project)
    assert ESC not in _on_a_terminal(["check", "--format", "json", "loop.py"], project)
    assert ESC not in _on_a_terminal(["check", "--format", "pylint", "loop.py"], project)
    piped = run_cli(["check", "loop.py"], cwd=project)
    assert ESC not in piped.stdout
    assert ESC in run_cli(["check", "--color", "always", "loop.py"], cwd=project).stdout


# Fixtures where each site's mark is exactly what `fix` does (a site fixed only as a side effect of another's
# fix, as an HTP301 FuturesSession handed a session that another site's mount enlarges, shows no mark).
MARKED = ["HTP202_stream_api.py", "HTP203_streamed_not_closed.py", "HTP402_patch_socket_after_ssl.py",
          "HTP101_loop_shapes.py", "HTP201_requests.py", "HTP301_mounted_adapter.py"]


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_marks_match_what_fix_fixes(tmp_path, unsafe):
    for name in MARKED:
        shutil.copy(FIXTURES / name, tmp_path / name)
    before = json.loads(run_cli(["check", "--format", "json", "--exit-zero", "."], cwd=tmp_path).stdout)
    wanted = {"safe", "unsafe"} if unsafe else {"safe"}
    marked = Counter((r["path"], r["code"]) for r in before if r["fix"] in wanted)
    assert marked, "the fixtures must have fixable sites"
    run_cli(["fix", *(["--unsafe-fixes"] if unsafe else []), "."], cwd=tmp_path)
    after = json.loads(run_cli(["check", "--format", "json", "--exit-zero", "."], cwd=tmp_path).stdout)
    expected_left = Counter((r["path"], r["code"]) for r in before) - marked
    assert Counter((r["path"], r["code"]) for r in after) == expected_left
    if not unsafe:  # the text summary counts the same marks
        text = run_cli(["check", "."], cwd=tmp_path)
        assert text.stdout.count("[*]") == 0 or "fixable" in text.stdout
