"""The project gate's fixpoint grows only the modules whose inputs changed (gate_worklist.py), with the same
outcome as the loop growing every module in every pass (issue 32): the same summaries, in the same order (a
module read on demand takes its place then), and the same seeds as the gate before it (tests/gate_reference.py),
on generated projects of chains, packages, re-exports, star and aliased imports.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Tuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flake8_http_pool.project as project_module
import gate_reference
from flake8_http_pool.options import DEFAULT_OPTIONS
from flake8_http_pool.project import _Absolute, project_seeds
from flake8_http_pool.project_cache import LocalModules


# -- the new gate against the one before it --------------------------------------------------------------
_MODULES = ["m0.py", "m1.py", "m2.py", "pkg/__init__.py", "pkg/a.py", "pkg/b.py", "pkg/sub/__init__.py",
            "pkg/sub/c.py", "pkg/sub/d.py", "lib/e.py"]
_NAMES = ["f0", "f1", "get"]


def _dotted(module: str) -> str:
    parts = module[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@st.composite
def _projects(draw: Any) -> Dict[str, str]:
    """A few modules calling one another's functions through every spelling of an import the gate searches
    for, some making requests, some calling in loops; names shared between modules."""
    chosen = sorted(set(draw(st.lists(st.sampled_from(_MODULES), min_size=3, max_size=10))))
    for module in list(chosen):  # a package's modules come with its `__init__.py` (or not: a namespace package)
        parts = module.split("/")
        for depth in range(1, len(parts)):
            init = "/".join(parts[:depth]) + "/__init__.py"
            if parts[0] != "lib" and init not in chosen and draw(st.booleans()):
                chosen.append(init)
    chosen.sort()
    making = draw(st.sampled_from(chosen))  # one module makes requests, a few others may
    files: Dict[str, str] = {}
    for module in chosen:
        header: List[str] = []
        body: List[str] = []
        here = _dotted(module)
        package = here if module.endswith("__init__.py") else here.rpartition(".")[0]

        def call(target_module: str, name: str) -> str:
            target = _dotted(target_module)
            parent, _, stem = target.rpartition(".")
            style = draw(st.integers(0, 7))
            if style == 0:
                header.append(f"from {target} import {name}")
                return f"{name}(u)"
            if style == 1:
                header.append(f"import {target}")
                return f"{target}.{name}(u)"
            if style == 2:
                header.append(f"import {target} as alias_{stem}")
                return f"alias_{stem}.{name}(u)"
            if style == 3 and parent:
                header.append(f"from {parent} import {stem}")
                return f"{stem}.{name}(u)"
            if style == 4:
                header.append(f"from {target} import *")
                return f"{name}(u)"
            if style == 5 and parent:
                top = target.split(".")[0]
                header.append(f"import {top}")
                return f"{target}.{name}(u)"
            if style == 6 and parent and parent == package:
                header.append(f"from .{stem} import {name}")
                return f"{name}(u)"
            if style == 7:
                header.append(f"from {target} import Api")
                return "Api().fetch(u)"
            header.append(f"from {target} import {name}")
            return f"{name}(u)"

        others = [other for other in chosen if other != module]
        if module.endswith("__init__.py") and others and draw(st.booleans()):
            source = draw(st.sampled_from(others))
            if _dotted(source).startswith(here + "."):
                stem = _dotted(source)[len(here) + 1:]
                if "." not in stem:
                    header.append(draw(st.sampled_from([f"from .{stem} import *", f"from .{stem} import f0, get",
                                                        f"from . import {stem}"])))
        # Few modules make requests: the others join in phase 2, round after round.
        requests = module == making or draw(st.integers(0, 5)) == 0
        if requests:
            header.append("import requests")
        for name in draw(st.lists(st.sampled_from(_NAMES), min_size=module == making, max_size=3, unique=True)):
            lines = ["requests.get(u)"] if module == making else []
            for _ in range(draw(st.integers(1, 3))):
                kind = draw(st.integers(0, 3))
                if kind == 0 and requests:
                    lines.append("requests.get(u)")
                elif others:
                    made = call(draw(st.sampled_from(others)), draw(st.sampled_from(_NAMES)))
                    lines.append(made if kind != 3 else f"for v in u:\n        {made}")
                else:
                    lines.append("pass")
            body.append(f"def {name}(u):\n" + "".join(f"    {line}\n" for line in lines))
        if draw(st.booleans()):
            fetch = "requests.get(u)" if requests or not others else \
                call(draw(st.sampled_from(others)), draw(st.sampled_from(_NAMES)))
            body.append(f"class Api:\n    def fetch(self, u):\n        return {fetch}\n")
        if others and draw(st.booleans()):
            body.append(f"for u in URLS:\n    {call(draw(st.sampled_from(others)), draw(st.sampled_from(_NAMES)))}\n")
        files[module] = "\n".join(dict.fromkeys(header)) + "\n\n\n" + "\n\n".join(body)
    return files


def _solved(root: Path, gate: Any, module: Any) -> Tuple[Dict[str, Any], List[Tuple[str, bool]]]:
    """The seeds of a project and the order of its summaries when the solve starts."""
    paths = sorted(str(path) for path in root.rglob("*.py"))
    local = LocalModules(lambda path: DEFAULT_OPTIONS, None)
    order: List[Tuple[str, bool]] = []
    solve = module.solve

    def watching(project: Any, worth: Any) -> Any:
        order.extend((os.path.relpath(path, root), project.summaries[path] is None) for path in project.summaries)
        return solve(project, worth)

    module.solve = watching
    try:
        return dict(gate(paths, local)), order
    finally:
        module.solve = solve


def _new_gate(paths: List[str], local: LocalModules) -> Any:
    return project_seeds(paths, lambda path: DEFAULT_OPTIONS, first=local.first, search=local.search,
                         load=local.summary)


def _old_gate(paths: List[str], local: LocalModules) -> Any:
    return gate_reference.solve_gated(_Absolute(paths), local.first, local.search, local.summary)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_projects())
def test_the_gate_solves_as_the_gate_before_it(files: Dict[str, str]) -> None:
    """The same summaries in the same order (a module read on demand takes its place then), the same seeds."""
    root = Path(tempfile.mkdtemp(prefix="htp-gate-"))
    try:
        (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        assert _solved(root, _new_gate, project_module) == _solved(root, _old_gate, gate_reference)
    finally:
        shutil.rmtree(root)


def test_the_generated_projects_join_round_after_round() -> None:
    """The comparison above means something only where modules join round after round and are read on demand:
    a chain through a package's re-export, an aliased import and a module-level one, three rounds deep."""
    files = {
        "pkg/__init__.py": "from .a import *\n",
        "pkg/a.py": "import requests\n\n\ndef f0(u):\n    return requests.get(u)\n",
        "pkg/b.py": "from pkg import f0\n\n\ndef f1(u):\n    return f0(u)\n",
        "m1.py": "import pkg.b as b\n\n\ndef get(u):\n    return b.f1(u)\n",
        "m2.py": "import m1\n\n\ndef f0(u):\n    for v in u:\n        m1.get(v)\n",
    }
    root = Path(tempfile.mkdtemp(prefix="htp-gate-"))
    try:
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        before = _solved(root, _old_gate, gate_reference)
        after = _solved(root, _new_gate, project_module)
    finally:
        shutil.rmtree(root)
    assert after == before
    hot = {os.path.basename(path): sorted(seeds.hot) for path, seeds in after[0].items() if seeds.hot}
    assert hot == {"a.py": ["f0"], "b.py": ["f1"], "m1.py": ["get"]}, hot
