"""The project model (project.py): module names from the layout, imports resolved, summaries, the solver, and
`check` end to end finding a hot function whose reason lies in another module."""

from __future__ import annotations

import ast
import json
import os
import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from flake8_http_pool.options import DEFAULT_OPTIONS
from flake8_http_pool.project import ModuleMap, Project, _pairs, gather, project_root, summarize


def write(root: Path, files: Dict[str, str]) -> List[str]:
    paths = []
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        paths.append(str(path))
    return paths


def parse_file(path: str) -> ast.Module:
    return ast.parse(Path(path).read_text(), filename=path)


def project_of(root: Path, files: Dict[str, str]) -> Project:
    """Every file summarized (no gate), for resolution tests."""
    paths = write(root, files)
    modules = ModuleMap(paths, project_root(paths))
    read: List[str] = []

    def load(path: str) -> Optional[dict]:
        read.append(path)
        return summarize(parse_file(path), DEFAULT_OPTIONS) if modules.known(path) else None

    project = Project(modules, {}, load)
    project.read = read  # type: ignore[attr-defined]
    return project


def seeds_of(root: Path, files: Dict[str, str]) -> Dict[str, Dict[str, Tuple[str, str, int, str]]]:
    """The seeds `check` would hand the engine, keyed by path from `root` with `/`."""
    paths = write(root, files)

    def read(path: str, options: object) -> Tuple[bytes, str]:
        data = Path(path).read_bytes()
        return data, data.decode("utf-8")

    found = gather(paths, lambda path: DEFAULT_OPTIONS, read, lambda text, path: ast.parse(text))
    return {os.path.relpath(path, root).replace(os.sep, "/"): dict(seeds.hot)
            for path, seeds in found.items() if seeds.hot}


def factories_of(root: Path, files: Dict[str, str]) -> Dict[str, dict]:
    """The factory calls `check` would hand the engine, keyed by path from `root` with `/`."""
    paths = write(root, files)

    def read(path: str, options: object) -> Tuple[bytes, str]:
        data = Path(path).read_bytes()
        return data, data.decode("utf-8")

    found = gather(paths, lambda path: DEFAULT_OPTIONS, read, lambda text, path: ast.parse(text))
    return {os.path.relpath(path, root).replace(os.sep, "/"): dict(seeds.factories)
            for path, seeds in found.items() if seeds.factories}


