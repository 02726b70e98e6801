"""The imports a fix schedules are carried out as libcst's own visitors carry them out, byte for byte.

`fixes.scheduled_imports` shows AddImportsVisitor only the top of the module and skips RemoveImportsVisitor
when a reduction of the module already uses every name it may drop (a 5,000-line module took 8 s there). Each
case here runs both ways, libcst's (AddImportsVisitor, then RemoveImportsVisitor, on the whole module) and
ours, and the texts must be equal: on hand-written modules where scoping is subtle, on the fixtures, and on
modules of the standard library with the removal of each of their imports scheduled in turn.
"""

from __future__ import annotations

import ast
import sys
import sysconfig
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

import libcst as cst
import pytest
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor, RemoveImportsVisitor

from flake8_http_pool.fixes import scheduled_imports
from flake8_http_pool.fixes.scheduled_imports import carry_out, reduced_source

Removal = Tuple[str, Optional[str], Optional[str]]
Addition = Tuple[str, Optional[str], Optional[str]]

FIXTURES = Path(__file__).parent / "fixtures"

# Enough code that names none of the imports for the reduction to be worth running (under half the module).
PADDING = "".join(f"\n\ndef helper_{n}(value):\n    total = value * {n}\n    return total\n" for n in range(12))


def _context(add: Sequence[Addition], remove: Sequence[Removal]) -> CodemodContext:
    context = CodemodContext(filename="module.py")
    for module, obj, asname in add:
        AddImportsVisitor.add_needed_import(context, module, obj, asname)
    for module, obj, asname in remove:
        RemoveImportsVisitor.remove_unused_import(context, module, obj, asname)
    return context


def libcst_result(source: str, add: Sequence[Addition] = (), remove: Sequence[Removal] = ()) -> str:
    """What libcst's CodemodCommand makes of the scheduled imports: each visitor on the whole module."""
    tree = cst.parse_module(source)
    context = _context(add, remove)
    if add:
        tree = AddImportsVisitor(context).transform_module(tree)
    if remove:
        tree = RemoveImportsVisitor(context).transform_module(tree)
    return tree.code


def our_result(source: str, add: Sequence[Addition] = (), remove: Sequence[Removal] = ()) -> str:
    return carry_out(cst.parse_module(source), _context(add, remove)).code


@pytest.fixture
def full_removals(monkeypatch: pytest.MonkeyPatch) -> List[int]:
    """Counts the runs of RemoveImportsVisitor on a whole module (not on a reduction)."""
    runs: List[int] = []
    real = RemoveImportsVisitor.transform_module

    def counted(self: RemoveImportsVisitor, tree: cst.Module) -> cst.Module:
        if "def helper_11" in tree.code:
            runs.append(1)
        return real(self, tree)

    monkeypatch.setattr(RemoveImportsVisitor, "transform_module", counted)
    return runs


# (module text, the removal scheduled, whether every import it matches is still used: libcst changes nothing)
REMOVALS: List[Tuple[str, str, Removal, bool]] = [
    ("used at module level", "import requests\n\n_S = requests.Session()\n", ("requests", None, None), True),
    ("unused", "import requests\nimport os\n\nprint(os.sep)\n", ("requests", None, None), False),
    ("used in a method", "import requests\n\n\nclass Api:\n    x = 1\n\n    def get(self, u):\n"
     "        return requests.get(u)\n", ("requests", None, None), True),
    ("shadowed in the function that reads it", "import requests\n\n\ndef f():\n    requests = None\n"
     "    return requests\n", ("requests", None, None), False),
    ("a parameter of that name", "import requests\n\n\ndef f(requests):\n    return requests.get\n",
     ("requests", None, None), False),
    ("global in a function", "import requests\n\n\ndef f():\n    global requests\n    requests = 1\n",
     ("requests", None, None), False),
    ("a string annotation", "import requests\n\n\ndef f(s: 'requests.Session') -> None:\n    pass\n",
     ("requests", None, None), True),
    ("exported", "import requests\n\n__all__ = ['requests']\n", ("requests", None, None), True),
    ("exported in pieces", "import requests\n\n__all__ = ['req' 'uests']\n", ("requests", None, None), True),
    ("an unused import in a function", "import requests\n\n_S = requests.Session()\n\n\ndef f():\n"
     "    import requests\n    return 1\n", ("requests", None, None), False),
    ("from-import used", "from requests import get\n\n\ndef f(u):\n    return get(u)\n",
     ("requests", "get", None), True),
    ("from-import unused", "from requests import get, post\n\n\ndef f(u):\n    return post(u)\n",
     ("requests", "get", None), False),
    ("from-import aliased", "from requests import get as fetch\n\n\ndef f(u):\n    return fetch(u)\n",
     ("requests", "get", "fetch"), True),
    ("dotted import", "import os.path\n\n\ndef f(p):\n    return os.path.join(p, 'x')\n",
     ("os.path", None, None), True),
    ("read before the import", "def f():\n    return requests.get\n\n\nimport requests\n",
     ("requests", None, None), True),
    ("read only in a class body", "import requests\n\n\nclass A:\n    s = requests.Session()\n\n    def f(self):\n"
     "        return s\n", ("requests", None, None), True),
    ("read in a comprehension", "import requests\n\nR = [requests.get(u) for u in ()]\n",
     ("requests", None, None), True),
    ("a lambda's parameter", "import requests\n\nF = lambda requests: requests\n", ("requests", None, None), False),
    ("deleted", "import requests\n\ndel requests\n", ("requests", None, None), True),
    ("the name in a comment only", "import requests\n\n# requests is not used\nX = 1\n",
     ("requests", None, None), False),
]

