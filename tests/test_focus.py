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
from hypothesis import given, settings
from hypothesis import strategies as st

from flake8_http_pool.focus import _Imports, _route, focused_seeds, imported_names
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


_TOKENS = [b"import", b"from", b" ", b"\t", b"\n", b":", b";", b"(", b")", b"a", b".", b",", b"#", b"as", b"x.y",
           b"\r\n", b"*", b"if x:", b"'import os'"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=40))
def test_import_statements_are_found_on_the_lines_holding_import_as_a_scan_of_every_byte_finds_them(
        tokens: List[bytes]) -> None:
    from flake8_http_pool.focus import _FROM, _IMPORT
    from flake8_http_pool.project import _IMPORT_STATEMENT, import_matches

    data = b"".join(tokens)
    for pattern in (_IMPORT, _FROM, _IMPORT_STATEMENT):
        assert [m.span() for m in import_matches(pattern, data)] == [m.span() for m in pattern.finditer(data)]


def test_import_statements_of_the_standard_library_are_found_as_a_scan_of_every_byte_finds_them() -> None:
    import sysconfig

    from flake8_http_pool.focus import _FROM, _IMPORT
    from flake8_http_pool.project import _IMPORT_STATEMENT, import_matches

    folder = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(folder.glob("*.py")) + sorted((folder / "email").glob("*.py")):
        data = path.read_bytes()
        for pattern in (_IMPORT, _FROM, _IMPORT_STATEMENT):
            assert [m.span() for m in import_matches(pattern, data)] == [m.span() for m in pattern.finditer(data)], \
                path


@pytest.mark.parametrize("source, name, expected", [
    (b"from .client import Client, Other\n__all__ = ['Client']\ndefault = Client()\n", "Client", (".client", "Client")),
    (b"from .client import Client as C\n", "C", (".client", "Client")),
    (b"from telebot import types\ndef f(kind: List[types.Kind] = None): return types.Message\n", "types",
     ("telebot", "types")),
    (b'import telebot.types\n"""For a list of types."""\n', "types", ("", "")),  # bound nowhere
    (b"from .client import Client\nClient = wrap(Client)\n", "Client", None),
    (b"from .client import Client\nClient += ()\n", "Client", None),
    (b"from .client import Client\nClient: type = Other\n", "Client", None),
    (b"from .client import Client\nfirst, Client = pair\n", "Client", None),
    (b"from .client import Client\nif old:\n    class Client: pass\n", "Client", None),
    (b"from .client import Client\nfrom .other import Client\n", "Client", None),
    (b"from .client import Client\nimport Client\n", "Client", None),
    (b"from .client import Client\nimport Client.sub\n", "Client", None),
    (b"from .client import Client\nClient.retries = 3\nClient.get(url)\n", "Client", (".client", "Client")),
    (b"from .client import Client\nfor Client in kinds: pass\n", "Client", None),
    (b"from .client import Client\ndef __getattr__(name): pass\n", "Client", None),
    (b"from .inner import *\n", "Client", None),  # a star import of the project's own module
], ids=lambda value: value.decode().split("\n")[-2][:30] if isinstance(value, bytes) else None)
def test_a_name_a_module_only_imports_is_followed_to_where_it_comes_from(
        source: bytes, name: str, expected: object) -> None:
    assert _route(_Imports(source), name, lambda module: module == ".inner") == expected


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


_RECORDS = ("import requests\n\n\nclass Record:\n    def fetch(self):\n"
            "        return requests.get('https://example.com')\n")
_HANDLER = ("from {source} import get_json\nfrom app.records import Record\n\n\n"
            "async def handler(url) -> Record:\n    return get_json(url)\n")
_PACKAGE = "from .helper import get_json\nfrom .records import Record\n"


@pytest.mark.parametrize("source, package", [("app.helper", ""), ("app", _PACKAGE)],
                         ids=["from-the-module", "through-the-package"])