# -- module names ------------------------------------------------------------------------------------------
def test_module_names_from_the_layout(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    paths = write(tmp_path, {
        "app/__init__.py": "", "app/http.py": "", "app/sub/__init__.py": "", "app/sub/deep.py": "",
        "src/lib/__init__.py": "", "src/lib/core.py": "",
        "ns/part.py": "",  # a namespace package: no __init__.py
        "script.py": "", "tools/helper.py": "",
    })
    modules = ModuleMap(paths, project_root(paths))
    assert modules.root == str(tmp_path)
    names = {name: os.path.relpath(path, tmp_path) for name in ("app", "app.http", "app.sub.deep", "lib.core",
                                                                 "ns.part", "script", "tools.helper")
             for path in [modules.by_name(name)] if path is not None}
    assert names["app"] == os.path.join("app", "__init__.py")
    assert names["app.http"] == os.path.join("app", "http.py")
    assert names["app.sub.deep"] == os.path.join("app", "sub", "deep.py")
    assert names["lib.core"] == os.path.join("src", "lib", "core.py")  # the src/ layout
    assert names["ns.part"] == os.path.join("ns", "part.py")
    assert names["script"] == "script.py"
    assert names["tools.helper"] == os.path.join("tools", "helper.py")
    # A script's `import helper` finds the file beside it.
    assert modules.module("helper", str(tmp_path / "tools" / "run.py")) == str(tmp_path / "tools" / "helper.py")
    assert modules.module("requests") is None  # not in the project: unknown


# -- imports -----------------------------------------------------------------------------------------------
_LIBRARY = {
    "pyproject.toml": "",
    "app/__init__.py": "from .http import get_json\n",
    "app/http.py": ("import requests\ndef get_json(u):\n    return requests.get(u).json()\n"
                    "class Api:\n    def fetch(self, u):\n        return requests.get(u)\n"),
    "app/sub/__init__.py": "",
    "app/sub/deep.py": "from ..http import get_json as gj\nfrom .. import http\n",
    "app/star/__init__.py": "from ..http import *\n",
}


def test_every_import_form_resolves(tmp_path: Path) -> None:
    project = project_of(tmp_path, {**_LIBRARY, "user.py": """\
        import app.http
        import app.http as h
        from app import http
        from app import get_json
        from app.http import get_json as fetch, Api
        from app import star
        import requests

        def loop(urls):
            for u in urls:
                app.http.get_json(u)
                h.get_json(u)
                http.get_json(u)
                get_json(u)
                fetch(u)
                Api.fetch(None, u)
                star.get_json(u)
                requests.get(u)

        def local_import(urls):
            from app.http import get_json as inner
            for u in urls:
                inner(u)
        """})
    user = str(tmp_path / "user.py")
    http = str(tmp_path / "app" / "http.py")
    summary = project.summary(user)
    assert summary is not None
    resolved = [project.resolve(site[0], user) for site in summary["functions"]["loop"]["calls"]
                if site[2] == "call"]
    assert resolved == [(http, "get_json")] * 5 + [(http, "Api.fetch"), (http, "get_json"), None]
    # A call in a loop is an edge of the call graph, and a site that makes its function hot.
    sites = summary["functions"]["local_import"]["calls"]
    assert [(project.resolve(ref, user), kind) for ref, _, kind, _ in sites] == [
        ((http, "get_json"), "call"), ((http, "get_json"), "called in a loop")]


def test_relative_imports_resolve_by_level(tmp_path: Path) -> None:
    project = project_of(tmp_path, {**_LIBRARY, "app/sub/deep.py": """\
        from ..http import get_json as gj
        from .. import http
        from . import sibling

        def run(urls):
            for u in urls:
                gj(u)
                http.get_json(u)
                sibling.helper(u)
        """, "app/sub/sibling.py": "def helper(u):\n    pass\n"})
    deep = str(tmp_path / "app" / "sub" / "deep.py")
    http = str(tmp_path / "app" / "http.py")
    summary = project.summary(deep)
    assert summary is not None
    resolved = [project.resolve(site[0], deep) for site in summary["functions"]["run"]["calls"]
                if site[2] == "call"]
    sibling = str(tmp_path / "app" / "sub" / "sibling.py")
    assert resolved == [(http, "get_json"), (http, "get_json"), (sibling, "helper")]


def test_an_installed_package_is_never_read(tmp_path: Path) -> None:
    project = project_of(tmp_path, {"pyproject.toml": "", "main.py": """\
        import somepkg
        from requests import get

        def run(urls):
            for u in urls:
                somepkg.fetch(u)
                get(u)
        """})
    main = str(tmp_path / "main.py")
    summary = project.summary(main)
    assert summary is not None
    assert [project.resolve(site[0], main) for site in summary["functions"]["run"]["calls"]
                if site[2] == "call"] == [None, None]
    assert project.read == [main]  # type: ignore[attr-defined]


# -- summaries ---------------------------------------------------------------------------------------------
def test_summary_of_one_module_is_plain_data() -> None:
    tree = ast.parse(textwrap.dedent("""\
        import requests
        from .util import helper

        def get_json(url):
            return requests.get(url).json()

        def maybe(url):
            if url:
                return requests.get(url)

        def make_session():
            s = requests.Session()
            return s

        @app.get("/")
        def index():
            return helper(1)

        for item in items:
            helper(item)
        """))
    summary = summarize(tree, DEFAULT_OPTIONS)
    assert json.loads(json.dumps(summary)) == summary  # JSON-able: a later cache stores it as is
    assert pickle.loads(pickle.dumps(summary)) == summary
    functions = summary["functions"]
    assert functions["get_json"]["wrapper"] and functions["get_json"]["unpooled"]
    assert functions["maybe"]["unpooled"] and not functions["maybe"]["wrapper"]  # not on every run
    assert functions["make_session"]["factory"] == "requests.Session" and functions["get_json"]["factory"] is None
    assert functions["index"]["hot"] == ["a request handler, @app.get", 15]
    assert functions["index"]["calls"] == [[["import", ".util.helper", []], 17, "call", 11]]
    assert summary["module_calls"] == [[["import", ".util.helper", []], 20, "called in a loop", 4]]
    assert summary["defs"]["get_json"] == "get_json"


# -- the solver --------------------------------------------------------------------------------------------
_WRAPPER = "import requests\n\ndef get_json(url):\n    return requests.get(url).json()\n"


def test_wrapper_called_in_a_loop_in_another_module(tmp_path: Path) -> None:
    seeds = seeds_of(tmp_path, {"pyproject.toml": "", "app/__init__.py": "", "app/http.py": _WRAPPER,
                                "app/sync.py": ("from .http import get_json\n\n"
                                                "def sync(us):\n    for u in us:\n        get_json(u)\n")})
    assert seeds == {"app/http.py": {"get_json": ("called in a loop at app/sync.py:5", "app/sync.py", 5,
                                                  str(tmp_path / "app" / "sync.py"))}}


def test_two_levels_of_wrappers(tmp_path: Path) -> None:
    seeds = seeds_of(tmp_path, {"pyproject.toml": "", "http.py": _WRAPPER,
                                "api.py": "from http import get_json\n\ndef user(i):\n    return get_json(i)\n",
                                "main.py": "import api\n\nfor i in range(9):\n    api.user(i)\n"})
    assert seeds["http.py"]["get_json"][:3] == ("called from user(), called in a loop at main.py:4", "main.py", 4)
    assert seeds["api.py"]["user"][:3] == ("called in a loop at main.py:4", "main.py", 4)


def test_handler_registered_in_main_defined_in_modules(tmp_path: Path) -> None:
    seeds = seeds_of(tmp_path, {"pyproject.toml": "", "modules/__init__.py": "",
                                "modules/x.py": ("import requests\n\n"
                                                 "def handler(r):\n    return requests.post('u', data=r)\n"),
                                "main.py": "from modules import x\n\nrouter.add_get('/x', x.handler)\n"})
    assert seeds["modules/x.py"]["handler"][:3] == ("registered with add_get() at main.py:3", "main.py", 3)


def test_handler_in_another_module_makes_its_wrapper_hot(tmp_path: Path) -> None:
    seeds = seeds_of(tmp_path, {"pyproject.toml": "", "util.py": _WRAPPER,
                                "views.py": ("from util import get_json\n\n"
                                             "@app.route('/')\ndef index():\n    return get_json('u')\n")})
    assert seeds["util.py"]["get_json"][:3] == ("called from index(), a request handler, @app.route at views.py:3",
                                                "views.py", 3)


def test_mapped_and_submitted_across_modules(tmp_path: Path) -> None:
    seeds = seeds_of(tmp_path, {"pyproject.toml": "", "util.py": _WRAPPER, "run.py": """\
        from util import get_json
        def go(urls):
            with ThreadPoolExecutor() as pool:
                list(pool.map(get_json, urls))
        """})
    assert seeds["util.py"]["get_json"][0] == "mapped over items at run.py:4"


def test_negatives(tmp_path: Path) -> None:
    seeds = seeds_of(tmp_path, {
        "pyproject.toml": "", "util.py": _WRAPPER,
        # called once at module level: runs once
        "once.py": "from util import get_json\n\nget_json('u')\n",
        # the same name in an unrelated module, looped over: not util's
        "other.py": "def get_json(u):\n    return u\n",
        "loops.py": "from other import get_json\n\nfor u in us:\n    get_json(u)\n",
        # a function of an installed package: unknown
        "pkg_user.py": "import installed\n\nfor u in us:\n    installed.get_json(u)\n",
    })
    # other.py's get_json (looped over) makes no request: the gate never even parses other.py.
    assert seeds == {}


# -- `check` end to end ------------------------------------------------------------------------------------
def run_check(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "--isolated", "--preview", *args, "."],
                          cwd=root, capture_output=True, text=True, timeout=120)


