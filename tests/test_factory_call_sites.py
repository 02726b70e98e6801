"""Client factories reported at their call sites (RULES.md, "Client factory"; HTP103/HTP104), through the real CLI.

A call of a factory of the same module (a function returning a new client, a factory behind a factory, a class
whose `__init__` only builds and stores one) counts as a constructor call where it is made: HTP103 in a loop
scope, HTP104 in a hot function; the factory's own constructor is not reported. Across modules a class factory
of another module is handed to the engine like a factory function. `fix` hoists a factory call out of its loop
under HTP103's conditions, and the program then opens one connection instead of one per iteration; HTP104 at
a factory call is report only.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from flake8_http_pool.options import DEFAULT_OPTIONS
from flake8_http_pool.project import summarize
from safety_server import SafetyServer

# The whole module is a slow run (.ci/run runs it after the quick suite, -m slow): each case runs check, flake8
# and fix over a project
pytestmark = pytest.mark.slow


def _tool(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8_http_pool", *args], cwd=folder, capture_output=True,
                          text=True, timeout=300)


def _records(folder: Path, *paths: str) -> List[Dict[str, Any]]:
    done = _tool(folder, "check", "--no-cache", "--format", "json", *(paths or (".",)))
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def _write(folder: Path, files: Dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


_ONE_MODULE = """\
    import requests


    def make_session():
        s = requests.Session()
        s.headers["User-Agent"] = "bot"
        return s


    class Holder:
        def __init__(self, token):
            self.token = token
            self.session = requests.Session()


    def run(urls):
        for u in urls:
            make_session().get(u)


    def each(urls):
        for u in urls:
            holder = Holder("t")
            holder.session.get(u)


    def fetch(u):
        s = make_session()
        return s.get(u).text


    def fetch_all(urls):
        return [fetch(u) for u in urls]
    """


def test_a_factory_of_the_module_is_reported_at_its_calls(tmp_path: Path) -> None:
    _write(tmp_path, {"jobs.py": _ONE_MODULE})
    done = _tool(tmp_path, "check", "--no-cache", "jobs.py")
    assert done.stdout.splitlines() == [
        "jobs.py:18:9: HTP103 make_session() created in a loop opens a new connection pool every iteration; "
        "create it once, before the loop",
        "jobs.py:23:18: HTP103 Holder() created in a loop opens a new connection pool every iteration; "
        "create it once, before the loop",
        "jobs.py:28:9: HTP104 make_session() created in fetch(), which runs many times (called in a loop), opens "
        "new connections on every call; create one client in the caller and pass it in",
        "Found 3 findings. 1 fixable with `flake8-http-pool fix --unsafe-fixes`.",
    ], done.stdout + done.stderr
    records = _records(tmp_path, "jobs.py")
    # The hoist of `holder = Holder("t")` is offered; an inline `make_session().get(u)` and HTP104 at a
    # factory call are report only.
    assert [(r["line"], r["code"], r["fix"], r["details"]["factory_name"]) for r in records] == [
        (18, "HTP103", None, "make_session"), (23, "HTP103", "unsafe", "Holder"),
        (28, "HTP104", None, "make_session")]


def test_flake8_reports_the_same_call_sites(tmp_path: Path) -> None:
    _write(tmp_path, {"jobs.py": _ONE_MODULE, "setup.cfg": "[flake8]\nselect = HTP\n"})
    done = subprocess.run([sys.executable, "-m", "flake8", "jobs.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    found = [tuple(line.split(":")[1:4]) for line in done.stdout.splitlines()]
    assert [(line, code.split()[0]) for line, _, code in found] == [
        ("18", "HTP103"), ("23", "HTP103"), ("28", "HTP104")], done.stdout + done.stderr


_LOOKALIKES = """\
    import threading

    import requests


    class Logger:  # other work: opens a file
        def __init__(self, path):
            self.session = requests.Session()
            self.log = open(path, "a")


    class Poller:  # other work: starts a thread
        def __init__(self):
            self.session = requests.Session()
            threading.Thread(target=print).start()


    class Borrower:  # builds nothing: stores a client it was passed
        def __init__(self, session):
            self.session = session


    class Branchy:  # a branch is other work
        def __init__(self, shared=None):
            if shared is None:
                shared = requests.Session()
            self.session = shared


    def make():
        return requests.Session()


    SHARED = make()


    def run(paths, session):
        kept = [make() for _ in paths]
        for p in paths:
            Logger(p).session.get(p)
            Poller().session.get(p)
            Borrower(session).session.get(p)
            Branchy(session).session.get(p)
            SHARED.get(p)
        return kept
    """


def test_lookalike_classes_and_kept_factory_results_are_not_reported(tmp_path: Path) -> None:
    _write(tmp_path, {"jobs.py": _LOOKALIKES})
    assert _records(tmp_path, "jobs.py") == []


def test_summarize_marks_a_class_factory_by_its_init() -> None:
    tree = ast.parse(textwrap.dedent(_ONE_MODULE + _LOOKALIKES.replace("import threading", "")
                                     .replace("import requests", "")))
    functions = summarize(tree, DEFAULT_OPTIONS)["functions"]
    factories = {key: (record["factory"], record.get("factory_name")) for key, record in functions.items()
                 if record["factory"]}
    assert factories == {"make_session": ("requests.Session", "make_session"),
                         "Holder.__init__": ("requests.Session", "Holder"),
                         "make": ("requests.Session", "make")}


def test_a_class_factory_of_another_module_is_reported_at_its_call(tmp_path: Path) -> None:
    _write(tmp_path, {
        "pyproject.toml": "",
        "app/__init__.py": "",
        "app/base.py": """\
            import requests


            class SessionHolder:
                def __init__(self):
                    self.session = requests.Session()


            class NotAFactory:
                def __init__(self, path):
                    self.session = requests.Session()
                    self.path = path.strip()
            """,
        "app/sync.py": """\
            from app.base import NotAFactory, SessionHolder


            def check_all(urls):
                for url in urls:
                    holder = SessionHolder()
                    holder.session.head(url)
                    NotAFactory(url).session.head(url)
            """,
    })
    done = _tool(tmp_path, "check", "--no-cache", ".")
    assert done.stdout.splitlines() == [
        "./app/sync.py:6:18: HTP103 SessionHolder() created in a loop opens a new connection pool every "
        "iteration; create it once, before the loop",
        "Found 1 finding. 1 fixable with `flake8-http-pool fix --unsafe-fixes`.",
    ], done.stdout + done.stderr
    [record] = _records(tmp_path)
    assert (record["details"]["factory_path"], record["details"]["factory_line"]) == ("app/base.py", 5)
    # The promise holds: fix hoists the call above the loop of app/sync.py, and nothing is left to report.
    fixed = _tool(tmp_path, "fix", "--no-cache", "--unsafe-fixes", ".")
    assert fixed.returncode in (0, 1), fixed.stderr
    assert "    holder = SessionHolder()\n    for url in urls:" in (tmp_path / "app/sync.py").read_text()
    assert _tool(tmp_path, "check", "--no-cache", ".").stdout == ""


# -- fix: hoisted above the loop, one connection ---------------------------------------------------------------
_PROGRAM = """\
    import sys

    import requests
    from requests.adapters import HTTPAdapter


    def make_session():
        session = requests.Session()
        session.mount("http://", HTTPAdapter(max_retries=2))
        return session


    class Holder:
        \"\"\"One session, nothing else.\"\"\"

        def __init__(self, retries):
            self.retries = retries
            self.session = requests.Session()
            self.session.mount("http://", HTTPAdapter(max_retries=retries))


    def main(base):
        for n in range(5):
            session = make_session()
            print(session.get(f"{base}/item/{n}", timeout=10).json()["id"])
        for n in range(5, 10):
            holder = Holder(2)
            print(holder.session.get(f"{base}/item/{n}", timeout=10).json()["id"])


    main(sys.argv[1])
    """


def _run(path: Path, server: SafetyServer) -> Tuple[str, int]:
    before = server.connections
    done = subprocess.run([sys.executable, str(path), server.base], capture_output=True, text=True, timeout=120,
                          cwd=path.parent)
    assert done.returncode == 0, done.stderr
    return done.stdout, server.connections - before


def test_a_factory_called_in_a_loop_goes_from_one_connection_per_item_to_one(
        tmp_path: Path, server: SafetyServer) -> None:
    pytest.importorskip("requests")
    _write(tmp_path, {"legacy.py": _PROGRAM})
    path = tmp_path / "legacy.py"
    out_before, before = _run(path, server)
    assert [r["code"] for r in _records(tmp_path, "legacy.py")] == ["HTP103", "HTP103"]
    safe_only = _tool(tmp_path, "fix", "--no-cache", "--exit-zero", "legacy.py")
    assert safe_only.returncode == 0 and path.read_text() == textwrap.dedent(_PROGRAM), "unsafe fix ran unasked"
    fixed = _tool(tmp_path, "fix", "--no-cache", "--unsafe-fixes", "legacy.py")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    text = path.read_text()
    assert "    session = make_session()\n    for n in range(5):" in text, text
    assert "    holder = Holder(2)\n    for n in range(5, 10):" in text, text
    compile(text, str(path), "exec")
    out_after, after = _run(path, server)
    print(f"factory called in a loop: connections {before} -> {after}")
    assert out_after == out_before and out_before.split() == [str(n) for n in range(10)]
    assert before == 10 and after == 2  # one per loop: each of the two loops now shares one client
    assert _records(tmp_path, "legacy.py") == []
    again = _tool(tmp_path, "fix", "--no-cache", "--unsafe-fixes", "legacy.py")
    assert again.returncode == 0 and path.read_text() == text  # idempotent


def test_a_factory_called_with_a_loop_name_or_configured_in_the_loop_stays(tmp_path: Path) -> None:
    source = """\
        import requests


        class Holder:
            def __init__(self, token):
                self.session = requests.Session()
                self.session.headers["Authorization"] = token


        def per_token(tokens, url):
            for t in tokens:
                holder = Holder(t)
                holder.session.get(url)


        def reconfigured(tokens, url):
            for t in tokens:
                holder = Holder("x")
                holder.session.headers.update({"Authorization": t})
                holder.session.get(url)


        def closed(urls):
            for u in urls:
                holder = Holder("x")
                holder.session.get(u)
                holder.session.close()
        """
    _write(tmp_path, {"jobs.py": source})
    records = _records(tmp_path, "jobs.py")
    assert [(r["line"], r["code"], r["fix"]) for r in records] == [
        (12, "HTP103", None), (18, "HTP103", None), (25, "HTP103", None)]
    fixed = _tool(tmp_path, "fix", "--no-cache", "--unsafe-fixes", "--exit-zero", "jobs.py")
    assert fixed.returncode == 0, fixed.stderr
    assert (tmp_path / "jobs.py").read_text() == textwrap.dedent(source)


def test_a_factory_that_does_something_per_call_is_not_hoisted(tmp_path: Path) -> None:
    # One hoisted call would read one token, print once, count once: the program would behave differently.
    source = """\
        import itertools

        import requests

        TOKENS = itertools.cycle(["a", "b"])
        MADE = []


        def rotating():
            s = requests.Session()
            s.headers["Authorization"] = next(TOKENS)
            return s


        def noisy():
            print("new session")
            return requests.Session()


        def counted():
            s = requests.Session()
            MADE.append(s)
            return s


        def plain(token):
            s = requests.Session()
            s.headers["Authorization"] = token
            s.mount("https://", requests.adapters.HTTPAdapter(max_retries=3))
            return s


        def run(urls):
            for u in urls:
                a = rotating()
                a.get(u)
            for u in urls:
                b = noisy()
                b.get(u)
            for u in urls:
                d = plain("t")
                d.get(u)
            for u in urls:
                c = counted()  # keeps every client it makes: no factory
                c.get(u)
        """
    _write(tmp_path, {"jobs.py": source})
    records = _records(tmp_path, "jobs.py")
    assert [(r["line"], r["code"], r["details"]["factory_name"], r["fix"]) for r in records] == [
        (35, "HTP103", "rotating", None), (38, "HTP103", "noisy", None), (41, "HTP103", "plain", "unsafe")]


def test_a_factory_of_another_module_that_does_something_per_call_is_not_hoisted(tmp_path: Path) -> None:
    # The same judgement when the factory lives in another module: the project model reads it in its own
    # module's summary, and the caller's loop keeps the call of a factory that reads a token pool or prints.
    factories = """\
        import itertools

        import requests

        TOKENS = itertools.cycle(["a", "b"])


        def rotating():
            s = requests.Session()
            s.headers["Authorization"] = next(TOKENS)
            return s


        def noisy():
            print("new session")
            return requests.Session()


        def plain(token):
            s = requests.Session()
            s.headers["Authorization"] = token
            return s
        """
    jobs = """\
        from factories import noisy, plain, rotating


        def run(urls):
            for u in urls:
                a = rotating()
                a.get(u)
            for u in urls:
                b = noisy()
                b.get(u)
            for u in urls:
                d = plain("t")
                d.get(u)
        """
    _write(tmp_path, {"pyproject.toml": "", "factories.py": factories, "jobs.py": jobs})
    records = [r for r in _records(tmp_path, "factories.py", "jobs.py") if r["path"].endswith("jobs.py")]
    assert [(r["line"], r["code"], r["details"]["factory_name"], r["fix"]) for r in records] == [
        (6, "HTP103", "rotating", None), (9, "HTP103", "noisy", None), (12, "HTP103", "plain", "unsafe")]
    fixed = _tool(tmp_path, "fix", "--no-cache", "--unsafe-fixes", "--exit-zero", "factories.py", "jobs.py")
    assert fixed.returncode == 0, fixed.stderr
    after = (tmp_path / "jobs.py").read_text()
    assert "a = rotating()\n        a.get(u)" in after and "b = noisy()\n        b.get(u)" in after, after
    assert "d = plain(\"t\")\n    for u in urls:" in after, after
