"""A stand-in for `httpx` that sends nothing: each request is recorded as the server would see it and answered by
`_standin_server`, with httpx's own rules for what a Client keeps (cookies, headers, params, auth, verify).

Only what generated programs use is here; the signatures are httpx 0.28's, so a call the real library rejects
(`client.get(u, verify=False)`, a request on a closed client) fails here the same way.
"""

from __future__ import annotations

import base64
import contextlib
import json as _json
from typing import Any, Iterator, List, Optional

import _standin_server as _server

__version__ = "0.28.1"
USE_CLIENT_DEFAULT = object()


class HTTPError(Exception):
    """Base class of httpx's request and status errors."""


class RequestError(HTTPError):
    pass


class TransportError(RequestError):
    pass


class ConnectError(TransportError):
    pass


class TimeoutException(TransportError):
    pass


class HTTPStatusError(HTTPError):
    def __init__(self, message: str, *, request: "Request", response: "Response") -> None:
        super().__init__(message)
        self.request = request
        self.response = response


class StreamError(RuntimeError):
    pass


class ResponseNotRead(StreamError):
    def __init__(self) -> None:
        super().__init__("Attempted to access streaming response content, without having called `read()`.")


class StreamConsumed(StreamError):
    def __init__(self) -> None:
        super().__init__("Attempted to read or stream some content, but the content has already been streamed.")


class StreamClosed(StreamError):
    def __init__(self) -> None:
        super().__init__("Attempted to read or stream content, but the stream has been closed.")


class Cookies(_server.CookieJar):
    """httpx's cookie store (the stand-in server's jar model); built from a dict, its cookies have no domain."""

    def __init__(self, cookies: Any = None) -> None:
        super().__init__()
        if isinstance(cookies, _server.CookieJar):
            self.update(cookies)
        elif cookies:
            for name, value in dict(cookies).items():
                self.set(name, value)

    def update(self, other: Any = None) -> None:  # type: ignore[override]
        super().update(other if isinstance(other, _server.CookieJar) else Cookies(other))


class Headers(dict):  # type: ignore[type-arg]
    """Headers keyed in lower case."""

    def __init__(self, headers: Any = None) -> None:
        super().__init__()
        for key, value in dict(headers or {}).items():
            self[key] = value

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key.lower(), value)

    def __getitem__(self, key: str) -> Any:
        return super().__getitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)

    def update(self, other: Any = (), **kwargs: Any) -> None:  # type: ignore[override]
        for key, value in dict(other or {}, **kwargs).items():
            self[key] = value


class Request:
    """The request as sent."""

    def __init__(self, method: str, url: str, headers: Headers, content: bytes) -> None:
        self.method = method
        self.url = url
        self.headers = headers
        self.content = content


class Response:
    """A response of the stand-in server, with httpx's reading rules (a streamed one must be read or iterated)."""

    def __init__(self, answer: "_server.Answer", request: Request, stream: bool) -> None:
        self.status_code = answer.status
        self.reason_phrase = answer.reason
        self.headers = Headers(answer.headers)
        self.request = request
        self.url = request.url
        self.encoding = "utf-8"
        self.cookies = Cookies()
        for name, value in answer.set_cookies.items():
            self.cookies.set(name, value, domain=_server.host_of(request.url))
        self._chunks = list(answer.chunks)
        self._content: Optional[bytes] = None
        self.is_stream_consumed = False
        self.is_closed = False
        if not stream:
            self.read()
            self.close()

    def __repr__(self) -> str:
        return f"<Response [{self.status_code} {self.reason_phrase}]>"

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    @property
    def is_error(self) -> bool:
        return self.status_code >= 400

    @property
    def content(self) -> bytes:
        if self._content is None:
            raise ResponseNotRead()
        return self._content

    @property
    def text(self) -> str:
        return self.content.decode(self.encoding, errors="replace")

    def json(self, **kwargs: Any) -> Any:
        return _json.loads(self.content, **kwargs)

    def read(self) -> bytes:
        if self._content is None:
            self._content = b"".join(self.iter_raw())
        return self._content

    def iter_raw(self, chunk_size: Optional[int] = None) -> Iterator[bytes]:
        if self.is_stream_consumed:
            raise StreamConsumed()
        if self.is_closed:
            raise StreamClosed()
        self.is_stream_consumed = True
        chunks, self._chunks = self._chunks, []
        yield from _rechunk(chunks, chunk_size)
        self.close()

    def iter_bytes(self, chunk_size: Optional[int] = None) -> Iterator[bytes]:
        if self._content is not None:
            size = len(self._content) if chunk_size is None else chunk_size
            for at in range(0, len(self._content), max(size, 1)):
                yield self._content[at:at + size]
            return
        yield from self.iter_raw(chunk_size)

    def iter_text(self, chunk_size: Optional[int] = None) -> Iterator[str]:
        for chunk in self.iter_bytes(chunk_size):
            yield chunk.decode(self.encoding)

    def iter_lines(self) -> Iterator[str]:
        # httpx's line decoder keeps a CR at a chunk's end until the next chunk: the lines are the whole text's
        yield from "".join(self.iter_text()).splitlines()

    def raise_for_status(self) -> "Response":
        if self.is_success or self.status_code < 400:
            return self
        kind = "Client error" if self.status_code < 500 else "Server error"
        message = f"{kind} '{self.status_code} {self.reason_phrase}' for url '{self.url}'"
        raise HTTPStatusError(message, request=self.request, response=self)

    def close(self) -> None:
        if not self.is_closed:
            self.is_closed = True
            self._chunks = []