def test_check_reports_the_place_in_another_module(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "", "app/__init__.py": "", "app/http.py": _WRAPPER, "app/sync.py": """\
        from app.http import get_json

        def sync(urls):
            return [get_json(u) for u in urls]
        """})
    done = run_check(tmp_path)
    assert done.returncode == 1, done.stderr
    assert ("app/http.py:4:12: HTP102 requests.get() in get_json(), which runs many times "
            "(called in a loop at app/sync.py:4), opens a new connection on every call") in done.stdout
    [record] = json.loads(run_check(tmp_path, "--format", "json").stdout)
    assert (record["details"]["hot_path"], record["details"]["hot_line"]) == ("app/sync.py", 4)
    sarif = json.loads(run_check(tmp_path, "--format", "sarif").stdout)
    [result] = sarif["runs"][0]["results"]
    [related] = result["relatedLocations"]
    assert related["physicalLocation"]["artifactLocation"]["uri"].endswith("app/sync.py")
    assert related["physicalLocation"]["region"] == {"startLine": 4}


_LOOP_OVER_REQUESTS = "import requests\n\n\ndef collect(urls):\n    return [requests.get(u) for u in urls]\n"
_OWN_REQUESTS = "import urllib.request\n\n\ndef get(url):\n    return urllib.request.urlopen(url).read()\n"


