"""The project gate is linear in the project's size (issue 32): a chain of wrappers across modules, one search
round per link, no longer reads every remaining file and grows every summarized module in each round.

- Each file of a chain is opened a few times whatever the chain's length, by `check` and by flake8's cold solve
  (counted by an audit hook: the same run on chains of 30 and 60 links opens no file more often).
- The new gate (a worklist of the modules to grow, gate_worklist.py; a word index of the rest from its third
  search round, word_index.py) gives the summaries, in the same order, and the seeds of the gate before it
  (tests/gate_reference.py) on generated projects of chains, packages, re-exports, star and aliased imports.
- The word index gives every file `Needles.match` matches (and, for tokens it cannot hold, a superset).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import flake8_http_pool.project as project_module
import gate_reference
from cli_support import assert_no_traceback
from flake8_http_pool.options import DEFAULT_OPTIONS
from flake8_http_pool.project import Needles, _Absolute, _after, project_seeds
from flake8_http_pool.project_cache import LocalModules

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): the gate is solved twice over
# generated projects
pytestmark = pytest.mark.slow


# -- a chain of wrappers, counted ------------------------------------------------------------------------
def _chain(root: Path, links: int, fillers: int = 40) -> None:
    """m0 requests, each m<i> wraps m<i-1>'s f<i-1>, main.py calls the last one in a loop; fillers name nothing."""
    (root / "pyproject.toml").write_text("[project]\nname = 'chain'\n")
    (root / "m0.py").write_text("import requests\n\n\ndef f0(u):\n    return requests.get(u)\n")
    for i in range(1, links):
        (root / f"m{i}.py").write_text(f"from m{i - 1} import f{i - 1}\n\n\ndef f{i}(u):\n    return f{i - 1}(u)\n")
    (root / "main.py").write_text(f"from m{links - 1} import f{links - 1}\n\n\ndef run(urls):\n"
                                  f"    for u in urls:\n        f{links - 1}(u)\n")
    for j in range(fillers):
        (root / f"filler{j}.py").write_text(f"import os\n\n\ndef g{j}(x):\n    return os.path.join(x, 'y')\n")


# Runs the command named by argv[1] (check, or flake8's main) under an audit hook that counts each opening of a
# `.py` file of the tree (the current folder), and writes the counts to HTP_OPEN_LOG when it exits.
_COUNTING = """
import atexit, collections, os, sys
root = os.getcwd() + os.sep
counts = collections.Counter()
def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes)):
        path = os.path.abspath(os.fsdecode(args[0]))
        if path.startswith(root) and path.endswith(".py"):
            counts[path[len(root):]] += 1
def save():
    with open(os.environ["HTP_OPEN_LOG"], "w") as out:
        out.writelines(f"{count} {path}\\n" for path, count in sorted(counts.items()))
atexit.register(save)
sys.addaudithook(hook)
if sys.argv[1] == "check":
    from flake8_http_pool.cli import main
    status = main(sys.argv[1:])
else:
    from flake8.main.cli import main
    status = main(sys.argv[2:])
sys.exit(status)
"""


def _opened(root: Path, command: List[str]) -> Tuple[Counter, subprocess.CompletedProcess]:
    log = root / "opened.log"
    env = dict(os.environ, HTP_OPEN_LOG=str(log))
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "-c", _COUNTING, *command], cwd=root, capture_output=True, text=True,
                          timeout=300, env=env)
    counts: Counter = Counter()
    for line in log.read_text().splitlines():
        count, path = line.split(" ", 1)
        counts[path] = int(count)
    return counts, done


_CHECK = ["check", "--isolated", "--no-cache", "--jobs", "1", "."]
_FLAKE8 = ["flake8", "--isolated", "--select", "HTP", "--jobs", "1", "."]