def test_flake8_named_one_file_reads_neither_what_it_only_imports_nor_the_callers_of_its_callees(
        tmp_path: Path, source: str, package: str) -> None:
    """The file's answer needs the helper it calls (a blocking call from an `async def`: HTP403), not the
    module whose class it names only as an annotation, and not the module that calls the helper in a loop:
    that makes the helper hot, which changes the helper's findings, not the file's."""
    _tree(tmp_path, {"pyproject.toml": "", "app/__init__.py": package, "app/helper.py": _HELPER,
                     "app/sync.py": _LOOP, "app/records.py": _RECORDS,
                     "app/handler.py": _HANDLER.format(source=source)})
    log = tmp_path / "parsed.txt"
    one = _flake8(tmp_path, "app/handler.py", log=log)
    parsed = sorted(os.path.relpath(line, tmp_path) for line in log.read_text().splitlines())
    # (The package's `__init__.py`, when the name comes through it: the call is resolved there.)
    assert parsed == [os.path.join("app", name) for name in ("__init__.py", "handler.py", "helper.py")
                      if package or name != "__init__.py"], parsed
    log.unlink()
    tree = _flake8(tmp_path, ".", log=log)
    mine = [line[2:] for line in tree.stdout.splitlines() if line.startswith("./app/handler.py:")]
    assert one.stdout.splitlines() == mine and "HTP403" in one.stdout, one.stdout + one.stderr + tree.stdout
    assert "./app/helper.py:" in tree.stdout and "./app/records.py" not in tree.stdout, tree.stdout


def _check(root: Path, *args: str, source: str = "", cache: Path, log: Path) -> subprocess.CompletedProcess:
    environment = dict(os.environ)
    environment["FLAKE8_HTTP_POOL_CACHE_DIR"] = str(cache)
    environment["FLAKE8_HTTP_POOL_PARSE_LOG"] = str(log)
    return subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", *args], cwd=root, input=source,
                          capture_output=True, text=True, timeout=180, env=environment)


def test_check_of_an_editor_s_buffer_with_a_cold_cache_reads_the_modules_that_matter_to_it(tmp_path: Path) -> None:
    root = tmp_path / "project"
    _tree(root, {"pyproject.toml": "", "app/__init__.py": "", "app/helper.py": _HELPER, "app/sync.py": _LOOP,
                 **{f"app/unrelated_{n}.py": _UNRELATED.format(n=n) for n in range(20)}})
    log = tmp_path / "parsed.txt"
    one = _check(root, "--stdin-filename", "app/helper.py", "-", source=_HELPER, cache=tmp_path / "cache", log=log)
    parsed = sorted(os.path.relpath(line, root) for line in log.read_text().splitlines())
    # The buffer's file and its caller (whose loop makes it hot), then the buffer itself: no module that never
    # calls it.
    assert sorted(set(parsed)) == [os.path.join("app", "helper.py"), os.path.join("app", "sync.py")], parsed
    tree = _check(root, ".", cache=tmp_path / "cache2", log=log)
    mine = [line[2:] for line in tree.stdout.splitlines() if line.startswith("./app/helper.py:")]
    got = [line for line in one.stdout.splitlines() if line.startswith("app/helper.py:")]
    assert got == mine and "HTP102" in one.stdout, one.stdout + one.stderr + tree.stdout
    assert one.returncode == tree.returncode == 1