@pytest.mark.parametrize("layout", [
    {"tool.py": _LOOP_OVER_REQUESTS, "requests.py": _OWN_REQUESTS},  # a script beside the project's requests.py
    {"app/__init__.py": "", "app/tool.py": _LOOP_OVER_REQUESTS, "requests/__init__.py": _OWN_REQUESTS},
    {"scripts/tool.py": _LOOP_OVER_REQUESTS, "requests.py": _OWN_REQUESTS},  # a script below the root
    {"src/app/__init__.py": "", "src/app/tool.py": _LOOP_OVER_REQUESTS, "src/requests.py": _OWN_REQUESTS},
])
def test_a_project_module_named_like_the_library_is_the_projects(tmp_path: Path, layout: Dict[str, str]) -> None:
    write(tmp_path, {"pyproject.toml": "", **layout})
    done = run_check(tmp_path)
    assert "HTP101" not in done.stdout, done.stdout  # requests.get here is the project's function
    assert "HTP102 urllib.request.urlopen() in get(), which runs many times" in done.stdout, done.stdout + done.stderr


def test_a_module_named_like_the_library_inside_a_package_shadows_nothing(tmp_path: Path) -> None:
    # Python 3 imports are absolute: in a package, `import requests` is the library, not app/requests.py.
    write(tmp_path, {"pyproject.toml": "", "app/__init__.py": "", "app/tool.py": _LOOP_OVER_REQUESTS,
                     "app/requests.py": _OWN_REQUESTS})
    done = run_check(tmp_path)
    assert "./app/tool.py:5:13: HTP101" in done.stdout, done.stdout + done.stderr


def test_check_client_per_request_from_another_module(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "", "client.py": """\
        import httpx

        def fetch(url):
            with httpx.Client() as client:
                return client.get(url)
        """, "jobs.py": "import client\n\nfor u in urls:\n    client.fetch(u)\n"})
    done = run_check(tmp_path)
    assert "client.py:4:10: HTP104 httpx.Client() created in fetch(), which runs many times " \
           "(called in a loop at jobs.py:4)" in done.stdout, done.stdout + done.stderr


