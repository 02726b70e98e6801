"""`[tool.flake8-http-pool]` in the nearest pyproject.toml: read into the same options the flake8 front end fills."""

from __future__ import annotations

from pathlib import Path

from cli_support import assert_no_traceback, run_cli
from conftest import parse_flake8, run_flake8

LOOP = "import requests\nfor u in urls:\n    requests.get(u)\n"
ASYNC = "import requests\nasync def f(u):\n    return requests.get(u)\n"
HOT = "import requests\n\n@periodic\ndef poll(u):\n    return requests.get(u)\n"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_nearest_pyproject_with_our_table_is_used_from_a_subfolder(tmp_path):
    _write(tmp_path / "pyproject.toml", '[tool.flake8-http-pool]\nselect = ["HTP4"]\nexclude = ["skip_me"]\n')
    _write(tmp_path / "pkg" / "pyproject.toml", "[project]\nname = 'pkg'\n")  # no table: passed over, as ruff does
    _write(tmp_path / "pkg" / "a.py", LOOP)
    _write(tmp_path / "pkg" / "b.py", ASYNC)
    _write(tmp_path / "pkg" / "skip_me" / "c.py", ASYNC)
    result = run_cli(["check", "."], cwd=tmp_path / "pkg")
    assert result.stdout.splitlines() == [line for line in result.stdout.splitlines() if line.startswith("./b.py:3:")]
    assert len(result.stdout.splitlines()) == 1 and result.returncode == 1
    # the command line overrides the config; --isolated ignores it
    assert "./a.py:3:5: HTP101" in run_cli(["check", "--select", "HTP1", "."], cwd=tmp_path / "pkg").stdout
    assert "./skip_me/c.py" in run_cli(["check", "--isolated", "."], cwd=tmp_path / "pkg").stdout


def test_ignore_and_hot_decorators_match_flake8_with_the_same_settings(tmp_path):
    _write(tmp_path / "pyproject.toml", '[tool.flake8-http-pool]\nignore = ["HTP403"]\nhot-decorators = ["periodic"]\n')
    files = [_write(tmp_path / "hot.py", HOT), _write(tmp_path / "b.py", ASYNC), _write(tmp_path / "a.py", LOOP)]
    ours = run_cli(["check", *map(str, files)], cwd=tmp_path)
    flake8 = run_flake8(files, "--extend-ignore", "HTP403", "--http-pool-hot-decorators", "periodic")
    assert parse_flake8(ours.stdout) == parse_flake8(flake8.stdout)
    assert {code for found in parse_flake8(ours.stdout).values() for _, code in found} == {"HTP101", "HTP102"}


def test_bad_config_is_a_usage_error(tmp_path):
    _write(tmp_path / "a.py", LOOP)
    # an unknown key is a warning naming it and the file, and the run goes on (as ruff does)
    _write(tmp_path / "pyproject.toml", '[tool.flake8-http-pool]\nselct = ["HTP"]\n')
    result = run_cli(["check", "."], cwd=tmp_path)
    assert result.returncode == 1 and "./a.py:3:5: HTP101" in result.stdout
    assert result.stderr.startswith(f"flake8-http-pool: warning: {tmp_path / 'pyproject.toml'}: unknown key 'selct'")
    assert len(result.stderr.splitlines()) == 1
    # a wrong type stays an error
    _write(tmp_path / "pyproject.toml", '[tool.flake8-http-pool]\nselect = "HTP"\napplication = "yes"\n')
    result = run_cli(["check", "."], cwd=tmp_path)
    assert result.returncode == 2 and "application must be true or false" in result.stderr and not result.stdout
    _write(tmp_path / "pyproject.toml", '[tool.flake8-http-pool]\nselect = [\n')
    result = run_cli(["check", "."], cwd=tmp_path)
    assert result.returncode == 2 and "invalid TOML" in result.stderr
    assert_no_traceback(result)


def test_explicit_config_file(tmp_path):
    config = _write(tmp_path / "conf" / "pyproject.toml", '[tool.flake8-http-pool]\nignore = ["HTP101"]\n')
    _write(tmp_path / "a.py", LOOP)
    assert run_cli(["check", "--config", str(config), "a.py"], cwd=tmp_path).returncode == 0