@pytest.mark.parametrize("command", [_CHECK, _FLAKE8], ids=["check", "flake8"])
def test_a_chain_of_wrappers_opens_each_file_a_few_times_whatever_its_length(tmp_path: Path,
                                                                             command: List[str]) -> None:
    """Before, each link of the chain was one search round reading every remaining file: with 60 links each
    filler was opened about 60 times (and 30 times with 30 links). The finding at the chain's root names the
    loop at its other end."""
    opened: Dict[int, Counter] = {}
    for links in (30, 60):
        root = tmp_path / str(links)
        root.mkdir()
        _chain(root, links)
        opened[links], done = _opened(root, command)
        assert_no_traceback(done)
        assert done.returncode == 1, done.stderr
        assert "m0.py:5:12: HTP102 requests.get() in f0(), which runs many times (called from f1(), called in a " \
               "loop at main.py:6)" in done.stdout, done.stdout
        assert len(opened[links]) == links + 41, sorted(opened[links])  # every module read, the log aside
    most = {links: max(counts.values()) for links, counts in opened.items()}
    assert most[60] == most[30] <= 10, (opened[30].most_common(3), opened[60].most_common(3))


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

    def watching(project: Any, worth: Any, matters: Any) -> Any:
        order.extend((os.path.relpath(path, root), project.summaries[path] is None) for path in project.summaries)
        return solve(project, worth, matters)

    module.solve = watching
    try:
        return dict(gate(paths, local)), order
    finally:
        module.solve = solve


def _new_gate(paths: List[str], local: LocalModules) -> Any:
    return project_seeds(paths, lambda path: DEFAULT_OPTIONS, first=local.first, search=local.search,
                         load=local.summary, words=local.words)


def _old_gate(paths: List[str], local: LocalModules) -> Any:
    return gate_reference.solve_gated(_Absolute(paths), local.first, local.search, local.summary)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_projects(), st.sampled_from([0, 1, 2]))