def _rechunk(chunks: List[bytes], size: Optional[int]) -> Iterator[bytes]:
    """httpx's ByteChunker: chunks as they arrive (size None) or exactly `size` bytes each, but the last."""
    if size is None:
        yield from (c for c in chunks if c)
        return
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        while len(buffer) >= size:
            yield buffer[:size]
            buffer = buffer[size:]
    if buffer:
        yield buffer


def _basic_auth(auth: Any) -> Optional[str]:
    if isinstance(auth, tuple) and len(auth) == 2:
        return "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode("latin-1")).decode()
    return None


class Client:
    """An httpx Client: its cookies, headers, params, auth and verify apply to every request; closed, it refuses."""

    def __init__(self, *, auth: Any = None, params: Any = None, headers: Any = None, cookies: Any = None,
                 verify: Any = True, cert: Any = None, trust_env: bool = True, http1: bool = True,
                 http2: bool = False, proxy: Any = None, mounts: Any = None, timeout: Any = 5.0,
                 follow_redirects: bool = False, limits: Any = None, max_redirects: int = 20,
                 event_hooks: Any = None, base_url: Any = "", transport: Any = None,
                 default_encoding: Any = "utf-8") -> None:
        self.auth = auth
        self.params = dict(params or {})
        self.headers = Headers({"Accept": "*/*", "Accept-Encoding": "gzip, deflate", "Connection": "keep-alive",
                                "User-Agent": f"python-httpx/{__version__}"})
        self.headers.update(headers or {})
        self.cookies = Cookies(cookies)
        self.timeout = timeout
        self.follow_redirects = follow_redirects
        self.base_url = str(base_url or "")
        self._verify = verify
        self._cert = cert
        self._state = "unopened"

    @property
    def is_closed(self) -> bool:
        return self._state == "closed"

    def __enter__(self) -> "Client":
        if self._state != "unopened":
            raise RuntimeError("Cannot open a client instance more than once." if self._state == "opened"
                               else "Cannot reopen a client instance, once it has been closed.")
        self._state = "opened"
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def close(self) -> None:
        self._state = "closed"

    def _send(self, method: str, url: Any, *, content: Any = None, data: Any = None, files: Any = None,
              json: Any = None, params: Any = None, headers: Any = None, cookies: Any = None,
              auth: Any = USE_CLIENT_DEFAULT, stream: bool = False) -> Response:
        if self._state == "closed":
            raise RuntimeError("Cannot send a request, as the client has been closed.")
        url = str(url)
        if "://" not in url:
            url = self.base_url + url
        method = method.upper()
        merged_params = dict(self.params)
        merged_params.update(params or {})
        full_url = _server.with_params(url, merged_params)
        sent = Headers(self.headers)
        sent.update(headers or {})
        body, content_type = _server.encode_body(data, json, content, compact_json=True)
        if content_type and "content-type" not in sent:
            sent["Content-Type"] = content_type
        if body:
            sent["Content-Length"] = str(len(body))
        elif method in ("POST", "PUT", "PATCH"):
            sent["Content-Length"] = "0"
        token = _basic_auth(self.auth if auth is USE_CLIENT_DEFAULT else auth)
        if token:
            sent["Authorization"] = token
        jar = Cookies(self.cookies)
        jar.update(cookies)
        host = _server.host_of(full_url)
        answer = _server.serve(method, full_url, list(sent.items()), jar.for_host(host), body, self._verify,
                               self._cert)
        response = Response(answer, Request(method, full_url, sent, body), stream)
        for name, value in answer.set_cookies.items():
            self.cookies.set(name, value, domain=host)
        return response

    def request(self, method: str, url: Any, *, content: Any = None, data: Any = None, files: Any = None,
                json: Any = None, params: Any = None, headers: Any = None, cookies: Any = None,
                auth: Any = USE_CLIENT_DEFAULT, follow_redirects: Any = USE_CLIENT_DEFAULT,
                timeout: Any = USE_CLIENT_DEFAULT, extensions: Any = None) -> Response:
        return self._send(method, url, content=content, data=data, files=files, json=json, params=params,
                          headers=headers, cookies=cookies, auth=auth)

    @contextlib.contextmanager
    def stream(self, method: str, url: Any, *, content: Any = None, data: Any = None, files: Any = None,
               json: Any = None, params: Any = None, headers: Any = None, cookies: Any = None,
               auth: Any = USE_CLIENT_DEFAULT, follow_redirects: Any = USE_CLIENT_DEFAULT,
               timeout: Any = USE_CLIENT_DEFAULT, extensions: Any = None) -> Iterator[Response]:
        response = self._send(method, url, content=content, data=data, files=files, json=json, params=params,
                              headers=headers, cookies=cookies, auth=auth, stream=True)
        try:
            yield response
        finally:
            response.close()

    def get(self, url: Any, *, params: Any = None, headers: Any = None, cookies: Any = None,
            auth: Any = USE_CLIENT_DEFAULT, follow_redirects: Any = USE_CLIENT_DEFAULT,
            timeout: Any = USE_CLIENT_DEFAULT, extensions: Any = None) -> Response:
        return self._send("GET", url, params=params, headers=headers, cookies=cookies, auth=auth)

    def options(self, url: Any, *, params: Any = None, headers: Any = None, cookies: Any = None,
                auth: Any = USE_CLIENT_DEFAULT, follow_redirects: Any = USE_CLIENT_DEFAULT,
                timeout: Any = USE_CLIENT_DEFAULT, extensions: Any = None) -> Response:
        return self._send("OPTIONS", url, params=params, headers=headers, cookies=cookies, auth=auth)

    def head(self, url: Any, *, params: Any = None, headers: Any = None, cookies: Any = None,
             auth: Any = USE_CLIENT_DEFAULT, follow_redirects: Any = USE_CLIENT_DEFAULT,
             timeout: Any = USE_CLIENT_DEFAULT, extensions: Any = None) -> Response:
        return self._send("HEAD", url, params=params, headers=headers, cookies=cookies, auth=auth)

    def delete(self, url: Any, *, params: Any = None, headers: Any = None, cookies: Any = None,
               auth: Any = USE_CLIENT_DEFAULT, follow_redirects: Any = USE_CLIENT_DEFAULT,
               timeout: Any = USE_CLIENT_DEFAULT, extensions: Any = None) -> Response:
        return self._send("DELETE", url, params=params, headers=headers, cookies=cookies, auth=auth)

    def post(self, url: Any, *, content: Any = None, data: Any = None, files: Any = None, json: Any = None,
             params: Any = None, headers: Any = None, cookies: Any = None, auth: Any = USE_CLIENT_DEFAULT,
             follow_redirects: Any = USE_CLIENT_DEFAULT, timeout: Any = USE_CLIENT_DEFAULT,
             extensions: Any = None) -> Response:
        return self._send("POST", url, content=content, data=data, files=files, json=json, params=params,
                          headers=headers, cookies=cookies, auth=auth)

    def put(self, url: Any, *, content: Any = None, data: Any = None, files: Any = None, json: Any = None,
            params: Any = None, headers: Any = None, cookies: Any = None, auth: Any = USE_CLIENT_DEFAULT,
            follow_redirects: Any = USE_CLIENT_DEFAULT, timeout: Any = USE_CLIENT_DEFAULT,
            extensions: Any = None) -> Response:
        return self._send("PUT", url, content=content, data=data, files=files, json=json, params=params,
                          headers=headers, cookies=cookies, auth=auth)

    def patch(self, url: Any, *, content: Any = None, data: Any = None, files: Any = None, json: Any = None,
              params: Any = None, headers: Any = None, cookies: Any = None, auth: Any = USE_CLIENT_DEFAULT,
              follow_redirects: Any = USE_CLIENT_DEFAULT, timeout: Any = USE_CLIENT_DEFAULT,
              extensions: Any = None) -> Response:
        return self._send("PATCH", url, content=content, data=data, files=files, json=json, params=params,
                          headers=headers, cookies=cookies, auth=auth)