@pytest.mark.parametrize("root", FIXTURE_PROJECTS, ids=[p.name for p in FIXTURE_PROJECTS])
def test_check_of_each_file_s_buffer_gives_what_check_of_the_project_gives_it(root: Path, monkeypatch) -> None:
    """`check --stdin-filename F -`, answered from the modules that can matter to F, against `check` on F's
    whole project, for every Python file of a fixture project (the CLI's own entry point, in this process,
    without a cache)."""
    import io

    from flake8_http_pool.cli import build_parser

    monkeypatch.chdir(root)

    def check(*argv: str, source: str = "") -> List[str]:
        args = build_parser().parse_args(["check", "--no-cache", "--jobs", "1", *argv])
        out, err = io.StringIO(), io.StringIO()
        args.handler(args, io.StringIO(source), out, err)
        return [line[2:] if line.startswith("./") else line for line in out.getvalue().splitlines()]

    from flake8_http_pool.plugin_project import root_of

    files = sorted(os.path.relpath(path, root) for path in project_files(str(root)))
    assert files, root
    # The whole project of each file: the one above it (outside_project's app/ is a project of its own).
    wholes = {top: check(top) for top in {os.path.relpath(root_of(str(root / name)) or root, root) for name in files}}
    different = []
    for name in files:
        top = os.path.relpath(root_of(str(root / name)) or root, root)
        expected = [line for line in wholes[top] if line.startswith(f"{name}:")]
        got = [line for line in check("--stdin-filename", name, "-", source=(root / name).read_text(encoding="utf-8"))
               if line.startswith(f"{name}:")]
        if got != expected:
            different.append(f"{name}:\n  whole: {expected}\n  buffer: {got}")
    assert different == []


def _shard_records(root: Path, *argv: str) -> List[str]:
    """`check --output-format json` in `root` through the CLI's own entry point, in this process, without a
    cache: each record as a line of sorted JSON."""
    import io
    import json

    from flake8_http_pool.cli import build_parser

    args = build_parser().parse_args(["check", "--no-cache", "--jobs", "1", "--exit-zero", "--output-format", "json",
                                      *argv])
    out, err = io.StringIO(), io.StringIO()
    args.handler(args, io.StringIO(), out, err)
    assert "Traceback" not in err.getvalue(), err.getvalue()
    return [json.dumps(record, sort_keys=True) for record in json.loads(out.getvalue())]


def _sharded_differences(root: Path, monkeypatch, shards: int, lists: Path) -> List[str]:
    """Check of `root` whole against its shards (`shards` round robin, or a shard per file when 0), each
    answered from the modules that can matter to its files: the records each side has that the other has not.
    The file lists are written in `lists`."""
    monkeypatch.chdir(root)
    files = sorted(str(path.relative_to(root)) for path in root.rglob("*.py"))
    assert files, root
    listed = lists / "all.txt"
    listed.write_text("".join(f"{name}\n" for name in files), encoding="utf-8")
    whole = _shard_records(root, "--files-from", str(listed))
    count = min(shards, len(files)) or len(files)
    union: List[str] = []
    for number in range(count):
        part = lists / f"shard{number}.txt"
        part.write_text("".join(f"{name}\n" for name in files[number::count]), encoding="utf-8")
        union += _shard_records(root, "--files-from", str(part), "--project-from", str(listed))
    return [f"whole only: {record}" for record in sorted(set(whole) - set(union))] + \
        [f"shards only: {record}" for record in sorted(set(union) - set(whole))] + \
        ([] if len(union) == len(set(union)) else ["a record in two shards"])


@pytest.mark.parametrize("shards", [0, 2], ids=["a shard per file", "2 shards"])
@pytest.mark.parametrize("root", FIXTURE_PROJECTS, ids=[p.name for p in FIXTURE_PROJECTS])
def test_the_shards_of_a_fixture_project_report_what_check_of_the_whole_reports(
        root: Path, shards: int, monkeypatch, tmp_path: Path) -> None:
    """A shard's files answered from the modules that can matter to them (project_check._focused_seeds): with
    a file per shard and with the files dealt out, their findings are the whole project's, field for field."""
    import shutil

    copy = tmp_path / root.name
    shutil.copytree(root, copy)
    assert _sharded_differences(copy, monkeypatch, shards, tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("root", _corpus() or [None], ids=[p.name for p in _corpus()] or ["no-corpus"])
def test_the_shards_of_a_corpus_package_report_what_check_of_the_whole_reports(
        root: Path, monkeypatch, tmp_path: Path) -> None:
    if root is None:
        pytest.skip("the shared corpus is not fetched (../shared/corpus/fetch.sh)")
    assert _sharded_differences(root, monkeypatch, 3, tmp_path) == []