# Code around the case that names none of its imports, in the shapes the reduction must cut around.
SHAPES = [
    "x = 1; y = 2\n",
    "if x: y = 3\n",
    "z = (1 +\n     2)\n",
    "w = 1 + \\\n    2\n",
    "@decorator\ndef decorated():\n    return 1\n",
    "class Holder:\n    def method(self):\n        return 1\n    # indented trailing comment\n# comment\n",
    "try:\n    a = 1\nexcept ValueError:\n    a = 2\nelse:\n    a = 3\nfinally:\n    a = 4\n",
    "while x:\n    break\nelse:\n    pass\n",
    "with open('f') as handle:\n    data = handle.read()\n",
    "async def coroutine():\n    await other()\n",
    "def outer():\n    def inner():\n        return 1\n    return inner\n",
    "if x:\n    pass\nelif y:\n    q = 1\nelse: q = 2\n",
    '"""a docstring-like string"""\n',
    "for i in range(3):\n    continue\n",
]


@pytest.mark.parametrize("name, source, removal, used", REMOVALS, ids=[case[0] for case in REMOVALS])
def test_removal_as_libcst_does_it(name: str, source: str, removal: Removal, used: bool,
                                   full_removals: List[int]) -> None:
    source = source + PADDING + "".join(SHAPES)
    expected = libcst_result(source, remove=[removal])
    assert (expected == source) == used  # the case is what its name says
    full_removals.clear()
    assert our_result(source, remove=[removal]) == expected
    # A name the reduction uses needs no run on the whole module; an unused one gets it.
    assert len(full_removals) == (0 if used else 1), name


def test_a_match_statement_is_cut_around() -> None:
    if sys.version_info < (3, 10):
        pytest.skip("match statements are Python 3.10's")
    source = "import requests\n\n_S = requests.Session()\n" + PADDING + \
        "match x:\n    case 1:\n        y = 1\n    case _:\n        y = requests\n"
    assert our_result(source, remove=[("requests", None, None)]) == \
        libcst_result(source, remove=[("requests", None, None)]) == source


def test_the_reduction_keeps_every_statement_naming_a_name_and_parses() -> None:
    source = "import requests\n" + "".join(SHAPES) + "class A:\n    def f(self):\n        return 1\n" \
        "    def g(self):\n        return requests.get\n" + PADDING
    reduced = reduced_source(source, {"requests", "__all__"})
    assert reduced is not None
    ast.parse(reduced)
    cst.parse_module(reduced)
    assert "return requests.get" in reduced and "class A:" in reduced and "def g(self):" in reduced
    assert "def f(self)" not in reduced and "helper_0" not in reduced
    # A statement sharing a line with another stays.
    assert "x = 1; y = 2\n" in reduced


def test_what_shares_a_line_with_a_kept_header_stays() -> None:
    source = "if requests: y = 3\nif requests:\n    pass\nelse: q = 2\nwith requests as r: \\\n    z = 4\n"
    assert reduced_source(source, {"requests"}) == source


def test_a_block_left_empty_holds_pass() -> None:
    source = "import requests\n\n\nclass A(requests.Session):\n    def f(self):\n        return 1\n"
    assert reduced_source(source, {"requests"}) == "import requests\n\n\nclass A(requests.Session):\n    pass\n"


def test_a_text_that_does_not_parse_has_no_reduction() -> None:
    assert reduced_source("def f(:\n", {"requests"}) is None


