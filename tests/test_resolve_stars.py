"""Resolving a reference into a package of star imports (issue 33): discord.py's `__init__.py` star-imports its
modules, which star-import others, and the HTTP-dense project (benchmarks/_common.dense_project) lacks most of
them; its check did not end in 15 minutes.

- A lattice of star imports, and stars of modules the project lacks, resolve at once through `check` and flake8,
  to the function they name; a name none of them defines names nothing.
- What the resolver keeps (`Project._found`) gives what a fresh search gives, whatever depth a module is met at
  first: the search stops twelve modules down, so the same module and names can give a function when met near
  the top and nothing when met deep.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from cli_support import assert_no_traceback
from flake8_http_pool.options import DEFAULT_OPTIONS
from flake8_http_pool.project import ModuleMap, Project, project_root, summarize

_MODULES = 30
_GONE = 5  # stars of modules the project lacks


def _lattice(root: Path) -> None:
    """pkg/__init__.py star-imports five modules the project lacks, then m0 ... m29, each of which imports
    requests and star-imports three others; m17 defines fetch(), which main.py calls in a loop through `pkg`,
    and main.py calls nothing() (defined nowhere) the same way."""
    (root / "pyproject.toml").write_text("[project]\nname = 'stars'\n")
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("".join(f"from .gone{k} import *\n" for k in range(_GONE)) +
                                     "".join(f"from .m{k} import *\n" for k in range(_MODULES)))
    for k in range(_MODULES):
        stars = "".join(f"from .m{(k + step) % _MODULES} import *\n" for step in (1, 7, 13))
        body = "\n\ndef fetch(u):\n    return requests.get(u)\n" if k == 17 else ""
        (pkg / f"m{k}.py").write_text(f"import requests\n{stars}{body}")
    (root / "main.py").write_text("from pkg import fetch, nothing\n\n\ndef run(urls):\n    for u in urls:\n"
                                  "        fetch(u)\n\n\ndef other(urls):\n    for u in urls:\n        nothing(u)\n")


_FINDING = ("./pkg/m17.py:8:12: HTP102 requests.get() in fetch(), which runs many times (called in a loop at "
            "main.py:6), opens a new connection on every call; share one requests.Session() between calls")


def _run(root: Path, args: List[str]) -> subprocess.CompletedProcess:
    # (before, the resolver searched `pkg` for gone0.gone1.fetch, gone1.gone0.fetch, ... twelve deep: a minute
    # is far more than it needs now)
    return subprocess.run([sys.executable, *args], cwd=root, capture_output=True, text=True, timeout=60)


def test_a_lattice_of_star_imports_resolves_at_once_with_check(tmp_path: Path) -> None:
    _lattice(tmp_path)
    done = _run(tmp_path, ["-m", "flake8_http_pool", "check", "--isolated", "--no-cache", "--jobs", "1", "."])
    assert_no_traceback(done)
    assert done.returncode == 1, done.stderr
    assert [line for line in done.stdout.splitlines() if "HTP" in line] == [_FINDING], done.stdout


def test_a_lattice_of_star_imports_resolves_at_once_with_flake8(tmp_path: Path) -> None:
    _lattice(tmp_path)
    done = _run(tmp_path, ["-m", "flake8", "--isolated", "--select", "HTP", "--jobs", "1",
                           "--http-pool-cache-dir", str(tmp_path / "cache"), "."])
    assert_no_traceback(done)
    assert done.stdout.splitlines() == [_FINDING], done.stdout


# -- the memo against fresh searches -----------------------------------------------------------------------
def _project(root: Path, files: Dict[str, str]) -> Project:
    paths = []
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(str(path))
    modules = ModuleMap(paths, project_root(paths))

    def load(path: str) -> Optional[dict]:
        return summarize(ast.parse(Path(path).read_text()), DEFAULT_OPTIONS) if modules.known(path) else None

    return Project(modules, {}, load)


def _chain(links: int) -> Dict[str, str]:
    """c0 star-imports c1, ... c<links-1> defines deep(); main.py imports nothing (the importer)."""
    files = {"pyproject.toml": "[project]\nname = 'chain'\n", "pkg/__init__.py": "", "main.py": "\n"}
    for k in range(links - 1):
        files[f"pkg/c{k}.py"] = f"from .c{k + 1} import *\n"
    files[f"pkg/c{links - 1}.py"] = "def deep():\n    pass\n"
    return files


def test_an_answer_kept_is_the_answer_at_the_depth_asked(tmp_path: Path) -> None:
    """c0 reaches deep() 15 modules down, past the search's twelve: nothing; c5 reaches it 10 down. Asked in
    either order of one project (c5 first keeps what c6 ... give near the top; c0 first, what they give deep),
    each answer is a fresh project's."""
    files = _chain(15)
    refs = [["import", f"pkg.c{k}", ["deep"]] for k in (0, 5, 2, 3)]

    def answers(order: List[int], folder: str) -> Dict[int, Optional[Tuple[str, str]]]:
        project = _project(tmp_path / folder, files)
        importer = str(tmp_path / folder / "main.py")
        found = {}
        for index in order:
            answer = project.resolve(refs[index], importer)
            found[index] = None if answer is None else (Path(answer[0]).name, answer[1])
        return found

    fresh = {index: answers([index], f"fresh{index}")[index] for index in range(len(refs))}
    assert fresh == {0: None, 1: ("c14.py", "deep"), 2: None, 3: ("c14.py", "deep")}
    assert answers([0, 1, 2, 3], "deep-first") == fresh
    assert answers([1, 3, 2, 0], "shallow-first") == fresh
    assert answers([3, 2, 1, 0], "mid-first") == fresh
