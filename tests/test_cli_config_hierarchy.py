"""Settings found per checked file, as ruff finds them: the nearest config at or above each file, through the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import List

from cli_support import assert_no_traceback, run_cli

# HTP101 on line 3, HTP403 on line 5.
BOTH = "import requests\nfor u in urls:\n    requests.get(u)\nasync def f(u):\n    return requests.get(u)\n"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _found(stdout: str) -> List[str]:
    """`path:line CODE` of each finding line, sorted."""
    out = []
    for line in stdout.splitlines():
        head, _, rest = line.partition(": ")
        path, row = head.split(":")[:2]
        out.append(f"{path}:{row} {rest.split()[0]}")
    return sorted(out)


def _tree(root: Path) -> None:
    """A root config and a sub-package config with its own select and per-file-ignores."""
    _write(root / "pyproject.toml", '[tool.flake8-http-pool]\nignore = ["HTP403"]\n'
           'per-file-ignores = {"tests/*" = ["HTP101"]}\n')
    _write(root / "sub" / "pyproject.toml", '[tool.flake8-http-pool]\nselect = ["HTP4"]\n'
           'per-file-ignores = {"tests/*" = ["HTP403"]}\n')
    for name in ("a.py", "tests/t.py", "sub/b.py", "sub/tests/t.py"):
        _write(root / name, BOTH)


ROOT_VIEW = ["./a.py:3 HTP101", "./sub/b.py:5 HTP403"]


def test_each_file_gets_the_nearest_config(tmp_path):
    _tree(tmp_path)
    result = run_cli(["check", "."], cwd=tmp_path)
    # root files: HTP403 ignored, HTP101 ignored under tests/; sub files: only HTP4, HTP403 ignored under tests/
    assert _found(result.stdout) == ROOT_VIEW, result.stdout + result.stderr
    assert result.returncode == 1
    # the same answers however the files are reached: one by one, in one process, from inside the sub-package
    named = run_cli(["check", "-j", "1", "a.py", "tests/t.py", "sub/b.py", "sub/tests/t.py"], cwd=tmp_path)
    assert _found(named.stdout) == ["a.py:3 HTP101", "sub/b.py:5 HTP403"]
    inside = run_cli(["check", ".", "../a.py"], cwd=tmp_path / "sub")
    assert _found(inside.stdout) == ["../a.py:3 HTP101", "./b.py:5 HTP403"]
    assert_no_traceback(result)


def test_many_files_in_worker_processes_keep_their_own_config(tmp_path):
    _tree(tmp_path)
    for i in range(40):
        _write(tmp_path / f"m{i}.py", BOTH)
        _write(tmp_path / "sub" / f"m{i}.py", BOTH)
    result = run_cli(["check", "-j", "2", "."], cwd=tmp_path)
    codes = {(line.startswith("./sub/"), line.split()[1]) for line in result.stdout.splitlines()}
    assert codes == {(False, "HTP101"), (True, "HTP403")}, result.stdout
    assert len(result.stdout.splitlines()) == 82


def test_config_and_isolated_override_the_hierarchy(tmp_path):
    _tree(tmp_path)
    config = _write(tmp_path / "conf" / "pyproject.toml", '[tool.flake8-http-pool]\nselect = ["HTP101"]\n'
                    'per-file-ignores = {"sub/*" = ["HTP1"]}\n')
    explicit = run_cli(["check", "--config", str(config), "a.py", "tests/t.py", "sub/b.py"], cwd=tmp_path)
    # --config's relative globs are anchored at its own folder (conf/), so sub/* matches nothing here.
    assert _found(explicit.stdout) == ["a.py:3 HTP101", "sub/b.py:3 HTP101", "tests/t.py:3 HTP101"]
    isolated = run_cli(["check", "--isolated", "sub/tests/t.py"], cwd=tmp_path)
    assert _found(isolated.stdout) == ["sub/tests/t.py:3 HTP101", "sub/tests/t.py:5 HTP403"]
    # the command line overrides every config it meets
    cli = run_cli(["check", "--select", "HTP", "."], cwd=tmp_path)
    assert _found(cli.stdout) == ["./a.py:3 HTP101", "./sub/b.py:3 HTP101", "./sub/b.py:5 HTP403",
                                  "./sub/tests/t.py:3 HTP101"]


def test_stdin_filename_picks_the_config_of_its_folder(tmp_path):
    _tree(tmp_path)
    for name, expected in (("sub/b.py", ["sub/b.py:5 HTP403"]), ("sub/tests/x.py", []),
                           ("a.py", ["a.py:3 HTP101"]), ("tests/x.py", [])):
        result = run_cli(["check", "--stdin-filename", name, "-"], cwd=tmp_path, stdin=BOTH)
        assert _found(result.stdout) == expected, (name, result.stdout, result.stderr)
    fixed = run_cli(["fix", "--unsafe-fixes", "--stdin-filename", "tests/x.py", "-"], cwd=tmp_path, stdin=BOTH)
    assert fixed.stdout == BOTH, fixed.stderr  # HTP101 is ignored under tests/, HTP403 by the root's ignore


def test_extend_exclude_adds_to_exclude_per_config(tmp_path):
    _write(tmp_path / "pyproject.toml", '[tool.flake8-http-pool]\nexclude = ["gen"]\nextend-exclude = ["legacy/*"]\n')
    _write(tmp_path / "sub" / "pyproject.toml", '[tool.flake8-http-pool]\nextend-exclude = ["old_*.py"]\n')
    for name in ("a.py", "gen/g.py", "legacy/l.py", "old_a.py", "sub/old_b.py", "sub/legacy/l.py", "sub/gen/g.py"):
        _write(tmp_path / name, BOTH)
    paths = {line.split(":")[0] for line in run_cli(["check", "."], cwd=tmp_path).stdout.splitlines()}
    # root: gen and legacy/ skipped; sub's own config skips old_*.py there only, and anchors nothing of the root's
    assert paths == {"./a.py", "./old_a.py", "./sub/legacy/l.py", "./sub/gen/g.py"}
    # --exclude replaces the configs' exclude, but their extend-exclude still adds to it
    paths = {line.split(":")[0] for line in
             run_cli(["check", "--exclude", "a.py", "."], cwd=tmp_path).stdout.splitlines()}
    assert paths == {"./gen/g.py", "./old_a.py", "./sub/legacy/l.py", "./sub/gen/g.py"}
    assert run_cli(["check", "--stdin-filename", "sub/old_x.py", "-"], cwd=tmp_path, stdin=BOTH).stdout == ""


def test_unknown_key_is_a_warning_once_per_file_and_the_run_goes_on(tmp_path):
    _tree(tmp_path)
    _write(tmp_path / "sub" / "pyproject.toml", '[tool.flake8-http-pool]\nselect = ["HTP4"]\nselct = ["HTP1"]\n')
    for i in range(30):
        _write(tmp_path / "sub" / f"m{i}.py", BOTH)
    result = run_cli(["check", "-j", "2", "."], cwd=tmp_path)
    warnings = [line for line in result.stderr.splitlines() if "selct" in line]
    assert len(warnings) == 1, result.stderr
    assert warnings[0].startswith("flake8-http-pool: warning: ") and str(tmp_path / "sub" / "pyproject.toml") in warnings[0]
    assert result.returncode == 1 and "./sub/m29.py:5:" in result.stdout and "./a.py:3:" in result.stdout


def test_a_broken_config_below_is_one_error_and_its_files_are_not_checked(tmp_path):
    _tree(tmp_path)
    _write(tmp_path / "sub" / "pyproject.toml", '[tool.flake8-http-pool]\nselect = "HTP4"\nignore = 3\n')
    _write(tmp_path / "sub" / "c.py", BOTH)
    result = run_cli(["check", "."], cwd=tmp_path)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if "ignore must be a list of strings" in line]
    assert len(errors) == 1 and errors[0].startswith(str(tmp_path / "sub" / "pyproject.toml") + ": error: ")
    assert _found(result.stdout) == ["./a.py:3 HTP101"]  # sub/ is not checked with settings it did not mean
    assert_no_traceback(result)
    # a wrong type in the working directory's own config stops the run before it starts, as before
    start = run_cli(["check", "."], cwd=tmp_path / "sub")
    assert start.returncode == 2 and start.stdout == "" and "ignore must be a list of strings" in start.stderr


def test_the_lookup_is_cached_per_folder(tmp_path, monkeypatch):
    """A wide tree costs one look per folder, not one per file (benchmarks/big_tree.py's shape, smaller)."""
    import flake8_http_pool.config as config
    from flake8_http_pool.settings import Overrides, Resolver

    for d in range(10):
        for f in range(50):
            _write(tmp_path / "pkg" / f"d{d}" / f"f{f}.py", "")
    calls: List[str] = []
    real = config.config_in_directory

    def counted(directory: str):
        calls.append(directory)
        return real(directory)

    monkeypatch.setattr(config, "config_in_directory", counted)
    resolver = Resolver(Overrides(cwd=str(tmp_path)), "nearest", None, lambda line: None)
    keys = {resolver.key_for(str(path), lambda *a: None) for path in sorted(tmp_path.rglob("*.py"))}
    assert keys == {(None, ())}
    assert len(calls) == len(set(calls)) <= 11 + len(tmp_path.parents) + 1, calls


LOOP = "import requests\n\n\ndef f(urls):\n    for u in urls:\n        requests.get(u)\n"


def test_fix_takes_each_files_fix_settings_from_its_own_config(tmp_path):
    """extend-safe-fixes (like application and extend-unsafe-fixes) is per config: HTP101's unsafe fix is made
    safe under sub/ only, in worker processes too."""
    _write(tmp_path / "pyproject.toml", "[tool.flake8-http-pool]\nselect = [\"HTP\"]\n")
    _write(tmp_path / "sub" / "pyproject.toml", '[tool.flake8-http-pool]\nextend-safe-fixes = ["HTP101"]\n')
    for i in range(20):
        _write(tmp_path / f"a{i}.py", LOOP)
        _write(tmp_path / "sub" / f"b{i}.py", LOOP)
    result = run_cli(["fix", "-j", "2", "."], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert all("Session" in (tmp_path / "sub" / f"b{i}.py").read_text() for i in range(20))
    assert all((tmp_path / f"a{i}.py").read_text() == LOOP for i in range(20))
    assert "20 changed" in result.stderr and "20 unsafe fixes not applied" in result.stderr