# the module functions: each call uses a throwaway Client built with the call's cookies and verify
def request(method: str, url: Any, *, params: Any = None, content: Any = None, data: Any = None, files: Any = None,
            json: Any = None, headers: Any = None, cookies: Any = None, auth: Any = None, proxy: Any = None,
            timeout: Any = 5.0, follow_redirects: bool = False, verify: Any = True,
            trust_env: bool = True) -> Response:
    with Client(cookies=cookies, proxy=proxy, verify=verify, timeout=timeout,
                trust_env=trust_env) as client:
        return client.request(method, url, content=content, data=data, files=files, json=json, params=params,
                              headers=headers, auth=auth, follow_redirects=follow_redirects)


@contextlib.contextmanager
def stream(method: str, url: Any, *, params: Any = None, content: Any = None, data: Any = None, files: Any = None,
           json: Any = None, headers: Any = None, cookies: Any = None, auth: Any = None, proxy: Any = None,
           timeout: Any = 5.0, follow_redirects: bool = False, verify: Any = True,
           trust_env: bool = True) -> Iterator[Response]:
    with Client(cookies=cookies, proxy=proxy, verify=verify, timeout=timeout,
                trust_env=trust_env) as client:
        with client.stream(method, url, content=content, data=data, files=files, json=json, params=params,
                           headers=headers, auth=auth, follow_redirects=follow_redirects) as response:
            yield response


