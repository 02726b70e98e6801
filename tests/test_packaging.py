"""The built wheel's metadata, and a fresh venv with the wheel and flake8 only (no extras), run as a user would.

A flake8-only user gets the plugin and `check` without libcst or ast-grep-py; `fix` and `unpooled-calls`
then say in one line which extra to install. The missing-package messages are also checked in this venv with
the package blocked from import, which is fast and needs no network.
"""

from __future__ import annotations

import email
import os
import subprocess
import sys
import zipfile
from email.message import Message
from pathlib import Path
from typing import List

import pytest

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): wheels are built and installed
# into fresh venvs
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
PYTHONS = ("3.9", "3.10", "3.11", "3.12", "3.13")
FIX_LINE = "flake8-http-pool: error: fix needs libcst: pip install 'flake8-http-pool[fix]'"
PATTERNS_LINE = "unpooled-calls needs ast-grep-py: pip install 'flake8-http-pool[patterns]'"
LOOP = "import requests\nfor u in urls:\n    requests.get(u)\n"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(REPO)],
                   check=True, capture_output=True, text=True, timeout=600)
    (built,) = out.glob("flake8_http_pool-*.whl")
    return built


def _metadata(wheel: Path) -> Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(archive.read(name))


def test_wheel_metadata_license_classifiers_extras_and_urls(wheel: Path) -> None:
    meta = _metadata(wheel)
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    classifiers = set(meta.get_all("Classifier"))
    expected = {f"Programming Language :: Python :: {version}" for version in PYTHONS} | {
        "Programming Language :: Python :: 3 :: Only",
        "Framework :: Flake8",
        "Development Status :: 4 - Beta",
        "Intended Audience :: Developers",
        "Environment :: Console",
    }
    assert expected <= classifiers, sorted(expected - classifiers)
    # PEP 639: with License-Expression, no License :: classifier may repeat it.
    assert not [c for c in classifiers if c.startswith("License ::")]
    assert meta["Requires-Python"] == ">=3.9"
    assert set(meta.get_all("Provides-Extra")) >= {"fix", "patterns", "all", "test"}
    urls = dict(value.split(", ", 1) for value in meta.get_all("Project-URL"))
    assert set(urls) >= {"Homepage", "Documentation", "Changelog", "Issues"}
    assert meta["Keywords"] and "flake8" in meta["Keywords"].split(",")


def test_wheel_needs_neither_libcst_nor_ast_grep_without_an_extra(wheel: Path) -> None:
    requires = _metadata(wheel).get_all("Requires-Dist")
    plain = [r for r in requires if "extra ==" not in r]
    assert any(r.startswith("flake8") for r in plain), plain
    assert not [r for r in plain if r.startswith(("libcst", "ast-grep-py"))], plain
    fix = [r for r in requires if r.startswith("libcst") and 'extra == "fix"' in r]
    patterns = [r for r in requires if r.startswith("ast-grep-py") and 'extra == "patterns"' in r]
    assert fix and len(patterns) == 2, requires  # one bound for 3.9 (last wheels), one for 3.10+


