"""HTP403, HTP201 and HTP203 across modules (issue 12): a sync helper that blocks, called from `async def`; a
body handed to a function that writes it; `self.session` set by a base class of another module. Through the
real command line (`check --preview`, where the project model runs today) and, for the in-module parts, flake8.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, Set, Tuple

import pytest

from project_expectations import PROJECTS, project_root, read_project

_LINE = re.compile(r"^(?P<path>.*?):(?P<line>\d+):(?P<col>\d+): (?P<code>HTP\d{3}) (?P<message>.*)$")

Found = Dict[Tuple[str, int, str], str]  # (path from the root with `/`, line, code) -> message


def write(root: Path, files: Dict[str, str]) -> None:
    (root / "pyproject.toml").write_text("[project]\nname = 'app'\n")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8_http_pool", *args], cwd=root, capture_output=True,
                          text=True, timeout=300, check=False)


def parse(stdout: str) -> Found:
    found: Found = {}
    for line in stdout.splitlines():
        match = _LINE.match(line)
        if match:
            path = match["path"].replace("\\", "/")
            path = path[2:] if path.startswith("./") else path
            found[(path, int(match["line"]), match["code"])] = match["message"]
    return found


def check(root: Path, *codes: str) -> Found:
    result = run(root, "check", "--isolated", "--preview", "--select", ",".join(codes), ".")
    assert result.returncode in (0, 1), result.stderr
    assert not result.stderr.strip(), result.stderr
    return parse(result.stdout)


def flake8(root: Path, path: str) -> Found:
    result = subprocess.run([sys.executable, "-m", "flake8", "--isolated", "--select", "HTP", path], cwd=root,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode in (0, 1), result.stderr
    return parse(result.stdout)


def line_of(root: Path, path: str, marker: str) -> int:
    for number, text in enumerate((root / path).read_text().splitlines(), 1):
        if marker in text:
            return number
    raise AssertionError(f"{marker!r} not in {path}")


# -- HTP403 through synchronous helpers ------------------------------------------------------------------
HELPERS = {
    "app/__init__.py": "",
    "app/http.py": """\
        import requests

        _SESSION = requests.Session()


        def get_json(url):
            return requests.get(url, timeout=5).json()


        def via_session(url):
            return _SESSION.get(url).text


        def maybe(url, cached=None):
            if cached is not None:
                return cached
            return requests.get(url, timeout=5).json()


        def sometimes(url, flag):
            if flag:
                return requests.get(url, timeout=5)
            return None


        async def aget(url):
            return url
        """,
    # No HTTP library named here: the chain crosses a module that only calls the helper.
    "app/chain.py": """\
        from app.http import get_json


        def stock(sku):
            return get_json(f"https://stock.example.com/{sku}")["count"]
        """,
    "app/cache.py": """\
        def get_json(url):
            return {}
        """,
    "app/main.py": """\
        import asyncio

        from app import cache, http
        from app.chain import stock
        from app.http import aget, maybe, sometimes, via_session


        async def handler(url):
            a = http.get_json(url)  # mark-direct
            b = stock("sku")  # mark-chain
            c = via_session(url)  # mark-session
            d = maybe(url)
            e = sometimes(url, True)
            f = cache.get_json(url)
            g = await asyncio.to_thread(http.get_json, url)
            h = await asyncio.get_running_loop().run_in_executor(None, http.get_json, url)
            i = await aget(url)

            def later():
                return http.get_json(url)

            j = lambda: http.get_json(url)
            return a, b, c, d, e, f, g, h, i, later, j


        def sync_caller(url):
            return http.get_json(url)
        """,
}


def test_htp403_through_helpers_of_other_modules(tmp_path: Path) -> None:
    write(tmp_path, HELPERS)
    found = check(tmp_path, "HTP403")
    main = "app/main.py"
    expected = {(main, line_of(tmp_path, main, f"mark-{m}"), "HTP403") for m in ("direct", "chain", "session")}
    assert set(found) == expected
    direct = found[(main, line_of(tmp_path, main, "mark-direct"), "HTP403")]
    get_line = line_of(tmp_path, "app/http.py", "requests.get(url, timeout=5).json()")
    assert f"blocking http.get_json(), which calls requests.get() (app/http.py:{get_line})" in direct
    assert "await asyncio.to_thread(http.get_json, ...)" in direct
    chain = found[(main, line_of(tmp_path, main, "mark-chain"), "HTP403")]
    assert f"blocking stock(), which calls requests.get() (app/http.py:{get_line})" in chain
    session = found[(main, line_of(tmp_path, main, "mark-session"), "HTP403")]
    assert "which calls requests.Session.get() (app/http.py:" in session


def test_htp403_through_helpers_json_names_the_blocking_call(tmp_path: Path) -> None:
    import json

    write(tmp_path, HELPERS)
    result = run(tmp_path, "check", "--isolated", "--preview", "--select", "HTP403", "--format", "json", ".")
    records = [r for r in json.loads(result.stdout) if r.get("code") == "HTP403"]
    assert records, result.stdout
    details = [r["details"] for r in records]
    assert all(d["blocking_path"] == "app/http.py" for d in details)
    assert {d["helper"] for d in details} == {"get_json", "stock", "via_session"}
    sarif = json.loads(run(tmp_path, "check", "--isolated", "--preview", "--select", "HTP403", "--format", "sarif",
                           ".").stdout)
    related = [r["relatedLocations"] for r in sarif["runs"][0]["results"]]
    assert len(related) == 3
    assert {place[0]["physicalLocation"]["artifactLocation"]["uri"] for place in related} == {"app/http.py"}


def test_htp403_through_helpers_in_one_module_through_flake8(tmp_path: Path) -> None:
    write(tmp_path, {"one.py": """\
        import asyncio
        import functools

        import requests


        def get_json(url):
            return requests.get(url).json()


        def twice(url):
            return get_json(url)["x"]


        def early(url, cached=None):
            if cached:
                return cached
            return requests.get(url).json()


        @functools.lru_cache()
        def cached(url):
            return requests.get(url)


        def pages(url):
            yield requests.get(url)


        def done(url):
            requests.get(url)
            yield


        async def ahelper(url):
            return url


        async def handler(url):
            a = get_json(url)  # mark-a
            b = twice(url)  # mark-b
            c = early(url)
            d = cached(url)
            e = list(pages(url)) + list(done(url))
            f = await asyncio.to_thread(get_json, url)
            g = await ahelper(url)

            def inner():
                return get_json(url)

            return a, b, c, d, e, f, g, inner
        """})
    expected = {("one.py", line_of(tmp_path, "one.py", f"mark-{m}"), "HTP403") for m in ("a", "b")}
    assert set(flake8(tmp_path, "one.py")) == expected
    assert set(check(tmp_path, "HTP403")) == expected
    message = flake8(tmp_path, "one.py")[("one.py", line_of(tmp_path, "one.py", "mark-b"), "HTP403")]
    assert "blocking twice(), which calls requests.get() (line 8) on every run" in message


# -- HTP201 through writer functions ---------------------------------------------------------------------
WRITERS = {
    "app/__init__.py": "",
    # No HTTP library here: the gate leaves this module out; the model reads it because a body is handed in.
    "app/storage.py": """\
        from pathlib import Path

        ROOT = Path("/tmp/downloads")


        def save(name, data):
            with open(ROOT / name, "wb") as handle:
                handle.write(data)


        def save_path(name, data):
            Path(name).write_bytes(data)


        def save_cover(response, name="cover.jpg"):
            (ROOT / name).write_bytes(response.content)


        def save_name(name, data):
            open(name, "wb").write(name.encode())


        def log_size(data):
            print(len(data))


        class Store:
            def put(self, name, data):
                open(ROOT / name, "wb").write(data)
        """,
    "app/fetch.py": """\
        import requests

        from app import storage
        from app.storage import Store, save


        def a(url):
            response = requests.get(url, timeout=60)  # mark-a
            save("a.bin", response.content)


        def b(url):
            response = requests.get(url, timeout=60)  # mark-b
            storage.save_path(name="b.bin", data=response.content)


        def c(url):
            response = requests.get(url, timeout=60)  # mark-c
            storage.save_cover(response)


        def d(url):
            store = Store()
            store.put("d.bin", requests.get(url, timeout=60).content)  # mark-d


        def other_parameter(url):
            response = requests.get(url, timeout=60)
            storage.save_name(response.text, b"")


        def measured(url):
            response = requests.get(url, timeout=60)
            storage.log_size(response.content)


        def streamed(url):
            with requests.get(url, stream=True, timeout=60) as response:
                storage.save("s.bin", b"".join(response.iter_content(65536)))
        """,
}


def test_htp201_through_writers_of_other_modules(tmp_path: Path) -> None:
    write(tmp_path, WRITERS)
    found = check(tmp_path, "HTP201")
    fetch = "app/fetch.py"
    assert set(found) == {(fetch, line_of(tmp_path, fetch, f"mark-{m}"), "HTP201") for m in "abcd"}
    message = found[(fetch, line_of(tmp_path, fetch, "mark-a"), "HTP201")]
    save_line = line_of(tmp_path, "app/storage.py", "def save(")
    assert f"it is handed to save() (app/storage.py:{save_line}), which writes it to a file" in message
    assert "Store.put() (app/storage.py:" in found[(fetch, line_of(tmp_path, fetch, "mark-d"), "HTP201")]


def test_htp201_handed_to_a_writer_is_report_only(tmp_path: Path) -> None:
    """The body is written in another function: `fix` has nothing to rewrite at the request, and does not."""
    write(tmp_path, {"one.py": """\
        import requests


        def save(path, data):
            open(path, "wb").write(data)


        def fetch(url):
            response = requests.get(url)  # mark
            save("x.bin", response.content)
        """})
    expected = {("one.py", line_of(tmp_path, "one.py", "mark"), "HTP201")}
    assert set(flake8(tmp_path, "one.py")) == expected
    assert set(check(tmp_path, "HTP201")) == expected
    before = (tmp_path / "one.py").read_text()
    result = run(tmp_path, "fix", "--isolated", "--unsafe-fixes", ".")
    assert "0 changed" in result.stdout + result.stderr
    assert "no fix left (HTP201: 1)" in result.stdout + result.stderr
    assert (tmp_path / "one.py").read_text() == before


# -- clients inherited from base classes of other modules ------------------------------------------------
BASES = {
    "app/__init__.py": "",
    "app/base.py": """\
        import requests


        class BaseClient:
            def __init__(self, url):
                self.url = url
                self.session = requests.Session()
        """,
    # A class of the same name in an unrelated module, holding no client.
    "app/other.py": """\
        class BaseClient:
            def __init__(self, url):
                self.url = url
                self.session = make_something()
        """,
    "app/github.py": """\
        from app.base import BaseClient


        class GitHub(BaseClient):
            def archive(self, repo, path):
                response = self.session.get(f"{self.url}/{repo}", stream=True)  # mark-203
                with open(path, "wb") as handle:
                    for chunk in response.iter_content(chunk_size=65536):
                        handle.write(chunk)

            def closed(self, repo, path):
                with self.session.get(f"{self.url}/{repo}", stream=True) as response:
                    return response.status_code

            async def summary(self):
                return self.session.get(f"{self.url}/summary").json()  # mark-403


        class Deeper(GitHub):
            async def status(self):
                return self.session.get(self.url).status_code  # mark-deeper
        """,
    "app/lookalike.py": """\
        from app.other import BaseClient
        from installed_sdk import SdkClient


        class NotPooled(BaseClient):
            def archive(self, repo):
                response = self.session.get(repo, stream=True)
                return len(response.content)

            async def summary(self):
                return self.session.get(self.url)


        class FromPackage(SdkClient):
            def archive(self, repo):
                response = self.session.get(repo, stream=True)
                return len(response.content)

            async def summary(self):
                return self.session.get(self.url)
        """,
    "app/own.py": """\
        from app.base import BaseClient


        class OwnSession(BaseClient):
            def __init__(self, url, session):
                super().__init__(url)
                self.session = session

            async def summary(self):
                return self.session.get(self.url)
        """,
}


def test_clients_inherited_from_a_base_class_of_another_module(tmp_path: Path) -> None:
    write(tmp_path, BASES)
    found = check(tmp_path, "HTP201", "HTP203", "HTP403")
    github = "app/github.py"
    assert set(found) == {
        (github, line_of(tmp_path, github, "mark-203"), "HTP203"),
        (github, line_of(tmp_path, github, "mark-403"), "HTP403"),
        (github, line_of(tmp_path, github, "mark-deeper"), "HTP403"),
    }
    assert "requests.Session.get()" in found[(github, line_of(tmp_path, github, "mark-203"), "HTP203")]


# -- the fixture projects --------------------------------------------------------------------------------
# The xfail lines of these rules that the project model finds (under --preview until it is the default, when
# tests/test_fixture_projects.py flips them).
_MINE = ("HTP201", "HTP203", "HTP403")


@pytest.mark.parametrize("name", ["async_service", "downloader", "api_clients", "discord_bot"])
def test_fixture_project_xfails_found_under_preview(name: str, tmp_path: Path) -> None:
    shutil.copytree(PROJECTS / name, tmp_path / name)
    root = project_root(tmp_path / name)
    expectations = read_project(root)
    wanted: Set[Tuple[str, int, str]] = set()
    for path, file in expectations.items():
        for line, code in file.expected | set(file.xfail):
            if code in _MINE:
                wanted.add((path, line, code))
    assert wanted, "no expectations of these rules in the project"
    assert set(check(root, *_MINE)) == wanted


def test_class_level_client_of_a_base_class_reaches_a_module_naming_no_library(tmp_path: Path) -> None:
    """The subclass's module imports no HTTP library: the gate's second phase reads it because it names a class
    that holds a client."""
    write(tmp_path, {
        "app/__init__.py": "",
        "app/base.py": """\
            import httpx


            class Api:
                client = httpx.Client()
            """,
        "app/users.py": """\
            from app.base import Api


            class Users(Api):
                async def get(self, user):
                    return self.client.get(f"/users/{user}").json()  # mark
            """,
    })
    assert set(check(tmp_path, "HTP403")) == {("app/users.py", line_of(tmp_path, "app/users.py", "mark"), "HTP403")}