def test_the_gate_solves_as_the_gate_before_it(files: Dict[str, str], plain_rounds: int) -> None:
    """Rounds from the first, second or third on looked up in the word index: the same summaries in the same
    order (a module read on demand takes its place then), the same seeds."""
    root = Path(tempfile.mkdtemp(prefix="htp-gate-"))
    try:
        (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        before = _solved(root, _old_gate, gate_reference)
        kept = project_module._PLAIN_ROUNDS
        project_module._PLAIN_ROUNDS = plain_rounds
        try:
            after = _solved(root, _new_gate, project_module)
        finally:
            project_module._PLAIN_ROUNDS = kept
        assert after == before
    finally:
        shutil.rmtree(root)


def test_the_generated_projects_reach_the_word_index_and_beyond(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above means something only where rounds run from the index and modules are read on
    demand: a chain through a package's re-export, an aliased import and a module-level one, three rounds deep."""
    files = {
        "pkg/__init__.py": "from .a import *\n",
        "pkg/a.py": "import requests\n\n\ndef f0(u):\n    return requests.get(u)\n",
        "pkg/b.py": "from pkg import f0\n\n\ndef f1(u):\n    return f0(u)\n",
        "m1.py": "import pkg.b as b\n\n\ndef get(u):\n    return b.f1(u)\n",
        "m2.py": "import m1\n\n\ndef f0(u):\n    for v in u:\n        m1.get(v)\n",
    }
    root = Path(tempfile.mkdtemp(prefix="htp-gate-"))
    rounds: List[int] = []
    try:
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        before = _solved(root, _old_gate, gate_reference)
        monkeypatch.setattr(project_module, "_PLAIN_ROUNDS", 1)
        search = LocalModules.search

        def counted(self: LocalModules, paths: Any, needles: Any) -> Any:
            paths = list(paths)
            rounds.append(len(paths))
            return search(self, paths, needles)

        monkeypatch.setattr(LocalModules, "search", counted)
        after = _solved(root, _new_gate, project_module)
    finally:
        shutil.rmtree(root)
    assert after == before
    hot = {os.path.basename(path): sorted(seeds.hot) for path, seeds in after[0].items() if seeds.hot}
    assert hot == {"a.py": ["f0"], "b.py": ["f1"], "m1.py": ["get"]}, hot
    assert len(rounds) >= 3 and rounds[1:] == [1] * (len(rounds) - 1), rounds  # from the index: one file each


# -- the word index against Needles.match ----------------------------------------------------------------
_WORDS = ["app", "http", "utils", "get_json", "fetch", "h", "ünï", "my-mod", "x1"]
_WORD = st.sampled_from(_WORDS)
_DOTTED = st.lists(_WORD, min_size=1, max_size=3).map(".".join)
_SPACE = st.sampled_from(["", " ", "\t"])
_LINES = st.one_of(
    st.builds("import {}".format, _DOTTED),
    st.builds("import {} as {}".format, _DOTTED, _WORD),
    st.builds("from {} import {}".format, _DOTTED, st.lists(_WORD, min_size=1, max_size=3).map(", ".join)),
    st.builds("from {} import (\n    {},\n)".format, _DOTTED, st.lists(_WORD, min_size=1, max_size=3).map(
        ",\n    ".join)),
    st.builds("from {} import *".format, st.sampled_from([".", ".."]).flatmap(
        lambda dots: _DOTTED.map(lambda name: dots + name)) | _DOTTED),
    st.builds("    from . import {}".format, _WORD),
    st.builds("{}{}.{}{}".format, _DOTTED, _SPACE, _SPACE, _WORD),
    st.builds("y = {}.{}({}) # import {}".format, _DOTTED, _WORD, _WORD, _WORD),
    st.lists(st.sampled_from(["import ", "from ", " as ", ".", "*", "(", ")", ", ", " ", "1", "\\\n", *_WORDS]),
             max_size=12).map("".join),
)
_ATOMS = st.lists(st.tuples(_WORD, _WORD, st.sampled_from([None, "app", "h", "utils"])), min_size=1, max_size=4)


@settings(max_examples=500, deadline=None)
@given(st.lists(_LINES, min_size=1, max_size=8), _ATOMS)
def test_the_word_index_finds_every_file_needles_match(lines: List[str], wanted: List[Tuple[str, str, Any]]) -> None:
    """Every file `Needles.match` matches is a candidate; no other is, unless a token is not a run of word
    bytes (`my-mod`), whose names the index does not hold."""
    import sqlite3

    from flake8_http_pool.word_index import FOLDER, TOKEN, Atom, WordFilter, WordIndex, file_words, is_run

    data = "\n".join(lines).encode("utf-8")
    project_words = WordFilter(8)
    direct: Dict[str, set] = {}
    through: Dict[str, Dict[str, set]] = {}
    for token, name, folder in wanted:
        project_words.add(TOKEN, token)
        if folder is None:
            direct.setdefault(token, set()).add(name)
        else:
            project_words.add(FOLDER, folder)
            through.setdefault(folder, {}).setdefault(token, set()).add(name)
    needles = Needles({token: frozenset(names) for token, names in direct.items()},
                      {folder: {token: frozenset(names) for token, names in below.items()}
                       for folder, below in through.items()})
    index = WordIndex(sqlite3.connect(":memory:", isolation_level=None))
    index.add([(7, file_words(data, project_words))])
    found = 7 in index.candidates([Atom(token, name, folder) for token, name, folder in wanted])
    if needles.match(data):
        assert found
    elif all(is_run(token) for token, _, _ in wanted):
        assert not found


@settings(max_examples=500, deadline=None)
@given(st.lists(_LINES, min_size=1, max_size=8), _ATOMS)
def test_a_file_of_few_tokens_is_matched_as_without_its_byte_search(
        lines: List[str], wanted: List[Tuple[str, str, Any]]) -> None:
    """`matched_text` looks for a few tokens in an ASCII file's bytes before its import statements
    (`Needles.may_name`): whatever the file, it takes in exactly the files `match` matches."""
    from flake8_http_pool.project import matched_text, searchable
    from flake8_http_pool.source_files import decode_source

    data = "\n".join(lines).encode("utf-8")
    direct: Dict[str, set] = {}
    through: Dict[str, Dict[str, set]] = {}
    for token, name, folder in wanted:
        if folder is None:
            direct.setdefault(token, set()).add(name)
        else:
            through.setdefault(folder, {}).setdefault(token, set()).add(name)
    needles = Needles({token: frozenset(names) for token, names in direct.items()},
                      {folder: {token: frozenset(names) for token, names in below.items()}
                       for folder, below in through.items()})
    assert (matched_text(data, needles) is not None) == needles.match(searchable(data, decode_source(data)))


def test_the_word_index_holds_what_after_finds_even_where_it_skips() -> None:
    """`_after` finds names right after the token and a dot, taking the matches' spans whole: in `h.h.fetch`
    the second `h.fetch` is inside the first match. The index keeps what `_after` itself gives."""
    from flake8_http_pool.word_index import TOKEN, WordFilter, file_words

    data = b"import h\nh.h.fetch()\nh . get_json\n"
    assert _after("h", data) == {"h", "get_json"}
    project_words = WordFilter(4)
    project_words.add(TOKEN, "h")
    assert file_words(data, project_words).after == (("h", ("get_json", "h")),)
