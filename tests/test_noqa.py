"""`# noqa` through flake8's CLI, `check` and `fix`: one fixture of every form, and all three agree on it.

Functions named `kept_*` hold a finding flake8 reports; `quiet_*` ones hold one it suppresses. The test asks flake8
itself first, so the fixture's names are checked against the real thing, then holds `check` and `fix` to it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, Set

import pytest

from cli_support import assert_no_traceback, run_cli
from conftest import run_flake8

FORMS = '''import requests


def quiet_blanket(urls):
    for u in urls:
        requests.get(u)  # noqa


def quiet_code(urls):
    for u in urls:
        requests.get(u)  # noqa: HTP101


def quiet_list_no_space(urls):
    for u in urls:
        requests.get(u)  # noqa:E501,HTP101


def quiet_upper_case(urls):
    for u in urls:
        requests.get(u)  # NOQA: HTP101 because the caller pools


def quiet_prefix(urls):
    for u in urls:
        requests.get(u)  # noqa: HTP1


def quiet_letters_only_is_blanket(urls):
    for u in urls:
        requests.get(u)  # noqa: HTP


def quiet_two_spaces_is_blanket(urls):
    for u in urls:
        requests.get(u)  # noqa:  E501


def quiet_multiline_call_first_line(urls):
    for u in urls:
        requests.get(  # noqa: HTP101
            u,
        )


def quiet_multiline_string(urls):
    for u in urls:
        requests.post(u, data="""
        body""")  # noqa: HTP101


def quiet_backslash_continuation(urls):
    for u in urls:
        x = requests.get(u) if u else \\
            None  # noqa: HTP101


def kept_other_code(urls):
    for u in urls:
        requests.get(u)  # noqa: E501


def kept_lower_case_code(urls):
    for u in urls:
        requests.get(u)  # noqa: htp101


def kept_no_space_after_hash(urls):
    for u in urls:
        requests.get(u)  #noqa


def kept_other_prefix(urls):
    for u in urls:
        requests.get(u)  # noqa: HTP2


def kept_multiline_call_last_line(urls):
    for u in urls:
        requests.get(
            u,
        )  # noqa: HTP101


def kept_plain(urls):
    for u in urls:
        requests.get(u)
'''

LOOP = "import requests\n\n\ndef kept(urls):\n    for u in urls:\n        requests.get(u)\n"
FILES = {
    "forms.py": FORMS,
    "file_level.py": "# flake8: noqa\n" + LOOP.replace("kept", "quiet"),
    "file_level_indented_equals.py": "  # FLAKE8=NOQA\n" + LOOP.replace("kept", "quiet"),
    "file_level_on_code_line.py": LOOP + "x = 1  # flake8: noqa\n",
    "file_level_with_codes.py": "# flake8: noqa: E501\n" + LOOP.replace("kept", "quiet"),
}
_DEF = re.compile(r"^def (\w+)", re.M)


def _function_at(text: str, line: int) -> str:
    name = ""
    for number, source in enumerate(text.splitlines(), 1):
        match = _DEF.match(source)
        if match:
            name = match.group(1)
        if number == line:
            return name
    raise AssertionError(line)


def _reported(stdout: str, root: Path) -> Dict[str, Set[str]]:
    """file name -> the functions holding a reported finding."""
    found: Dict[str, Set[str]] = {name: set() for name in FILES}
    for line in stdout.splitlines():
        match = re.match(r"(.+?):(\d+):\d+: (HTP\d+) ", line)
        assert match, line
        name = Path(match.group(1)).name
        found[name].add(_function_at(FILES[name], int(match.group(2))))
    return found


def _expected() -> Dict[str, Set[str]]:
    return {name: set(n for n in _DEF.findall(text) if n.startswith("kept")) for name, text in FILES.items()}


def _functions(text: str) -> Dict[str, str]:
    parts = re.split(r"\n(?=def )", text)
    return {_DEF.match(part).group(1): part for part in parts if _DEF.match(part)}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_flake8_suppresses_what_the_fixture_names_say(project: Path) -> None:
    result = run_flake8(sorted(project.iterdir()))
    assert result.returncode == 1, result.stderr
    assert _reported(result.stdout, project) == _expected()


def test_check_suppresses_what_flake8_suppresses(project: Path) -> None:
    flake8 = run_flake8(sorted(project.iterdir()))
    ours = run_cli(["check", "--isolated", "-q", *sorted(project.iterdir())])
    assert_no_traceback(ours)
    assert ours.returncode == 1, ours.stderr
    assert _reported(ours.stdout, project) == _reported(flake8.stdout, project) == _expected()
    # Same lines and columns, not only the same functions.
    assert sorted(ours.stdout.splitlines()) == sorted(flake8.stdout.splitlines())


def test_fix_leaves_suppressed_sites_alone_and_fixes_the_rest(project: Path) -> None:
    result = run_cli(["fix", "--isolated", "--unsafe-fixes", "--no-progress", *sorted(project.iterdir())])
    assert_no_traceback(result)
    assert result.returncode == 0, result.stderr
    for name, text in FILES.items():
        before, after = _functions(text), _functions((project / name).read_text())
        assert before.keys() == after.keys(), name
        changed = {function for function in before if before[function] != after[function]}
        assert changed == _expected()[name], name
    # What fix left is exactly the suppressed sites: check (like flake8) reports nothing now.
    again = run_cli(["check", "--isolated", *sorted(project.iterdir())])
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_suppressed_site_is_not_counted_as_an_unsafe_fix_left(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(FILES["file_level.py"].replace("# flake8: noqa\n", "").replace(
        "requests.get(u)", "requests.get(u)  # noqa: HTP101"))
    result = run_cli(["fix", "--isolated", "--diff", "--no-progress", tmp_path / "mod.py"])
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "unsafe" not in result.stderr, result.stderr


def test_a_suppressed_call_beside_a_fixed_one_is_left_as_written(tmp_path: Path) -> None:
    source = ("import requests\n\n\ndef f(urls):\n    for u in urls:\n        requests.get(u)\n"
              "        requests.post(u)  # noqa: HTP101\n")
    (tmp_path / "mod.py").write_text(source)
    result = run_cli(["fix", "--isolated", "--unsafe-fixes", "--no-progress", tmp_path / "mod.py"])
    assert result.returncode == 0, result.stderr
    fixed = (tmp_path / "mod.py").read_text()
    assert "session.get(u)" in fixed
    assert "            requests.post(u)  # noqa: HTP101\n" in fixed
