"""`[flake8]` in setup.cfg / tox.ini / .flake8: our http-pool-* keys and the HTP part of flake8's own keys,
read by `check` as flake8 reads them, so one config serves both doors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import run_cli

SOURCE = ("import requests\n\n\n@periodic\ndef poll(u):\n    return requests.get(u)\n\n\n"
          "for u in urls:\n    requests.get(u)\n\n\nasync def f(u):\n    return requests.get(u)\n")
SECTION = ("[flake8]\nmax-line-length = 120\nselect = E,W,F,HTP\nextend-ignore = HTP403,E501\n"
           "per-file-ignores =\n    tests/*: HTP101,F821\nhttp-pool-hot-decorators = periodic\n")


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _htp(stdout: str) -> list:
    return sorted(line.split(" ")[0] + " " + line.split(" ")[1] for line in stdout.splitlines() if " HTP" in line)


@pytest.mark.parametrize("name", ["setup.cfg", "tox.ini", ".flake8"])
def test_check_and_flake8_agree_on_the_same_config(tmp_path, name):
    _write(tmp_path / name, SECTION)
    _write(tmp_path / "a.py", SOURCE)
    _write(tmp_path / "tests" / "t.py", SOURCE)
    ours = run_cli(["check", "."], cwd=tmp_path)
    flake8 = subprocess.run([sys.executable, "-m", "flake8", "."], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300)
    expected = ["./a.py:10:5: HTP101", "./a.py:6:12: HTP102", "./tests/t.py:6:12: HTP102"]
    assert _htp(ours.stdout) == expected, ours.stdout + ours.stderr
    assert _htp(flake8.stdout) == expected, flake8.stdout + flake8.stderr
    assert "F821" in flake8.stdout  # flake8's own select kept its codes; ours took only the HTP part


def test_a_flake8_section_without_our_keys_does_not_hide_the_pyproject_above(tmp_path):
    _write(tmp_path / "pyproject.toml", '[tool.flake8-http-pool]\nselect = ["HTP101"]\n')
    _write(tmp_path / "pkg" / "setup.cfg", "[flake8]\nselect = E,W\nmax-line-length = 100\n")
    _write(tmp_path / "pkg" / "a.py", SOURCE)
    assert _htp(run_cli(["check", "."], cwd=tmp_path / "pkg").stdout) == ["./a.py:10:5: HTP101"]


def test_pyproject_wins_over_flake8_section_in_the_same_folder(tmp_path):
    _write(tmp_path / "pyproject.toml", '[tool.flake8-http-pool]\nselect = ["HTP4"]\n')
    _write(tmp_path / "setup.cfg", "[flake8]\nhttp-pool-hot-decorators = periodic\nextend-ignore = HTP403\n")
    _write(tmp_path / "a.py", SOURCE)
    assert _htp(run_cli(["check", "."], cwd=tmp_path).stdout) == ["./a.py:14:12: HTP403"]
    # and a sub-folder's [flake8] section with our keys is nearer than the pyproject.toml above it
    _write(tmp_path / "sub" / "tox.ini", "[flake8]\nhttp-pool-hot-decorators = periodic\nselect = HTP102\n")
    _write(tmp_path / "sub" / "b.py", SOURCE)
    assert _htp(run_cli(["check", "sub"], cwd=tmp_path).stdout) == ["sub/b.py:6:12: HTP102"]


def test_config_option_takes_a_flake8_file_and_unknown_http_pool_keys_warn(tmp_path):
    config = _write(tmp_path / "conf" / "setup.cfg", "[flake8]\nselect = HTP102\nhttp-pool-hot-decorators = periodic\n"
                    "http-pool-hot-decorator = typo\n")
    _write(tmp_path / "a.py", SOURCE)
    result = run_cli(["check", "--config", str(config), "a.py"], cwd=tmp_path)
    assert _htp(result.stdout) == ["a.py:6:12: HTP102"], result.stderr
    assert [line for line in result.stderr.splitlines() if "http-pool-hot-decorator'" in line] == [
        f"flake8-http-pool: warning: {config}: unknown key 'http-pool-hot-decorator' in [flake8], ignored "
        "(known: http-pool-hot-decorators, http-pool-unpooled-calls, http-pool-cache-dir)"]


def test_flake8_per_file_ignores_string_forms():
    from flake8_http_pool.config import parse_flake8_mapping

    assert parse_flake8_mapping("a.py:HTP101,E501 b/*.py, c.py: HTP4\n  d.py :F401") == (
        ("a.py", ("HTP101", "E501")), ("b/*.py", ("HTP4",)), ("c.py", ("HTP4",)), ("d.py", ("F401",)))