def test_check_without_the_loop_reports_nothing(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "", "util.py": _WRAPPER,
                     "main.py": "from util import get_json\n\nget_json('u')\n"})
    done = run_check(tmp_path)
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr


@pytest.mark.parametrize("cache", ["--no-cache", "cold", "warm"])
def test_a_module_that_does_not_parse_is_reported_once(tmp_path: Path, cache: str) -> None:
    """broken.py names no HTTP library, so its own check passes it over unparsed; but it imports the wrapper,
    so the project model reads it (phase 2 of the gate) and finds it does not parse: reported once, on every
    run (a warm run takes the solve from the cache, and still says it)."""
    write(tmp_path, {"pyproject.toml": "", "util.py": _WRAPPER, "broken.py": "from util import get_json\nget_json(\n",
                     "main.py": "from util import get_json\n\nfor u in us:\n    get_json(u)\n"})
    if cache == "warm":
        run_check(tmp_path)
    done = run_check(tmp_path, *(["--no-cache"] if cache == "--no-cache" else []))
    assert done.returncode == 2, done.stdout + done.stderr
    assert (done.stdout + done.stderr).count("broken.py") == 1, done.stdout + done.stderr
    assert re.search(r"^\./broken\.py:2:\d+: E999 SyntaxError: ", done.stdout, re.M), done.stdout
    assert "(called in a loop at main.py:4)" in done.stdout


def _gather_logging_parses(root: Path, paths: List[str]) -> Tuple[Dict[str, object], List[str]]:
    """The seeds of `paths`, and the files the gate parsed (paths from `root`)."""
    parsed: List[str] = []

    def read(path: str, options: object) -> Tuple[bytes, str]:
        data = Path(path).read_bytes()
        return data, data.decode("utf-8")

    def parse(text: str, path: str) -> ast.Module:
        parsed.append(os.path.relpath(path, root))
        return ast.parse(text)

    return gather(paths, lambda path: DEFAULT_OPTIONS, read, parse), parsed


def test_two_phase_gate_parses_only_what_can_matter(tmp_path: Path) -> None:
    paths = write(tmp_path, {
        "pyproject.toml": "", "util.py": _WRAPPER + "\ndef pure(x):\n    return x\n",
        "loops.py": "from util import get_json\n\nfor u in us:\n    get_json(u)\n",
        "unrelated.py": "import util\n\nfor x in xs:\n    util.pure(x)\n",  # names only a function that cannot matter
        "pkg/__init__.py": "from .inner import *\n", "pkg/inner.py": "from util import get_json as get_json\n",
        "star_user.py": "from pkg import get_json\n\ndef run(us):\n    return list(map(get_json, us))\n",
    })
    seeds, parsed = _gather_logging_parses(tmp_path, paths)
    assert "unrelated.py" not in parsed
    assert sorted(parsed) == ["loops.py", "pkg/__init__.py", "pkg/inner.py", "star_user.py", "util.py"]
    # The first reason met wins: loops.py is summarized before star_user.py.
    assert seeds[str(tmp_path / "util.py")].hot["get_json"][0] == "called in a loop at loops.py:4"


@pytest.mark.parametrize("source", [
    "from app.http import get_json\n",
    "from .http import (\n    other,\n    get_json,\n)\n",
    "from app import http\n\nhttp.get_json(u)\n",
    "import app.http\n\napp.http.get_json(u)\n",
    "import app\n\napp . http . get_json(u)\n",
    "import app.http as h\n\nh.get_json(u)\n",
    "from app import http as h\n\nh.Api()\n",
    "def run():\n    from app.http import Api\n    return Api()\n",
    "from .http import *\n",
])
def test_phase_two_finds_every_spelling_of_a_reference(source: str) -> None:
    needles = _pairs({"get_json": {"/p/app/http.py"}, "Api": {"/p/app/http.py"}}, {"/p/app/http.py": {"http"}},
                     {"/p/app/http.py": {"app"}})
    assert needles.match(source.encode())


