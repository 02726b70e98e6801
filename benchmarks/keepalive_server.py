"""A local keep-alive HTTP/1.1 server that counts the connections clients open (HTTP or HTTPS).

Used by benchmarks/payoff.py (and reusable by tests): it listens on 127.0.0.1 on a free port, serves
`GET <path>` with a short deterministic body (`ok <path>\\n`), keeps every connection open until the client
closes it, and counts accepted connections and answered requests. One thread per connection, so
concurrent clients are served at once; the handshake (HTTPS) runs in that thread, not in the accept loop.

    server = KeepAliveServer(tls=True)   # HTTPS with a certificate made now by trustme
    server.start()
    ... server.url, server.ca_bundle (PEM of the CA to trust) ...
    server.connections, server.requests; server.reset()
    server.stop()

Or as a context manager: `with KeepAliveServer() as server: ...`.
"""

from __future__ import annotations

import os
import socket
import socketserver
import tempfile
import threading
from typing import Optional

__all__ = ["KeepAliveServer"]

_MAX_HEADER_LINES = 100
_IDLE_TIMEOUT = 60.0  # seconds a kept-alive connection may sit idle before the server drops it


class _Handler(socketserver.BaseRequestHandler):
    """Serve requests on one connection until the client closes it (or asks to)."""

    server: "_Server"

    def handle(self) -> None:
        sock = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(_IDLE_TIMEOUT)
        if self.server.ssl_context is not None:
            try:
                sock = self.server.ssl_context.wrap_socket(sock, server_side=True)
            except (OSError, ValueError):
                return  # a failed handshake: the client sees the error
        reader = sock.makefile("rb", buffering=65536)
        try:
            while self._one_request(reader, sock):
                pass
        except (OSError, ValueError):
            pass  # the client went away mid-request, or the idle timeout passed
        finally:
            reader.close()
            if sock is not self.request:
                try:
                    sock.close()
                except OSError:
                    pass

    def _one_request(self, reader, sock) -> bool:
        """Answer one request; False when the connection should end."""
        line = reader.readline(65537)
        if not line:
            return False
        parts = line.split()
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
            sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return False
        method, target, version = parts
        keep_alive = version == b"HTTP/1.1"
        length = 0
        for _ in range(_MAX_HEADER_LINES):
            header = reader.readline(65537)
            if header in (b"\r\n", b"\n", b""):
                break
            name, _, value = header.partition(b":")
            name = name.strip().lower()
            value = value.strip().lower()
            if name == b"connection":
                if value == b"close":
                    keep_alive = False
                elif value == b"keep-alive":
                    keep_alive = True
            elif name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                sock.sendall(b"HTTP/1.1 501 Not Implemented\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return False
        if length:
            reader.read(length)  # a request body is read and ignored
        payload = b"ok " + target + b"\n"
        head = (
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n%s\r\n"
            % (len(payload), b"" if keep_alive else b"Connection: close\r\n")
        )
        # One write: no Nagle / delayed-ACK stall between the head and the body.
        sock.sendall(head if method == b"HEAD" else head + payload)
        self.server.count_request()
        return keep_alive


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 1024  # many clients connecting at once must not be dropped by a short backlog

    def __init__(self, ssl_context) -> None:
        self.ssl_context = ssl_context
        self.lock = threading.Lock()
        self.connections = 0
        self.requests = 0
        super().__init__(("127.0.0.1", 0), _Handler)

    def verify_request(self, request, client_address) -> bool:
        with self.lock:
            self.connections += 1
        return True

    def count_request(self) -> None:
        with self.lock:
            self.requests += 1


class KeepAliveServer:
    """An HTTP/1.1 keep-alive server on 127.0.0.1 that counts connections; HTTPS when `tls` is true."""

    def __init__(self, tls: bool = False) -> None:
        self.tls = tls
        self.ca_bundle: Optional[str] = None  # path of the CA certificate (PEM) to trust, when tls
        self._server: Optional[_Server] = None
        self._thread: Optional[threading.Thread] = None
        self._tmpdir: Optional[tempfile.TemporaryDirectory] = None

    def start(self) -> "KeepAliveServer":
        context = None
        if self.tls:
            import ssl

            import trustme  # a benchmark/test dependency: the `bench` extra

            ca = trustme.CA()
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
            self._tmpdir = tempfile.TemporaryDirectory(prefix="keepalive-ca-")
            self.ca_bundle = os.path.join(self._tmpdir.name, "ca.pem")
            ca.cert_pem.write_to_path(self.ca_bundle)
        self._server = _Server(context)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="keepalive-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    def __enter__(self) -> "KeepAliveServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the server first"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def connections(self) -> int:
        """Connections accepted since start() or the last reset()."""
        assert self._server is not None, "start() the server first"
        with self._server.lock:
            return self._server.connections

    @property
    def requests(self) -> int:
        """Requests answered since start() or the last reset()."""
        assert self._server is not None, "start() the server first"
        with self._server.lock:
            return self._server.requests

    def reset(self) -> None:
        assert self._server is not None, "start() the server first"
        with self._server.lock:
            self._server.connections = 0
            self._server.requests = 0


if __name__ == "__main__":  # a quick manual check: python benchmarks/keepalive_server.py
    import http.client
    import ssl

    for tls in (False, True):
        with KeepAliveServer(tls=tls) as srv:
            if tls:
                conn = http.client.HTTPSConnection(
                    "127.0.0.1", srv.port, context=ssl.create_default_context(cafile=srv.ca_bundle)
                )
            else:
                conn = http.client.HTTPConnection("127.0.0.1", srv.port)
            for i in range(3):
                conn.request("GET", f"/items/{i}")
                print(conn.getresponse().read())
            conn.close()
            print(srv.url, "connections", srv.connections, "requests", srv.requests)