def get(url: Any, *, params: Any = None, headers: Any = None, cookies: Any = None, auth: Any = None,
        proxy: Any = None, follow_redirects: bool = False, verify: Any = True,
        timeout: Any = 5.0, trust_env: bool = True) -> Response:
    return request("GET", url, params=params, headers=headers, cookies=cookies, auth=auth, proxy=proxy,
                   follow_redirects=follow_redirects, verify=verify, timeout=timeout, trust_env=trust_env)


def options(url: Any, *, params: Any = None, headers: Any = None, cookies: Any = None, auth: Any = None,
            proxy: Any = None, follow_redirects: bool = False, verify: Any = True,
            timeout: Any = 5.0, trust_env: bool = True) -> Response:
    return request("OPTIONS", url, params=params, headers=headers, cookies=cookies, auth=auth, proxy=proxy,
                   follow_redirects=follow_redirects, verify=verify, timeout=timeout, trust_env=trust_env)


def head(url: Any, *, params: Any = None, headers: Any = None, cookies: Any = None, auth: Any = None,
         proxy: Any = None, follow_redirects: bool = False, verify: Any = True,
         timeout: Any = 5.0, trust_env: bool = True) -> Response:
    return request("HEAD", url, params=params, headers=headers, cookies=cookies, auth=auth, proxy=proxy,
                   follow_redirects=follow_redirects, verify=verify, timeout=timeout, trust_env=trust_env)


def delete(url: Any, *, params: Any = None, headers: Any = None, cookies: Any = None, auth: Any = None,
           proxy: Any = None, follow_redirects: bool = False, verify: Any = True,
           timeout: Any = 5.0, trust_env: bool = True) -> Response:
    return request("DELETE", url, params=params, headers=headers, cookies=cookies, auth=auth, proxy=proxy,
                   follow_redirects=follow_redirects, verify=verify, timeout=timeout, trust_env=trust_env)


def post(url: Any, *, content: Any = None, data: Any = None, files: Any = None, json: Any = None,
         params: Any = None, headers: Any = None, cookies: Any = None, auth: Any = None, proxy: Any = None,
         follow_redirects: bool = False, verify: Any = True, timeout: Any = 5.0,
         trust_env: bool = True) -> Response:
    return request("POST", url, content=content, data=data, files=files, json=json, params=params,
                   headers=headers, cookies=cookies, auth=auth, proxy=proxy, follow_redirects=follow_redirects,
                   verify=verify, timeout=timeout, trust_env=trust_env)


def put(url: Any, *, content: Any = None, data: Any = None, files: Any = None, json: Any = None,
        params: Any = None, headers: Any = None, cookies: Any = None, auth: Any = None, proxy: Any = None,
        follow_redirects: bool = False, verify: Any = True, timeout: Any = 5.0,
        trust_env: bool = True) -> Response:
    return request("PUT", url, content=content, data=data, files=files, json=json, params=params,
                   headers=headers, cookies=cookies, auth=auth, proxy=proxy, follow_redirects=follow_redirects,
                   verify=verify, timeout=timeout, trust_env=trust_env)


def patch(url: Any, *, content: Any = None, data: Any = None, files: Any = None, json: Any = None,
          params: Any = None, headers: Any = None, cookies: Any = None, auth: Any = None, proxy: Any = None,
          follow_redirects: bool = False, verify: Any = True, timeout: Any = 5.0,
          trust_env: bool = True) -> Response:
    return request("PATCH", url, content=content, data=data, files=files, json=json, params=params,
                   headers=headers, cookies=cookies, auth=auth, proxy=proxy, follow_redirects=follow_redirects,
                   verify=verify, timeout=timeout, trust_env=trust_env)


__all__ = [
    "Client", "Cookies", "HTTPError", "HTTPStatusError", "Headers", "Request", "RequestError", "Response",
    "ResponseNotRead", "StreamClosed", "StreamConsumed", "delete", "get", "head", "options", "patch", "post", "put",
    "request", "stream",
]