ADDITIONS: List[Tuple[str, str, List[Addition]]] = [
    ("new module import", "import os\n\nX = os.sep\n", [("requests", None, None)]),
    ("already imported", "import requests\n\nX = 1\n", [("requests", None, None)]),
    ("merged into a from-import", "from os import sep\n\nX = sep\n", [("os", "path", None)]),
    ("after a docstring", '"""Doc."""\nimport os\n', [("shutil", None, None)]),
    ("after a __strict__ flag", "__strict__ = True\nimport os\n", [("shutil", None, None)]),
    ("no imports", "X = 1\n", [("shutil", None, None)]),
    ("only imports", "import os\nimport sys\n", [("shutil", None, None)]),
    ("empty module", "", [("shutil", None, None)]),
    ("an import later in the module", "import os\nX = 1\nimport shutil\n", [("shutil", None, None)]),
    ("imported in a function only", "import os\n\n\ndef f():\n    import shutil\n", [("shutil", None, None)]),
    ("a comment above the first statement", "import os\n# about X\nX = 1\n", [("shutil", None, None)]),
    ("aliased", "import os\n", [("numpy", None, "np"), ("os", "path", "osp")]),
    ("a future import", '"""Doc."""\nimport os\n', [("__future__", "annotations", None)]),
]


@pytest.mark.parametrize("name, source, additions", ADDITIONS, ids=[case[0] for case in ADDITIONS])
def test_addition_as_libcst_does_it(name: str, source: str, additions: List[Addition]) -> None:
    source = source + PADDING
    assert our_result(source, add=additions) == libcst_result(source, add=additions)


def test_both_in_the_order_libcst_runs_them() -> None:
    source = "import os\nimport requests\n\n\ndef f(u):\n    return requests.get(u)\n" + PADDING
    add, remove = [("requests", None, None)], [("requests", None, None), ("os", None, None)]
    assert our_result(source, add, remove) == libcst_result(source, add, remove)


def test_an_older_libcst_gets_the_whole_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before libcst 1.1 AddImportsVisitor took imports from anywhere in the module: it then sees it all."""
    seen: List[int] = []
    real = AddImportsVisitor.transform_module
    monkeypatch.setattr(scheduled_imports, "_reads_only_the_top", lambda: False)
    monkeypatch.setattr(AddImportsVisitor, "transform_module",
                        lambda self, tree: seen.append(len(tree.body)) or real(self, tree))
    source = "import os\nX = 1\n" + PADDING
    assert our_result(source, add=[("shutil", None, None)]) == libcst_result(source, add=[("shutil", None, None)])
    assert seen[0] == len(cst.parse_module(source).body)


def _imports(source: str) -> Iterator[Removal]:
    """Every import of the module, at any depth, as a removal to schedule."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield (alias.name, None, alias.asname)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name != "*":
                    yield (node.module, alias.name, alias.asname)


def _differential(paths: Sequence[Path], per_module: int = 1000) -> int:
    """The removals compared: at most `per_module` of each module's imports, spread over it (each comparison runs
    libcst on the whole module twice, and a module of the standard library imports dozens of names)."""
    compared = 0
    for path in paths:
        source = path.read_text(encoding="utf-8")
        try:
            cst.parse_module(source)
        except cst.ParserSyntaxError:
            continue
        removals = list(dict.fromkeys(_imports(source)))
        for removal in removals[:: max(1, -(-len(removals) // per_module))]:
            assert our_result(source, remove=[removal]) == libcst_result(source, remove=[removal]), (path, removal)
            compared += 1
        addition = [("flake8_http_pool_probe", None, None)]
        assert our_result(source, add=addition) == libcst_result(source, add=addition), path
    return compared


def _fixtures() -> List[Path]:
    return sorted(p for p in FIXTURES.glob("*.py") if p.stat().st_size < 6000)


def test_some_fixtures_as_libcst_does_them() -> None:
    assert _differential(_fixtures()[:1]) > 2


@pytest.mark.slow
def test_the_fixtures_as_libcst_does_them() -> None:
    assert _differential(_fixtures(), per_module=2) > 60


def _stdlib_modules(largest: int) -> List[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    found = []
    for path in sorted(root.glob("*.py")):
        try:
            size = len(path.read_text(encoding="utf-8").splitlines())
        except (OSError, UnicodeDecodeError):
            continue
        if 150 <= size <= largest:
            found.append(path)
    return found


@pytest.mark.slow
def test_standard_library_modules_as_libcst_does_them() -> None:
    assert _differential(_stdlib_modules(1500)[::8], per_module=2) > 25