@pytest.mark.parametrize("source", [
    "def get_json(u):\n    return u\n",  # the same name, no import of its module
    "from other import get_json\n",  # the same name from another module
    "import http.client\n\nhttp.client.get_json\n",  # the token's module imported, another name after it
    "from app.http import other\n\nx.get_json(u)\n",  # the module imported, the name on another object
    "from app import http\n\nmyhttp.get_json(u)\n",  # a longer word ending in the token
    "# from app.http import get_json\nx = 1\n",  # a comment is not an import statement
])
def test_phase_two_passes_over_lookalikes(source: str) -> None:
    needles = _pairs({"get_json": {"/p/app/http.py"}, "Api": {"/p/app/http.py"}}, {"/p/app/http.py": {"http"}},
                     {"/p/app/http.py": {"app"}})
    assert not needles.match(source.encode())


def test_phase_two_searches_a_method_by_its_class_and_a_nested_def_nowhere(tmp_path: Path) -> None:
    paths = write(tmp_path, {
        "pyproject.toml": "",
        "api.py": ("import requests\n\nclass Api:\n    def fetch(self, u):\n        return requests.get(u)\n\n"
                    "def outer(us):\n    def inner(u):\n        return requests.get(u)\n    return inner\n"),
        "by_class.py": "from api import Api\n\nclient = Api()\nfor u in us:\n    client.fetch(u)\n",
        "by_method.py": "import api\n\nfor u in us:\n    thing.fetch(u)\n",  # names the method only
        "by_nested.py": "import api\n\nfor u in us:\n    inner(u)\n",  # a nested def is reached from nowhere
    })
    seeds, parsed = _gather_logging_parses(tmp_path, paths)
    assert sorted(parsed) == ["api.py", "by_class.py"]
    assert seeds[str(tmp_path / "api.py")].hot["Api.fetch"][0] == "called in a loop at by_class.py:5"


def test_star_reexport_through_a_package(tmp_path: Path) -> None:
    seeds = seeds_of(tmp_path, {
        "pyproject.toml": "", "pkg/__init__.py": "from .http import *\n", "pkg/http.py": _WRAPPER,
        "main.py": "import pkg\n\ndef run(us):\n    return list(map(pkg.get_json, us))\n",
    })
    assert seeds["pkg/http.py"]["get_json"][0] == "mapped over items at main.py:4"


_FACTORY = "import requests\n\ndef make_session():\n    s = requests.Session()\n    return s\n"


def test_a_factory_is_not_made_hot_from_another_module(tmp_path: Path) -> None:
    # Its call sites are where RULES.md reports a factory run many times (below), not its own constructor.
    seeds = seeds_of(tmp_path, {"pyproject.toml": "", "net.py": _FACTORY,
                                "jobs.py": ("from net import make_session\n\n"
                                            "sessions = [make_session() for _ in range(3)]\n")})
    assert seeds == {}


def test_factory_calls_in_other_modules_are_handed_to_the_engine(tmp_path: Path) -> None:
    factories = factories_of(tmp_path, {"pyproject.toml": "", "net.py": _FACTORY, "jobs.py": """\
        import net

        def run(urls):
            for u in urls:
                net.make_session().get(u)
        once = net.make_session()
        """})
    assert factories == {"jobs.py": {(5, 8): ("requests.Session", "make_session", "net.py", 3,
                                              str(tmp_path / "net.py"), True)}}


