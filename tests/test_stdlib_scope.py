"""The standard-library scans walk the standard library alone: never site-packages or dist-packages under it."""

from __future__ import annotations

from pathlib import Path

from test_corpus import scan_stdlib
from test_fix_then_check import _python_files

LOOP = "import requests\nfor u in urls:\n    requests.get(u)\n"


def _fake_stdlib(root: Path) -> Path:
    lib = root / "lib" / "python3.x"
    for relative in ("json/mod.py", "site-packages/pkg/third.py", "dist-packages/debian.py"):
        path = lib / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(LOOP, encoding="utf-8")
    return lib


def test_the_flake8_scan_leaves_installed_packages_out(tmp_path: Path) -> None:
    lib = _fake_stdlib(tmp_path)
    result = scan_stdlib(lib)
    assert result.returncode == 1, result.stderr
    reported = {Path(line.split(":", 1)[0]).relative_to(lib).as_posix() for line in result.stdout.splitlines()}
    assert reported == {"json/mod.py"}, result.stdout


def test_the_fix_sweep_leaves_installed_packages_out(tmp_path: Path) -> None:
    lib = _fake_stdlib(tmp_path)
    assert [p.relative_to(lib).as_posix() for p in _python_files(lib)] == ["json/mod.py"]