def test_wheel_ships_the_license_and_the_entry_points(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        licence = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
        text = archive.read(licence).decode()
        entry_points = archive.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 the flake8-http-pool developers" in text
    assert "flake8-http-pool = flake8_http_pool.cli:main" in entry_points
    assert "HTP = flake8_http_pool.plugin:HttpPoolChecker" in entry_points
    assert "flake8_http_pool/extras.py" in names


# -- the messages, with the optional package blocked in this venv ---------------------------------------------
def _blocked(module: str, argv: List[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run `argv` (the standalone command, or `flake8`) with `module` unimportable, as if never installed."""
    if argv[0] == "flake8":
        start = "from flake8.main.cli import main; sys.exit(main(sys.argv[1:]))"
    else:
        start = "from flake8_http_pool.cli import console_main; console_main()"
    code = f"import sys; sys.modules[{module!r}] = None; sys.argv = {argv!r}; {start}"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_fix_without_libcst_says_which_extra_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "loop.py").write_text(LOOP)
    for argv in (["flake8-http-pool", "fix", "--unsafe-fixes", "loop.py"], ["flake8-http-pool", "fix", "--diff", "."]):
        result = _blocked("libcst", argv, tmp_path)
        assert result.returncode == 2, result
        assert result.stderr.splitlines() == [FIX_LINE], result.stderr
        assert result.stdout == ""
    assert (tmp_path / "loop.py").read_text() == LOOP


def test_check_without_libcst_works(tmp_path: Path) -> None:
    (tmp_path / "loop.py").write_text(LOOP)
    result = _blocked("libcst", ["flake8-http-pool", "check", "loop.py"], tmp_path)
    assert result.returncode == 1, result
    assert "loop.py:3:5: HTP101" in result.stdout


def test_unpooled_calls_without_ast_grep_say_which_extra_once(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import mycorp\nfor u in urls:\n    mycorp.fetch(u)\n")
    (tmp_path / "b.py").write_text(LOOP)
    result = _blocked("ast_grep_py", ["flake8-http-pool", "check", "--unpooled-calls", "mycorp.fetch($$$)", "."],
                      tmp_path)
    assert result.returncode == 2, result
    assert result.stderr.splitlines() == [f"flake8-http-pool: error: {PATTERNS_LINE}"], result.stderr
    # flake8: the plugin's option cannot work, so flake8 stops once with the same line, not per file and
    # not with a traceback.
    result = _blocked("ast_grep_py", ["flake8", "--select", "HTP", "--http-pool-unpooled-calls", "mycorp.fetch($$$)",
                                      "."], tmp_path)
    assert result.returncode != 0, result
    assert result.stderr.splitlines() == [f"flake8-http-pool: {PATTERNS_LINE}"], result.stderr
    # Without the option nothing needs ast-grep-py, in flake8 or in check.
    result = _blocked("ast_grep_py", ["flake8", "--select", "HTP", "b.py"], tmp_path)
    assert result.returncode == 1 and "b.py:3:5: HTP101" in result.stdout, result


def test_unpooled_calls_in_a_nested_config_without_ast_grep_are_said_once_and_the_rest_is_checked(
        tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "pyproject.toml").write_text('[tool.flake8-http-pool]\nunpooled-calls = ["mycorp.fetch($$$)"]\n')
    for name in ("a.py", "b.py"):
        (tmp_path / "pkg" / name).write_text(LOOP)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "c.py").write_text(LOOP)
    result = _blocked("ast_grep_py", ["flake8-http-pool", "check", "."], tmp_path)
    assert result.returncode == 2, result
    config = tmp_path / "pkg" / "pyproject.toml"
    assert result.stderr.splitlines() == [f"{config}: error: {PATTERNS_LINE}"], result.stderr
    assert "c.py:3:5: HTP101" in result.stdout and "a.py" not in result.stdout


# -- a fresh venv: the wheel and flake8, nothing else -------------------------------------------------------
@pytest.mark.slow  # 20-45 s here: a venv, and flake8's packages from pip's cache or the index
def test_fresh_venv_without_extras_runs_flake8_and_check_and_fix_names_its_extra(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    install = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q", str(wheel), "flake8"],
                             capture_output=True, text=True, env=env, timeout=600)
    assert install.returncode == 0, install.stderr
    project = tmp_path / "project"
    project.mkdir()
    (project / "loop.py").write_text(LOOP)

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(bin_dir / argv[0]), *argv[1:]], cwd=project, capture_output=True, text=True,
                              env=env, timeout=300)

    missing = run("python", "-c", "import importlib.util as u; print(u.find_spec('libcst'), u.find_spec('ast_grep_py'))")
    assert missing.stdout.split() == ["None", "None"], missing
    flake8 = run("flake8", "--select", "HTP", "loop.py")
    assert flake8.returncode == 1 and "loop.py:3:5: HTP101" in flake8.stdout, flake8
    check = run("flake8-http-pool", "check", "loop.py")
    assert check.returncode == 1 and "loop.py:3:5: HTP101" in check.stdout, check
    assert run("flake8-http-pool", "rules").returncode == 0
    fix = run("flake8-http-pool", "fix", "--unsafe-fixes", "loop.py")
    assert fix.returncode == 2, fix
    assert fix.stderr.splitlines() == [FIX_LINE], fix.stderr
    assert (project / "loop.py").read_text() == LOOP
    patterns = run("flake8-http-pool", "check", "--unpooled-calls", "mycorp.fetch($$$)", "loop.py")
    assert patterns.returncode == 2 and patterns.stderr.splitlines() == [f"flake8-http-pool: error: {PATTERNS_LINE}"]
