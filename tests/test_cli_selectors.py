"""A selector that matches no rule, and a `--config` that is not ours: usage errors, one clear line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_support import assert_no_traceback, run_cli

LOOP = "import requests\nfor u in urls:\n    requests.get(u)\n"


@pytest.mark.parametrize("command", ["check", "fix"])
@pytest.mark.parametrize(
    "args,unknown",
    [
        (["--select", "HPT"], "--select: unknown rule selector HPT"),
        (["--ignore", "HTP9"], "--ignore: unknown rule selector HTP9"),
        (["--select", "E"], "--select: unknown rule selector E"),
        (["--select", "HTP1,XY,E501"], "--select: unknown rule selectors XY, E501"),
        (["--extend-select", "HTP105"], "--extend-select: unknown rule selector HTP105"),
    ],
)
def test_an_unknown_selector_on_the_command_line(tmp_path: Path, command: str, args: list, unknown: str) -> None:
    (tmp_path / "a.py").write_text(LOOP)
    result = run_cli([command, "--isolated", *args, "a.py"], cwd=tmp_path)
    assert_no_traceback(result)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"flake8-http-pool: error: {unknown} ("), result.stderr
    assert (tmp_path / "a.py").read_text() == LOOP


@pytest.mark.parametrize("key", ["select", "ignore", "extend-select"])
def test_an_unknown_selector_in_the_config(tmp_path: Path, key: str) -> None:
    (tmp_path / "a.py").write_text(LOOP)
    (tmp_path / "pyproject.toml").write_text(f'[tool.flake8-http-pool]\n{key} = ["HTP101", "HTP1O1"]\n')
    result = run_cli(["check", "a.py"], cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    config = tmp_path / "pyproject.toml"
    assert result.stderr.startswith(f"flake8-http-pool: error: {key} in {config}: "), result.stderr
    assert "HTP1O1" in result.stderr


def test_known_prefixes_are_still_fine(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(LOOP)
    for args in (["--select", "HTP"], ["--select", "HTP1", "--ignore", "HTP4"], ["--ignore", "HTP403"]):
        result = run_cli(["check", "--isolated", *args, "a.py"], cwd=tmp_path)
        assert result.returncode == 1, (args, result.stderr)


def test_the_config_option_says_what_it_wants(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(LOOP)
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = a\n")  # a [flake8] section would be taken
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    for name in ("setup.cfg", "pyproject.toml", "missing.toml"):
        result = run_cli(["check", "--config", name, "a.py"], cwd=tmp_path)
        assert result.returncode == 2, name
        lines = result.stderr.splitlines()
        assert len(lines) == 1, result.stderr
        assert lines[0].startswith(f"flake8-http-pool: error: --config {name}: "), lines[0]
        assert lines[0].endswith("(it wants a pyproject.toml with a [tool.flake8-http-pool] table, or a setup.cfg, "
                                 "tox.ini or .flake8 with a [flake8] section)"), lines[0]
        assert lines[0].count("error") == 1, lines[0]
