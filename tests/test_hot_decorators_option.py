"""`--http-pool-hot-decorators` / `http-pool-hot-decorators =`: the user's decorators make a function hot (HTP102)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# `mycorp.worker` is no built-in handler or task name, so only the option can make `sync` hot.
_SOURCE = textwrap.dedent(
    """\
    import requests
    import mycorp


    @mycorp.worker(queue="default")
    def sync(account):
        return requests.post("https://example.com/sync", json=account)


    def once():
        return requests.get("https://example.com/")
    """
)
_CALL_LINE = 7


def _flake8(cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "flake8", "--select", "HTP", *extra, "module.py"]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def _codes_by_line(stdout: str) -> set:
    found = set()
    for line in stdout.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4:
            found.add((int(parts[1]), parts[3].split()[0]))
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "module.py").write_text(_SOURCE, encoding="utf-8")
    return tmp_path


def test_without_the_option_nothing_is_reported(project: Path) -> None:
    result = _flake8(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _codes_by_line(result.stdout) == set()


@pytest.mark.parametrize("config_name", ["setup.cfg", ".flake8", "tox.ini"])
def test_the_config_file_option_makes_the_function_hot(project: Path, config_name: str) -> None:
    (project / config_name).write_text("[flake8]\nhttp-pool-hot-decorators = mycorp.worker\n", encoding="utf-8")
    result = _flake8(project)
    assert "Traceback" not in result.stderr, result.stderr
    assert _codes_by_line(result.stdout) == {(_CALL_LINE, "HTP102")}, result.stdout + result.stderr
    assert "sync()" in result.stdout


def test_a_list_of_decorators_in_the_config_file(project: Path) -> None:
    (project / "setup.cfg").write_text(
        "[flake8]\nhttp-pool-hot-decorators =\n    other.thing,\n    mycorp.worker\n", encoding="utf-8"
    )
    result = _flake8(project)
    assert _codes_by_line(result.stdout) == {(_CALL_LINE, "HTP102")}, result.stdout + result.stderr


def test_the_command_line_flag_makes_the_function_hot(project: Path) -> None:
    result = _flake8(project, "--http-pool-hot-decorators", "mycorp.worker")
    assert "Traceback" not in result.stderr, result.stderr
    assert _codes_by_line(result.stdout) == {(_CALL_LINE, "HTP102")}, result.stdout + result.stderr


def test_the_command_line_flag_with_equals_and_several_names(project: Path) -> None:
    result = _flake8(project, "--http-pool-hot-decorators=celeryish.run,mycorp.worker")
    assert _codes_by_line(result.stdout) == {(_CALL_LINE, "HTP102")}, result.stdout + result.stderr


def test_an_unrelated_decorator_name_in_the_option_changes_nothing(project: Path) -> None:
    result = _flake8(project, "--http-pool-hot-decorators", "othercorp.worker")
    assert _codes_by_line(result.stdout) == set(), result.stdout
