"""A file's seeds from the modules that can matter to it (focus.py) are the ones the whole project's solve gives
it: compared for every file of the fixture projects, and (slow) of the shared corpus's packages; and flake8 named
one file with a cold cache reads only those modules."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from flake8_http_pool.focus import focused_seeds, imported_names
from flake8_http_pool.options import DEFAULT_OPTIONS
from flake8_http_pool.plugin_project import project_files
from flake8_http_pool.project import project_seeds

FIXTURE_PROJECTS = sorted(p for p in (Path(__file__).parent / "fixtures" / "projects").iterdir() if p.is_dir())


def _differences(root: Path, others: int) -> List[str]:
    """Each file of the project whose focused seeds differ from the whole project's: every file the whole
    solve seeds, and `others` more (all when negative)."""
    files = sorted(project_files(str(root)))
    whole = project_seeds(files, lambda _: DEFAULT_OPTIONS)
    rest = [path for path in files if path not in whole]
    random.Random(0).shuffle(rest)
    chosen = [path for path in files if path in whole] + (rest if others < 0 else rest[:others])
    found = []
    for path in chosen:
        got = focused_seeds([path], files, lambda _: DEFAULT_OPTIONS).get(path)
        if got != whole.get(path):
            found.append(f"{os.path.relpath(path, root)}:\n  whole: {whole.get(path)}\n  focused: {got}")
    return found


@pytest.mark.parametrize("root", FIXTURE_PROJECTS, ids=[p.name for p in FIXTURE_PROJECTS])
def test_every_file_of_a_fixture_project_gets_the_whole_project_s_seeds(root: Path) -> None:
    assert _differences(root, -1) == []


def _corpus() -> List[Path]:
    folder = Path(os.environ.get("FLAKE8_HTTP_POOL_CORPUS")
                  or Path.home() / ".cache" / "flake8-http-pool" / "corpus")
    return sorted(p for p in folder.iterdir() if p.is_dir() and p.name != "_archives") if folder.is_dir() else []


@pytest.mark.slow
@pytest.mark.parametrize("root", _corpus() or [None], ids=[p.name for p in _corpus()] or ["no-corpus"])
def test_files_of_the_corpus_get_the_whole_project_s_seeds(root: Path) -> None:
    if root is None:
        pytest.skip("the shared corpus is not fetched (../shared/corpus/fetch.sh)")
    assert _differences(root, 12) == []


def test_the_imports_read_from_the_bytes() -> None:
    source = (b"import a.b as c, d\n"
              b"from .x import (y,\n    z as w)  # two lines\n"
              b"from . import m\n"
              b"    from ..p.q import *\n"
              b"if x: import e; f()\n")
    assert list(imported_names(source)) == [
        ("a.b", []), ("d", []), (".x", ["y", "z"]), (".", ["m"]), ("..p.q", ["*"]), ("e", [])]


_HELPER = "import requests\n\n\ndef get_json(url):\n    return requests.get(url).json()\n"
_LOOP = "from app.helper import get_json\n\n\ndef sync(urls):\n    for url in urls:\n        get_json(url)\n"
_UNRELATED = "import requests\n\n\ndef ping{n}():\n    return requests.get('https://example.com/{n}')\n"


def _flake8(root: Path, *args: str, log: Path) -> subprocess.CompletedProcess:
    environment = dict(os.environ)
    environment.pop("FLAKE8_HTTP_POOL_CACHE_DIR", None)
    environment["FLAKE8_HTTP_POOL_PARSE_LOG"] = str(log)
    return subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", *args], cwd=root,
                          capture_output=True, text=True, timeout=180, env=environment)


def _tree(root: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_flake8_named_one_file_with_a_cold_cache_reads_the_modules_that_matter_to_it(tmp_path: Path) -> None:
    _tree(tmp_path, {"pyproject.toml": "", "app/__init__.py": "", "app/helper.py": _HELPER, "app/sync.py": _LOOP,
                     **{f"app/unrelated_{n}.py": _UNRELATED.format(n=n) for n in range(20)}})
    log = tmp_path / "parsed.txt"
    one = _flake8(tmp_path, "app/helper.py", log=log)
    parsed = sorted(os.path.relpath(line, tmp_path) for line in log.read_text().splitlines())
    # The file, and its caller (whose loop makes it hot): none of the 20 modules that never call it.
    assert parsed == [os.path.join("app", "helper.py"), os.path.join("app", "sync.py")], parsed
    log.unlink()
    tree = _flake8(tmp_path, ".", log=log)
    mine = [line[2:] for line in tree.stdout.splitlines() if line.startswith("./app/helper.py:")]
    assert one.stdout.splitlines() == mine and "HTP102" in one.stdout, one.stdout + one.stderr + tree.stdout