def test_a_partial_of_a_client_constructor_is_a_factory_other_modules_call(tmp_path: Path) -> None:
    factories = factories_of(tmp_path, {"pyproject.toml": "", "net.py": """\
        import functools
        from functools import partial

        import httpx
        import requests

        make = functools.partial(requests.Session)
        client = partial(httpx.Client, timeout=5)
        shared = partial(httpx.Client, transport=TRANSPORT)  # hands on a pool made elsewhere: no new one
        shout = partial(print, "!")
        rebound = partial(requests.Session)
        rebound = None
        """, "jobs.py": """\
        import net
        from net import client, make, rebound, shared, shout

        for u in urls:
            make().get(u)
            net.client().get(u)
            shared().get(u)
            shout(u)
            rebound()
        """})
    net = str(tmp_path / "net.py")
    assert factories == {"jobs.py": {(5, 4): ("requests.Session", "make", "net.py", 7, net, True),
                                     (6, 4): ("httpx.Client", "client", "net.py", 8, net, True)}}


def test_a_cross_module_finding_promises_the_fix_that_fix_makes(tmp_path: Path) -> None:
    # check counts a finding as fixable only when `fix` fixes it: a wrapper of another module called in a loop
    # gets a shared session in the wrapper's module (unsafe: the wrapper's callers then share its cookies).
    write(tmp_path, {"pyproject.toml": "", "util.py": _WRAPPER,
                     "main.py": "from util import get_json\n\nfor u in us:\n    get_json(u)\n"})
    [record] = json.loads(run_check(tmp_path, "--format", "json").stdout)
    assert record["code"] == "HTP102" and record["fix"] is not None
    assert record["fix"] == "unsafe", record
    assert "1 fixable with `flake8-http-pool fix --unsafe-fixes`" in run_check(tmp_path).stdout
    fixed = subprocess.run([sys.executable, "-m", "flake8_http_pool", "fix", "--unsafe-fixes", "."], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert fixed.returncode in (0, 1), fixed.stderr
    assert "requests.Session()" in (tmp_path / "util.py").read_text()
    assert json.loads(run_check(tmp_path, "--format", "json").stdout) == []


def test_the_modules_own_reason_wins(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "", "util.py": _WRAPPER + "\n\nfor u in us:\n    get_json(u)\n",
                     "main.py": "from util import get_json\n\nfor u in us:\n    get_json(u)\n"})
    done = run_check(tmp_path)
    assert "which runs many times (called in a loop), opens" in done.stdout, done.stdout + done.stderr
    [record] = json.loads(run_check(tmp_path, "--format", "json").stdout)
    assert "hot_path" not in record["details"] and record["fix"] == "unsafe"


def test_one_worker_and_many_give_the_same_report(tmp_path: Path) -> None:
    files = {"pyproject.toml": "", "pkg/__init__.py": "", "pkg/http.py": _WRAPPER}
    for i in range(40):  # enough files for the worker pool to start
        files[f"pkg/job{i}.py"] = (f"from .http import get_json\n\n"
                                   f"def job{i}(us):\n    return [get_json(u) for u in us]\n")
    write(tmp_path, files)
    one, many = run_check(tmp_path, "--jobs", "1"), run_check(tmp_path, "--jobs", "2")
    assert one.stdout == many.stdout
    assert "(called in a loop at pkg/job0.py:4)" in one.stdout, one.stdout + one.stderr


