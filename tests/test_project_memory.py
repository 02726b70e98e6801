"""What keeps the project model small on a big tree must never change what it finds.

`project.Summaries` holds summaries packed (pickled and compressed, as workers send them) and, once the gate
has settled what can matter, hands the solve each summary narrowed to what it reads (`_worth_only`). These tests
solve the fixture projects with and without the narrowing and with summaries arriving packed, and compare every
seed.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any, Dict, List

import pytest

import flake8_http_pool.project as project_module
from flake8_http_pool.options import DEFAULT_OPTIONS
from flake8_http_pool.project import Summaries, absolute_path, packed, project_seeds, unpacked
from flake8_http_pool.project_cache import LocalModules

FIXTURES = Path(__file__).parent / "fixtures"
PROJECTS = sorted([p for p in (FIXTURES / "projects").iterdir() if p.is_dir()] +
                  [p / "before" for p in (FIXTURES / "fix_projects").iterdir() if (p / "before").is_dir()])


def _python_files(root: Path) -> List[str]:
    return sorted(str(path) for path in root.rglob("*.py"))


def _solve(paths: List[str], pickled: bool = False) -> Dict[str, Any]:
    """The project's seeds, every step in this process; `pickled`: the gate's summaries arrive as the
    workers send them (project.packed)."""
    local = LocalModules(lambda path: DEFAULT_OPTIONS, None)
    first, search = local.first, local.search
    if pickled:
        def first(todo: List[str]) -> Any:  # type: ignore[misc]
            found, rest = local.first(todo)
            return {path: packed(summary) for path, summary in found.items()}, rest

        def search(todo: List[str], needles: Any) -> Any:  # type: ignore[misc]
            return {path: packed(summary) for path, summary in local.search(todo, needles).items()}
    return project_seeds(paths, lambda path: DEFAULT_OPTIONS, first=first, search=search)


@pytest.mark.parametrize("root", PROJECTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_narrowed_and_pickled_summaries_solve_as_whole_ones(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _python_files(root)
    narrowed = _solve(paths)
    pickled = _solve(paths, pickled=True)
    monkeypatch.setattr(Summaries, "narrow", lambda self, keep_of: None)
    whole = _solve(paths)
    assert narrowed == whole
    assert pickled == whole


def test_the_fixture_projects_give_the_comparison_something_to_compare() -> None:
    """The comparison above means something only where the solve finds seeds of every kind."""
    kinds = {"hot": 0, "factories": 0, "blocking": 0, "writers": 0}
    for root in PROJECTS:
        for seeds in _solve(_python_files(root)).values():
            for kind in kinds:
                kinds[kind] += bool(getattr(seeds, kind))
    assert all(kinds.values()), kinds


def test_a_narrowed_summary_keeps_what_the_solve_reads() -> None:
    local_site = [["local", "helper"], 3, "call", 4]
    wanted = [["import", "app.http", ["get_json"]], 5, "called in a loop", 8]
    unwanted = [["import", "os.path", ["join"]], 6, "call", 8]
    summary = {
        "functions": {
            "helper": {"name": "helper", "line": 1, "calls": [], "hot": None, "unpooled": True, "client": False,
                       "wrapper": False, "factory": None, "blocks": None, "always": [], "writes": [],
                       "handoffs": []},
            "main": {"name": "main", "line": 2, "calls": [local_site, wanted, unwanted, [["local", "helper"], 7,
                     "called in a loop", 4]], "hot": None, "unpooled": False, "client": False, "wrapper": False,
                     "factory": None, "blocks": None, "always": [[["local", "helper"], 3, 4], [unwanted[0], 6, 8]],
                     "writes": [[0, "path", "body"]], "handoffs": []},
        },
        "module_calls": [unwanted], "defs": {"helper": "helper", "main": "main"}, "classes": {}, "exports": {},
        "stars": [], "class_facts": {}, "library_roots": ["requests"], "has_async": False,
    }
    narrowed = project_module._worth_only(summary, lambda ref: ref[0] == "local" or "get_json" in ref[2])
    main = narrowed["functions"]["main"]
    assert main["calls"] == [local_site, wanted]  # the second site naming `helper` adds nothing the solve reads
    assert main["always"] == [[["local", "helper"], 3, 4]]
    assert main["writes"] == [[0, "path", "body"]]
    assert main["hot"] is None and main["handoffs"] == () and main.get("blocks") is None
    assert narrowed["functions"]["helper"]["unpooled"] is True
    assert narrowed["functions"]["helper"]["calls"] == ()
    assert narrowed["module_calls"] == []
    with pytest.raises(KeyError):
        main["no such field"]


def test_summaries_hold_pickles_and_read_back_what_was_set() -> None:
    one, two = {"functions": {"f": {"n": 1}}}, {"functions": {"g": {"n": 2}}}
    summaries = Summaries([("a.py", packed(one)), ("b.py", None)], keep=1)
    assert summaries["a.py"] == one and summaries["b.py"] is None
    summaries["c.py"] = packed(two)
    assert summaries["c.py"] == two and summaries["a.py"] == one  # past `keep`: unpickled again
    summaries["a.py"] = packed(two)  # set again: what was read before is not served
    assert summaries["a.py"] == two
    summaries["d.py"] = one  # a summary set as objects is packed too
    assert summaries["d.py"] == one and summaries["d.py"] is not one
    assert list(summaries) == ["a.py", "b.py", "c.py", "d.py"] and len(summaries) == 4 and "b.py" in summaries
    summaries["b.py"] = packed(two)  # set again, it keeps its place
    assert list(summaries) == ["a.py", "b.py", "c.py", "d.py"] and summaries["b.py"] == two
    summaries["b.py"] = None
    del summaries["c.py"]
    assert list(summaries) == ["a.py", "b.py", "d.py"] and "c.py" not in summaries
    with pytest.raises(KeyError):
        summaries["c.py"]
    with pytest.raises(KeyError):
        del summaries["c.py"]
    summaries.narrow(lambda summary: {"narrowed": sorted(summary["functions"])})
    assert summaries["a.py"] == {"narrowed": ["g"]} and summaries["b.py"] is None
    assert unpacked(packed(one)) == one  # type: ignore[arg-type]
    # Held compressed: a summary repeats its field names and references in every record.
    big = {"functions": {f"f{n}": {"name": f"f{n}", "calls": [[["import", "requests", ["get"]], n, "call", 4]],
                                   "hot": None, "writes": []} for n in range(50)}}
    assert len(packed(big)) < len(pickle.dumps(big, pickle.HIGHEST_PROTOCOL)) / 2  # type: ignore[arg-type]


@pytest.mark.parametrize("path", ["a/b.py", "./a/../b.py", "/x//y/./z.py", "/x/y/../z.py"])
def test_absolute_path_is_abspath_and_the_same_string_when_it_is_one(path: str) -> None:
    assert absolute_path(path) == os.path.abspath(path)
    normal = os.path.abspath(path)
    assert absolute_path(normal) is normal


def test_a_call_into_a_module_phase_two_joins_resolves_once_it_has_joined(tmp_path: Path) -> None:
    """`app/jobs.py` calls `get_json` through `app/mid.py`, which only re-exports it and imports no HTTP
    library: phase 1 leaves `mid` out, so the call resolves to nothing until phase 2 brings `mid` in. Then
    `run` can matter, and `main.py`, which names only `run`, joins in turn: its loop makes both hot."""
    files = {
        "app/__init__.py": "",
        "app/http.py": "import requests\n\n\ndef get_json(url):\n    return requests.get(url, timeout=5).json()\n",
        "app/mid.py": "from app.http import get_json\n",
        "app/jobs.py": "import requests\nfrom app.mid import get_json\n\n\ndef run(url):\n    return get_json(url)\n",
        "app/main.py": "from app.jobs import run\n\n\ndef main(urls):\n    for url in urls:\n        run(url)\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    seeds = _solve(_python_files(tmp_path))
    hot = {os.path.relpath(path, tmp_path).replace(os.sep, "/"): sorted(found.hot) for path, found in seeds.items()
           if found.hot}
    assert hot == {"app/http.py": ["get_json"], "app/jobs.py": ["run"]}


# The Python memory a `check` of argv[2] holds in this process when its stages end (every file listed and
# checked alone, and the module map made; the gate and the solve done), above what it held before: a `check` of
# argv[1] has imported every module a run needs first (imports are not the run's memory).
_HELD = r'''
import contextlib, io, sys, tracemalloc
from flake8_http_pool import cli, project
held = {}
module_map, solve_gated = project.ModuleMap.__init__, project._solve_gated

def mapped(self, *args):
    module_map(self, *args)
    held.setdefault("mapped", tracemalloc.get_traced_memory()[0])

def solved(*args):
    seeds = solve_gated(*args)
    held.setdefault("solved", tracemalloc.get_traced_memory()[0])
    return seeds

project.ModuleMap.__init__, project._solve_gated = mapped, solved
tracemalloc.start()
for tree in sys.argv[1:]:
    held.clear()
    base = tracemalloc.get_traced_memory()[0]
    with contextlib.redirect_stdout(io.StringIO()):
        cli.main(["check", "--isolated", "--no-cache", "--exit-zero", "--jobs", "1", tree])
print(held["mapped"] - base, held["solved"] - base)
'''


def _tree(root: Path, files: int) -> Path:
    """`files` modules in folders of 100, as big trees mix them: one in 50 makes a request, one in 50 calls it
    from another module, the others name no HTTP library."""
    for n in range(files):
        folder = root / f"pkg{n // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        if n % 50 == 0:
            text = "import requests\n\n\ndef get_all(urls):\n    return [requests.get(u, timeout=5) for u in urls]\n"
        elif n % 50 == 1:
            text = f"from pkg{n // 100}.m{n - 1} import get_all\n\n\ndef run(urls):\n    return get_all(urls)\n"
        else:
            text = f"def f{n}(x):\n    return [x + {n} for _ in range(3)]\n"
        (folder / f"m{n}.py").write_text(text)
    return root


@pytest.mark.slow
def test_checks_main_process_holds_nothing_per_file(tmp_path: Path) -> None:
    """`check`'s main process keeps its files on disk (file_table.py), and the project model's per-module state
    there too. From 1,500 to 6,000 files of the same mix, what it holds once every file is listed, checked alone
    and named in the module map grows by a few bytes a file (its batches of rows read from disk fill up), and
    once the project is solved by what the modules that matter need (one file in 25 here). Before, it held a
    path, a candidate and entries in several maps per file: 595 bytes a file at the module map, 292 solved."""
    import subprocess
    import sys

    warm = _tree(tmp_path / "warm", 150)

    def held(files: int) -> List[int]:
        tree = _tree(tmp_path / str(files), files)
        done = subprocess.run([sys.executable, "-c", _HELD, str(warm), str(tree)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return [int(value) for value in done.stdout.split()]

    small, large = held(1500), held(6000)
    mapped, solved = [(after - before) / 4500 for before, after in zip(small, large)]
    assert mapped < 100 and solved < 150, (small, large)


def test_a_gate_worker_keeps_the_settings_key_of_the_file_it_works_on_only(tmp_path: Path) -> None:
    """A worker of the gate's phases looks its file's options up by path; it kept the key of every path it was
    given, 6 MiB in each search worker of a 100,000-file `fix --check`."""
    from flake8_http_pool import parallel_gate
    from flake8_http_pool.options import Options
    from flake8_http_pool.project import Needles

    paths = []
    for number in range(3):
        path = tmp_path / f"m{number}.py"
        path.write_text("import requests\n\n\ndef get_json(url):\n    return requests.get(url).json()\n")
        paths.append(str(path))
    shared = (parallel_gate.FixedOptions(Options()), None, False)
    firsts = [parallel_gate._first_job(shared, (path, "key")) for path in paths]
    assert all(path in found for path, (found, _) in zip(paths, firsts))  # each read and summarized
    assert list(parallel_gate._KEYS) == [paths[-1]]
    caller = tmp_path / "caller.py"
    caller.write_text("from m0 import get_json\n\nfor url in URLS:\n    get_json(url)\n")
    found = parallel_gate._search_job((*shared, Needles({"m0": frozenset({"get_json"})}, {})), (str(caller), "key"))
    assert list(found) == [str(caller)]
    assert list(parallel_gate._KEYS) == [str(caller)]


def test_a_worker_s_first_collection_frees_the_walks_before_it_freezes_what_is_left() -> None:
    """project_check._collect freezes what a worker holds so that later collections look at little more than
    the garbage; frozen before the first collection, the garbage of the walks so far (reference cycles) was
    kept for the worker's life. In a fresh process: a cycle made before the first collection is freed by it."""
    import subprocess
    import sys

    script = (
        "import gc\n"
        "from flake8_http_pool import project_check\n"
        "class Cycle:\n"
        "    def __init__(self):\n"
        "        self.me = self\n"
        "Cycle()\n"
        "project_check._collect()\n"
        "gc.unfreeze()\n"
        "print(gc.collect())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0", "garbage was frozen before the first collection: " + done.stdout
