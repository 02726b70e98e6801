"""The stand-in `requests`/`httpx` of the differential fuzz behave as the real libraries do where the fuzz looks:
one program runs with the real libraries against a real server on 127.0.0.1 that answers as the stand-in server
does, and with the stand-ins; what it prints and what the server saw must be the same.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

STANDINS = Path(__file__).parent / "standins"
sys.path.insert(0, str(STANDINS))
import _standin_server  # noqa: E402  (the stand-ins' folder is not a package)

sys.path.remove(str(STANDINS))

# Everything the fuzz relies on: cookies kept by a Session/Client and not by module functions, a per-call cookie
# beside a jar cookie of the same name, params and headers merged, streamed versus buffered chunks and lines,
# a response closed unread or read twice, raise_for_status, a closed httpx client, httpx's per-request verify.
PROGRAM = r'''
import os, sys
import requests, httpx
BASE = os.environ["FIDELITY_BASE"]
out = []
s = requests.Session()
s.headers["X-Trace"] = "t1"
s.params = {"k": "v"}
out.append(s.get(BASE + "/login", params={"a": 1}).json())
out.append(s.get(BASE + "/items/1", cookies={"sid": "mine", "other": "x"}).json()["cookies"])
out.append(sorted(s.cookies.get_dict()))
out.append(requests.get(BASE + "/items/2", cookies={"sid": "mine"}).json()["cookies"])
out.append(requests.get(BASE + "/login").cookies.get("sid") is not None)
out.append(requests.get(BASE + "/items/3").json()["cookies"])
out.append(requests.post(BASE + "/p", data={"a": "b"}, headers={"X-Trace": "t2"}).json()["length"])
out.append(requests.delete(BASE + "/d").status_code)
r = s.get(BASE + "/items/4", stream=True)
out.append([len(c) for c in r.iter_content(chunk_size=None)])
out.append([len(c) for c in s.get(BASE + "/items/4").iter_content(chunk_size=None)])
with s.get(BASE + "/items/5", stream=True) as r:
    out.append(list(r.iter_lines()))
out.append(list(s.get(BASE + "/items/5").iter_lines()))
with s.get(BASE + "/items/6", stream=True) as r:
    out.append([len(c) for c in r.iter_content(chunk_size=4)])
out.append(s.post(BASE + "/p", json={"k": 1}).json()["length"])
try:
    s.get(BASE + "/a/missing").raise_for_status()
except requests.HTTPError as error:
    out.append((type(error).__name__, str(error).split(" for url")[0]))
out.append(s.get(BASE + "/a/error").ok)
unread = s.get(BASE + "/items/7", stream=True)
unread.close()
out.append(unread.content)
consumed = s.get(BASE + "/items/8", stream=True)
out.append(len(b"".join(consumed.iter_content(8))))
try:
    consumed.content
except RuntimeError as error:
    out.append(str(error))
with httpx.Client(headers={"X-Trace": "h"}) as c:
    out.append(c.get(BASE + "/login").status_code)
    out.append(c.get(BASE + "/x", cookies={"sid": "mine"}).json()["cookies"])
    with c.stream("GET", BASE + "/items/9") as r:
        out.append([len(b) for b in r.iter_bytes()])
    with c.stream("GET", BASE + "/items/9") as r:
        out.append([len(b) for b in r.iter_bytes(4)])
    with c.stream("GET", BASE + "/items/9") as r:
        try:
            r.content
        except httpx.ResponseNotRead:
            out.append("not read")
    out.append(list(c.get(BASE + "/items/9").iter_lines()))
    out.append(c.post(BASE + "/p", json={"k": 1}).json()["length"])
    try:
        c.get(BASE + "/a/missing").raise_for_status()
    except httpx.HTTPStatusError as error:
        out.append(type(error).__name__)
try:
    c.get(BASE + "/x")
except RuntimeError as error:
    out.append(str(error))
try:
    httpx.Client().get(BASE + "/x", verify=False)
except TypeError:
    out.append("TypeError")
out.append(httpx.get(BASE + "/x", cookies={"sid": "m"}).json()["cookies"])
with httpx.stream("GET", BASE + "/items/10") as r:
    out.append(len(r.read()))
print(out)
'''


class _Handler(BaseHTTPRequestHandler):
    """Answers as the stand-in server does (the same function makes the answer), over real HTTP/1.1, chunked."""

    protocol_version = "HTTP/1.1"
    seen: List[Dict[str, Any]] = []

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        cookies: List[Tuple[str, str]] = []
        for header in self.headers.get_all("Cookie") or []:
            for part in header.split(";"):
                name, _, value = part.strip().partition("=")
                cookies.append((name, value))
        _standin_server.reset()
        answer = _standin_server.serve(self.command, "http://a.test" + self.path, list(self.headers.items()), cookies,
                                       body, None, None)
        _Handler.seen.append(_standin_server.RECORD[0])
        self.send_response(answer.status)
        for name, value in answer.headers.items():
            self.send_header(name, value)
        for name, value in answer.set_cookies.items():
            self.send_header("Set-Cookie", f"{name}={value}; Path=/")
        self.end_headers()
        for chunk in answer.chunks:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _answer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _run(base: str, standins: bool, tmp_path: Path) -> str:
    env = dict(os.environ, FIDELITY_BASE=base, PYTHONHASHSEED="0", NO_PROXY="*", no_proxy="*")
    env.pop("PYTHONPATH", None)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env.pop(name, None)
    if standins:
        env["PYTHONPATH"] = str(STANDINS)
    (tmp_path / "fidelity.py").write_text(PROGRAM)
    done = subprocess.run([sys.executable, str(tmp_path / "fidelity.py")], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _seen_by_server(record: List[Dict[str, Any]]) -> List[Tuple[Any, ...]]:
    """What the fuzz compares, without what legitimately differs between the two runs (host, library versions)."""
    kept = ("x-trace", "content-type", "authorization")
    return [(entry["method"], entry["url"].split("/", 3)[-1], entry["cookies"], entry["body"],
             [h for h in entry["headers"] if h[0] in kept]) for entry in record]


def test_standins_match_the_real_libraries(server: str, tmp_path: Path) -> None:
    import requests

    if tuple(int(part) for part in requests.__version__.split(".")[:2]) < (2, 34):
        # The stand-ins model requests 2.34's cookie merge (a jar cookie goes out before a per-call one of the
        # same name); requests 2.32, the newest with Python 3.9 wheels here, sends the per-call one.
        pytest.skip(f"the stand-ins are checked against requests 2.34 or newer; this is {requests.__version__}")
    if sys.version_info < (3, 11):
        # httpx puts a per-request cookie into a copy of the client's jar, and which of two same-named cookies
        # http.cookiejar sends depends on the Python: before 3.11 the per-request one, the stand-ins' model
        # (3.11 and newer) the jar's. Measured: Python 3.10, httpx 0.28.1 sends sid=mine, 3.11+ the jar's sid.
        pytest.skip("the stand-ins model http.cookiejar as Python 3.11 and newer pick between same-named cookies")
    real_stdout = _run(server, standins=False, tmp_path=tmp_path)
    real_seen = _seen_by_server(_Handler.seen)
    _standin_server.reset()

    # the stand-ins run under the fuzz's own runner, which returns their record
    jobs = tmp_path / "jobs.json"
    jobs.write_text(json.dumps([{"source": PROGRAM.replace('os.environ["FIDELITY_BASE"]', '"http://a.test"')}]))
    env = dict(os.environ, PYTHONPATH=str(STANDINS), PYTHONHASHSEED="0")
    done = subprocess.run([sys.executable, str(STANDINS / "run_programs.py"), str(jobs), str(tmp_path / "out.json"),
                           str(tmp_path / "work")], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "out.json").read_text())[0]
    assert result["exception"] is None, result["detail"]
    assert result["stdout"] == real_stdout
    assert _seen_by_server(result["record"]) == real_seen
    assert len(real_seen) == 27  # every request the program makes reached the server