def test_check_reports_a_factory_of_another_module_at_its_calls(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": "", "net.py": _FACTORY, "jobs.py": """\
        from net import make_session

        SHARED = make_session()


        def run(urls):
            for u in urls:
                make_session().get(u)


        def keep(hosts):
            sessions = {}
            for h in hosts:
                sessions[h] = make_session()
            return sessions


        @app.route("/")
        def index():
            s = make_session()
            return s.get("http://x").text
        """})
    done = run_check(tmp_path)
    assert done.stdout.splitlines() == [
        "./jobs.py:8:9: HTP103 make_session() created in a loop opens a new connection pool every iteration; "
        "create it once, before the loop",
        "./jobs.py:20:9: HTP104 make_session() created in index(), which runs many times (a request handler, "
        "@app.route), opens new connections on every call; create one client in the caller and pass it in",
        "Found 2 findings.",
    ], done.stdout + done.stderr
    records = json.loads(run_check(tmp_path, "--format", "json").stdout)
    assert [(r["details"]["factory_path"], r["details"]["factory_line"], r["fix"]) for r in records] == [
        ("net.py", 3, None), ("net.py", 3, None)]


def test_methods_through_instances_and_base_classes_of_other_modules(tmp_path: Path) -> None:
    project = project_of(tmp_path, {**_LIBRARY, "app/use.py": """\
        from app.http import Api
        from . import http


        class Mine(http.Api):
            def all(self, us):
                for u in us:
                    self.fetch(u)

            def own(self):
                return self.missing()


        def run(us):
            api = Api()
            for u in us:
                api.fetch(u)
        """})
    use = str(tmp_path / "app" / "use.py")
    target = (str(tmp_path / "app" / "http.py"), "Api.fetch")
    summary = project.summary(use)
    assert summary is not None
    functions = summary["functions"]
    assert [project.resolve(site[0], use) for site in functions["Mine.all"]["calls"]
            if site[2] == "call"] == [target]
    assert [project.resolve(site[0], use) for site in functions["Mine.own"]["calls"]] == [None]
    # `Api()` names no __init__ of the project; `api.fetch` is the class's method.
    assert [project.resolve(site[0], use) for site in functions["run"]["calls"]
            if site[2] == "call"] == [None, target]


def test_a_project_nested_in_a_bigger_tree_names_its_modules_from_its_folders(tmp_path: Path) -> None:
    # The root is the outer pyproject.toml; the inner project has no __init__.py (namespace folders).
    seeds = seeds_of(tmp_path, {
        "pyproject.toml": "", "fixtures/shop/app/http.py": _WRAPPER,
        "fixtures/shop/app/sync.py": "from app.http import get_json\n\nfor u in us:\n    get_json(u)\n",
    })
    assert seeds["fixtures/shop/app/http.py"]["get_json"][0] == "called in a loop at fixtures/shop/app/sync.py:4"


def test_a_chain_through_modules_that_import_no_library(tmp_path: Path) -> None:
    # loop.py -> middle.py -> util.py: only util.py imports requests; the gate must still reach loop.py.
    seeds = seeds_of(tmp_path, {
        "pyproject.toml": "", "util.py": _WRAPPER,
        "middle.py": "import util\n\ndef user(i):\n    return util.get_json(i)\n",
        "zloop.py": "from middle import user\n\nfor i in range(3):\n    user(i)\n",
    })
    assert seeds["util.py"]["get_json"][0] == "called from user(), called in a loop at zloop.py:4"


def test_the_hot_decorators_option_of_the_config_reaches_other_modules(tmp_path: Path) -> None:
    write(tmp_path, {"pyproject.toml": '[tool.flake8-http-pool]\nhot-decorators = ["endpoint"]\n', "util.py": _WRAPPER,
                     "views.py": ("from util import get_json\n\n"
                                  "@myframework.endpoint\ndef index():\n    return get_json('u')\n")})
    done = subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "--preview", "."], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert ("(called from index(), decorated with @myframework.endpoint at views.py:3)" in done.stdout), \
        done.stdout + done.stderr


def test_the_project_model_runs_by_default_and_preview_is_a_no_op(tmp_path: Path) -> None:
    """On by default: check sees the project as one program; `--preview` and `preview = true` are still accepted
    (they asked for it when it was not the default) and change nothing."""
    files = {"util.py": _WRAPPER, "loop.py": "from util import get_json\n\nfor i in range(3):\n    get_json(i)\n"}
    write(tmp_path, {"pyproject.toml": "", **files})
    outputs = []
    for extra, config in (([], ""), (["--preview"], ""), ([], "[tool.flake8-http-pool]\npreview = true\n")):
        write(tmp_path, {"pyproject.toml": config})
        done = subprocess.run([sys.executable, "-m", "flake8_http_pool", "check", "-q", "--no-cache", *extra, "."],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and "called in a loop at loop.py:4" in done.stdout, done.stdout + done.stderr
        assert done.stderr == ""
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
