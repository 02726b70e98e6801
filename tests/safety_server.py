"""A real HTTP/1.1 and HTTPS test server on 127.0.0.1 that can show what a program's connections do.

It counts the TCP connections it accepts (HTTP and HTTPS apart) and answers by path:

- `/item/<id>` JSON `{"id": "<id>"}` with Content-Length, so clients keep the connection alive;
  `?slow=1` waits 50 ms first (keeps a burst's requests in flight together);
- `/pages?page=N` a paginated listing of `PAGES` pages, each with a `next` link but the last;
- `/headers` JSON of the request's `X-Client` header (what a wrapper adding default headers sent);
- `/login?user=X` sets the cookie `sid=X`; `/whoami` echoes every `sid` cookie it received (`sid=a,b` or
  `anonymous`) and, like a rolling session, sets `sid` again to the first one;
- `/drop/<id>?after=N` answers like `/item/<id>` the first N requests on a connection, then reads the next
  one and closes the socket without an answer and without ever having said `Connection: close`: a client
  that reuses the kept-alive connection sees it dropped, one that opens a connection per request never does;
- `/blob?size=N` N bytes of `blob(N)` with Content-Length;
- `/broken/<name>?size=N&sent=M` promises N bytes of `blob(N)` (Content-Length), sends the first M, closes;
- `/chunked?lines=N` N text lines (`line 0\\r\\n` ...) with Transfer-Encoding: chunked, cut so that every
  CRLF is split between two chunks (`...\\r` | `\\n...`), the same cut on every run;
- `/busy/<key>?times=N` status 524 for the first N requests of that key (since the last `reset()`), then 200;
- HTTPS only, `/cert` `cn=<common name>` of the client certificate presented, or `cn=none`.

The HTTPS server asks for a client certificate (CERT_OPTIONAL) and trusts client certificates issued by the
same `trustme` CA as its own; `client_cert("alice")` writes one (key and chain in one PEM).
"""

from __future__ import annotations

import json
import socket
import ssl
import sys
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

PAGES = 5
_BLOB_BLOCK = bytes(range(256)) * 4096  # 1 MiB, repeated and cut for /blob and /broken


def blob(size: int) -> bytes:
    """The body /blob?size=N sends (and /broken promises)."""
    return (_BLOB_BLOCK * (size // len(_BLOB_BLOCK) + 1))[:size]


def chunked_lines(count: int) -> List[bytes]:
    """The chunks /chunked?lines=N sends: every line's CRLF is split between two chunks."""
    chunks: List[bytes] = []
    pending = b""
    for n in range(count):
        chunks.append(pending + f"line {n}".encode() + b"\r")
        pending = b"\n"
    chunks.append(pending)
    return chunks


class _Handler(BaseHTTPRequestHandler):
    """One instance per connection: `served` counts the answers given on it."""

    protocol_version = "HTTP/1.1"
    server: "_CountingServer"

    def setup(self) -> None:
        super().setup()
        self.served = 0

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        parts = urlsplit(self.path)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        path = parts.path
        route = path.split("/")[1] if path.count("/") >= 1 else ""
        if path == "/blob":
            self._send_blob(int(query["size"]))
        elif path == "/pages":
            page = int(query.get("page", "0"))
            following = f"/pages?page={page + 1}" if page + 1 < PAGES else None
            self._send_json({"items": [page * 10 + n for n in range(3)], "next": following})
        elif path == "/headers":
            self._send_json({"x-client": self.headers.get("X-Client")})
        elif path == "/login":
            user = query.get("user", "")
            self._send(200, f"welcome {user}".encode(), "text/plain", [("Set-Cookie", f"sid={user}; Path=/")])
        elif path == "/whoami":
            self._whoami()
        elif route == "drop":
            if self.served >= int(query.get("after", "1")):
                self.close_connection = True  # read, never answered: the client sees the connection dropped
                return
            self._send_json({"id": path.rsplit("/", 1)[-1]})
        elif route == "broken":
            self._send_broken(int(query["size"]), int(query["sent"]))
        elif path == "/chunked":
            self._send_chunked(chunked_lines(int(query.get("lines", "5"))))
        elif route == "busy":
            self._busy(path.rsplit("/", 1)[-1], int(query.get("times", "1")))
        elif path == "/cert":
            self._send(200, f"cn={self.server.peer_common_name(self.request)}".encode(), "text/plain")
        elif route == "item":
            if "slow" in query:
                time.sleep(0.05)
            self._send_json({"id": path.rsplit("/", 1)[-1]})
        else:
            self._send(404, b"not found", "text/plain")

    def _whoami(self) -> None:
        sids = []
        for header in self.headers.get_all("Cookie") or []:
            for pair in header.split(";"):
                name, _, value = pair.strip().partition("=")
                if name == "sid":
                    sids.append(value)
        extra = [("Set-Cookie", f"sid={sids[0]}; Path=/")] if sids else []
        self._send(200, (f"sid={','.join(sids)}" if sids else "anonymous").encode(), "text/plain", extra)

    def _busy(self, key: str, times: int) -> None:
        with self.server.lock:
            seen = self.server.busy.get(key, 0)
            self.server.busy[key] = seen + 1
        if seen < times:
            self._send(524, b"origin timed out", "text/plain")
        else:
            self._send_json({"id": key, "attempts": seen + 1})

    def _send_json(self, payload: Dict[str, Any]) -> None:
        self._send(200, json.dumps(payload).encode(), "application/json")

    def _send(self, status: int, body: bytes, content_type: str, extra: Optional[List[Tuple[str, str]]] = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra or []:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.served += 1

    def _send_blob(self, size: int) -> None:
        """`blob(size)` with Content-Length, written a block at a time (a large body never sits whole here)."""
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        sent = 0
        while sent < size:
            part = _BLOB_BLOCK[: size - sent]
            self.wfile.write(part)
            sent += len(part)
        self.served += 1

    def _send_broken(self, size: int, sent: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(size))
        self.end_headers()
        self.wfile.write(blob(size)[:sent])
        self.close_connection = True

    def _send_chunked(self, chunks: List[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")
        self.served += 1

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's signature
        pass  # keep the test output quiet


class _CountingServer(ThreadingHTTPServer):
    """Counts accepted connections; with `tls`, wraps each one (the handshake runs in its handler's thread)."""

    daemon_threads = True

    def __init__(self, tls: Optional[ssl.SSLContext] = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.tls = tls
        self.connections = 0
        self.lock = threading.Lock()
        self.busy: Dict[str, int] = {}

    def get_request(self) -> Tuple[socket.socket, Any]:
        sock, address = super().get_request()
        with self.lock:
            self.connections += 1
        if self.tls is not None:
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def finish_request(self, request: Any, client_address: Any) -> None:
        if isinstance(request, ssl.SSLSocket):
            try:
                request.settimeout(10)
                request.do_handshake()
                request.settimeout(None)
            except (ssl.SSLError, OSError):
                return  # a client that gave up or distrusts us: nothing to answer
        super().finish_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (an unclosed stream, a dropped connection) is expected here, not an error."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLError, TimeoutError)):
            super().handle_error(request, client_address)

    @staticmethod
    def peer_common_name(request: Any) -> str:
        cert = request.getpeercert() if isinstance(request, ssl.SSLSocket) else None
        for rdn in (cert or {}).get("subject", ()):
            for key, value in rdn:
                if key == "commonName":
                    return str(value)
        return "none"


class SafetyServer:
    """The HTTP and HTTPS servers of one test module, their CA, and what they counted."""

    def __init__(self, directory: Path) -> None:
        import trustme  # a test dependency; imported here so the HTTP-only users of this module need not

        self.directory = directory
        self._ca = trustme.CA()
        self.ca_path = directory / "ca.pem"
        self._ca.cert_pem.write_to_path(str(self.ca_path))
        server_cert = self._ca.issue_cert("127.0.0.1", "localhost")
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        server_cert.configure_cert(context)
        self._ca.configure_trust(context)  # client certificates from the same CA
        context.verify_mode = ssl.CERT_OPTIONAL
        self.http = _CountingServer()
        self.https = _CountingServer(tls=context)
        self._threads = [
            threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            for s in (self.http, self.https)
        ]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}"

    @property
    def https_base(self) -> str:
        return f"https://127.0.0.1:{self.https.server_address[1]}"

    @property
    def connections(self) -> int:
        """Every connection accepted so far, HTTP and HTTPS."""
        return self.http.connections + self.https.connections

    def client_cert(self, name: str) -> Path:
        """A client certificate with common name `name`, its key and chain in one PEM file."""
        path = self.directory / f"client-{name}.pem"
        if not path.exists():
            leaf = self._ca.issue_cert(f"{name}@example.org", common_name=name)
            leaf.private_key_and_cert_chain_pem.write_to_path(str(path))
        return path

    def reset(self) -> None:
        """Forget per-key state (/busy), so every run of a program meets the same server."""
        for server in (self.http, self.https):
            with server.lock:
                server.busy.clear()

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        for server in (self.http, self.https):
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=10)


@contextmanager
def running_server(directory: Path) -> Iterator[SafetyServer]:
    """Both servers on 127.0.0.1 (ephemeral ports), stopped on exit; certificates are written to `directory`."""
    server = SafetyServer(directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()
