"""A stand-in for `requests` that sends nothing: each request is recorded as the server would see it and answered
by `_standin_server`, with requests' own rules for what a Session keeps (cookies, headers, params, auth, verify).

Only what generated programs use is here; the signatures are requests' own, so a call the real library would reject
with a TypeError is rejected here too.
"""

from __future__ import annotations

import base64
import json as _json
from typing import Any, Dict, Iterator, List, Optional

import _standin_server as _server

from . import adapters, exceptions
from .adapters import HTTPAdapter
from .exceptions import (
    ConnectionError,
    HTTPError,
    JSONDecodeError,
    RequestException,
    Timeout,
)

__version__ = "2.32.3"
__all__ = [
    "ConnectionError", "HTTPAdapter", "HTTPError", "JSONDecodeError", "RequestException", "Response", "Session",
    "Timeout", "adapters", "codes", "delete", "exceptions", "get", "head", "options", "patch", "post", "put",
    "request", "session",
]

_CONTENT_CHUNK_SIZE = 10 * 1024
_ITER_CHUNK_SIZE = 512


class _Codes:
    ok = 200
    not_found = 404
    internal_server_error = 500


codes = _Codes()


class RequestsCookieJar(_server.CookieJar):
    """requests' cookie jar (the stand-in server's jar model)."""

    def copy(self) -> "RequestsCookieJar":
        new = RequestsCookieJar()
        new.update(self)
        return new


def _cookiejar_from_dict(cookies: Optional[Dict[str, str]], jar: Optional[RequestsCookieJar] = None,
                         overwrite: bool = True) -> RequestsCookieJar:
    jar = RequestsCookieJar() if jar is None else jar
    if cookies:
        present = jar.names()
        for name, value in cookies.items():
            if overwrite or name not in present:
                jar.set(name, value)
    return jar


class CaseInsensitiveDict(dict):  # type: ignore[type-arg]
    """Headers keyed without regard to case, keeping the case they were first set with."""

    def _key(self, key: str) -> Optional[str]:
        for existing in self.keys():
            if existing.lower() == key.lower():
                return existing
        return None

    def __setitem__(self, key: str, value: Any) -> None:
        existing = self._key(key)
        if existing is not None:
            super().__delitem__(existing)
        super().__setitem__(key, value)

    def __getitem__(self, key: str) -> Any:
        existing = self._key(key)
        if existing is None:
            raise KeyError(key)
        return super().__getitem__(existing)

    def __delitem__(self, key: str) -> None:
        existing = self._key(key)
        if existing is None:
            raise KeyError(key)
        super().__delitem__(existing)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._key(key) is not None

    def get(self, key: str, default: Any = None) -> Any:
        existing = self._key(key)
        return default if existing is None else super().__getitem__(existing)

    def update(self, other: Any = (), **kwargs: Any) -> None:  # type: ignore[override]
        for key, value in dict(other, **kwargs).items():
            self[key] = value

    def copy(self) -> "CaseInsensitiveDict":
        return CaseInsensitiveDict(self.items())


def _default_headers() -> CaseInsensitiveDict:
    return CaseInsensitiveDict({"User-Agent": f"python-requests/{__version__}", "Accept-Encoding": "gzip, deflate",
                                "Accept": "*/*", "Connection": "keep-alive"})


class _Raw:
    """The body as the connection delivers it: transfer chunks, of which a read never crosses a border."""

    def __init__(self, chunks: List[bytes]) -> None:
        self._chunks = list(chunks)
        self.closed = False

    def stream(self, amount: Optional[int]) -> Iterator[bytes]:
        while self._chunks:
            chunk = self._chunks[0]
            if amount is None or amount >= len(chunk):
                self._chunks.pop(0)
                yield chunk
            else:
                self._chunks[0] = chunk[amount:]
                yield chunk[:amount]

    def read(self, amount: Optional[int] = None) -> bytes:
        out = b""
        while self._chunks and (amount is None or len(out) < amount):
            want = None if amount is None else amount - len(out)
            out += next(self.stream(want))
        return out

    def close(self) -> None:
        self._chunks = []
        self.closed = True


class PreparedRequest:
    """The request as sent (method, url, headers), kept on its response."""

    def __init__(self, method: str, url: str, headers: CaseInsensitiveDict, body: bytes) -> None:
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body or None


class Response:
    """A response of the stand-in server, with requests' reading rules (buffered unless `stream=True`)."""

    def __init__(self, answer: "_server.Answer", request: PreparedRequest, stream: bool) -> None:
        self.status_code = answer.status
        self.reason = answer.reason
        self.headers = CaseInsensitiveDict(answer.headers)
        self.url = request.url
        self.request = request
        self.encoding = "utf-8"
        self.history: List[Response] = []
        self.cookies = RequestsCookieJar()
        for name, value in answer.set_cookies.items():
            self.cookies.set(name, value, domain=_server.host_of(request.url))
        self.raw = _Raw(answer.chunks)
        self._content: Optional[bytes] = None
        self._content_consumed = False
        if not stream:
            self._content = self.raw.read()
            self._content_consumed = True

    @property
    def ok(self) -> bool:
        return self.status_code < 400

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return f"<Response [{self.status_code}]>"

    def __enter__(self) -> "Response":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __iter__(self) -> Iterator[bytes]:
        return self.iter_content(128)

    @property
    def content(self) -> bytes:
        if self._content is None:
            if self._content_consumed:
                raise RuntimeError("The content for this response was already consumed")
            self._content = b"".join(self.iter_content(_CONTENT_CHUNK_SIZE))
            self._content_consumed = True
        return self._content

    @property
    def text(self) -> str:
        return self.content.decode(self.encoding or "utf-8", errors="replace")

    def json(self, **kwargs: Any) -> Any:
        try:
            return _json.loads(self.text, **kwargs)
        except ValueError as error:
            raise JSONDecodeError(str(error)) from None

    def iter_content(self, chunk_size: Optional[int] = 1, decode_unicode: bool = False) -> Iterator[Any]:
        if self._content_consumed and self._content is None:
            raise exceptions.StreamConsumedError()
        if chunk_size is not None and not isinstance(chunk_size, int):
            raise TypeError(f"chunk_size must be an int, it is instead a {type(chunk_size)}.")

        def generate() -> Iterator[bytes]:
            if self._content is not None:
                size = chunk_size if chunk_size and chunk_size > 0 else len(self._content)
                for at in range(0, len(self._content), size or 1):
                    yield self._content[at:at + size]
                return
            yield from self.raw.stream(chunk_size)
            self._content_consumed = True

        chunks = generate()
        if decode_unicode:
            return (chunk.decode(self.encoding or "utf-8") for chunk in chunks)
        return chunks

    def iter_lines(self, chunk_size: int = _ITER_CHUNK_SIZE, decode_unicode: bool = False,
                   delimiter: Any = None) -> Iterator[Any]:
        pending = None
        for chunk in self.iter_content(chunk_size=chunk_size, decode_unicode=decode_unicode):
            if pending is not None:
                chunk = pending + chunk
            lines = chunk.split(delimiter) if delimiter else chunk.splitlines()
            # a chunk ending inside a line keeps that line for the next chunk; a CRLF split over two chunks is
            # seen as two line ends, as with the real library
            if lines and lines[-1] and chunk and lines[-1][-1] == chunk[-1]:
                pending = lines.pop()
            else:
                pending = None
            yield from lines
        if pending is not None:
            yield pending

    def raise_for_status(self) -> None:
        if 400 <= self.status_code < 500:
            kind = "Client Error"
        elif 500 <= self.status_code < 600:
            kind = "Server Error"
        else:
            return
        raise HTTPError(f"{self.status_code} {kind}: {self.reason} for url: {self.url}", response=self)

    def close(self) -> None:
        if not self._content_consumed:
            self.raw.close()


def _merged(request_value: Any, session_value: Any) -> Any:
    """requests' merge_setting: a request's mapping updates the session's, and its None values delete keys."""
    if request_value is None:
        return session_value
    if session_value is None:
        return request_value
    if not (isinstance(request_value, dict) and isinstance(session_value, dict)):
        return request_value
    merged = CaseInsensitiveDict(session_value) if isinstance(session_value, CaseInsensitiveDict) \
        else dict(session_value)
    merged.update(request_value)
    for key in [k for k, v in merged.items() if v is None]:
        del merged[key]
    return merged


class Session:
    """A requests Session: its cookie jar, headers, params, auth, verify and cert apply to every request."""

    def __init__(self) -> None:
        self.headers = _default_headers()
        self.auth: Any = None
        self.proxies: Dict[str, str] = {}
        self.hooks: Dict[str, List[Any]] = {"response": []}
        self.params: Dict[str, Any] = {}
        self.stream = False
        self.verify: Any = True
        self.cert: Any = None
        self.max_redirects = 30
        self.trust_env = True
        self.cookies = RequestsCookieJar()
        self.adapters: Dict[str, HTTPAdapter] = {}
        self.mount("https://", HTTPAdapter())
        self.mount("http://", HTTPAdapter())

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def mount(self, prefix: str, adapter: HTTPAdapter) -> None:
        self.adapters[prefix] = adapter
        longer = [k for k in self.adapters if len(k) < len(prefix)]
        for key in longer:
            self.adapters[key] = self.adapters.pop(key)

    def get_adapter(self, url: str) -> HTTPAdapter:
        for prefix, adapter in self.adapters.items():
            if url.lower().startswith(prefix.lower()):
                return adapter
        raise exceptions.InvalidSchema(f"No connection adapters were found for {url!r}")

    def close(self) -> None:
        # requests' close only closes the adapters' pools: a closed Session still works (it opens new ones)
        for adapter in self.adapters.values():
            adapter.close()

    def request(self, method: str, url: Any, params: Any = None, data: Any = None, headers: Any = None,
                cookies: Any = None, files: Any = None, auth: Any = None, timeout: Any = None,
                allow_redirects: bool = True, proxies: Any = None, hooks: Any = None, stream: Any = None,
                verify: Any = None, cert: Any = None, json: Any = None) -> Response:
        url = str(url)
        if "://" not in url:
            raise exceptions.MissingSchema(f"Invalid URL {url!r}: No scheme supplied.")
        method = str(method).upper()
        full_url = _server.with_params(url, _merged(params, self.params))
        sent_headers = _merged(headers, self.headers)
        sent_headers = CaseInsensitiveDict(sent_headers)
        body, content_type = _server.encode_body(data or None, json)
        if content_type and "Content-Type" not in sent_headers:
            sent_headers["Content-Type"] = content_type
        if body:
            sent_headers["Content-Length"] = str(len(body))
        elif method not in ("GET", "HEAD"):
            sent_headers["Content-Length"] = "0"
        user_auth = auth if auth is not None else self.auth
        if isinstance(user_auth, tuple) and len(user_auth) == 2:
            token = base64.b64encode(f"{user_auth[0]}:{user_auth[1]}".encode("latin-1")).decode()
            sent_headers["Authorization"] = f"Basic {token}"
        # the jar for this request: the session's cookies, then the call's (requests merges them as two jars, so
        # both are sent when their names clash, the session's first)
        merged_jar = self.cookies.copy()
        if isinstance(cookies, RequestsCookieJar):
            merged_jar.update(cookies)
        elif cookies:
            call_jar = _cookiejar_from_dict(dict(cookies))
            merged_jar.update(call_jar)
        self.get_adapter(full_url)
        effective_verify = verify if verify is not None else self.verify
        effective_cert = cert if cert is not None else self.cert
        host = _server.host_of(full_url)
        answer = _server.serve(method, full_url, list(sent_headers.items()), merged_jar.for_host(host), body,
                               effective_verify, effective_cert)
        prepared = PreparedRequest(method, full_url, sent_headers, body)
        response = Response(answer, prepared, bool(stream if stream is not None else self.stream))
        for name, value in answer.set_cookies.items():
            self.cookies.set(name, value, domain=host)
        for hook in (hooks or {}).get("response", []) + self.hooks.get("response", []):
            response = hook(response) or response
        return response

    def get(self, url: Any, **kwargs: Any) -> Response:
        kwargs.setdefault("allow_redirects", True)
        return self.request("GET", url, **kwargs)

    def options(self, url: Any, **kwargs: Any) -> Response:
        kwargs.setdefault("allow_redirects", True)
        return self.request("OPTIONS", url, **kwargs)

    def head(self, url: Any, **kwargs: Any) -> Response:
        kwargs.setdefault("allow_redirects", False)
        return self.request("HEAD", url, **kwargs)

    def post(self, url: Any, data: Any = None, json: Any = None, **kwargs: Any) -> Response:
        return self.request("POST", url, data=data, json=json, **kwargs)

    def put(self, url: Any, data: Any = None, **kwargs: Any) -> Response:
        return self.request("PUT", url, data=data, **kwargs)

    def patch(self, url: Any, data: Any = None, **kwargs: Any) -> Response:
        return self.request("PATCH", url, data=data, **kwargs)

    def delete(self, url: Any, **kwargs: Any) -> Response:
        return self.request("DELETE", url, **kwargs)


def session() -> Session:
    """A new Session (the old spelling)."""
    return Session()


# the module functions: each call uses a throwaway Session, so a cookie the server sets is gone after the call
def request(method: str, url: Any, **kwargs: Any) -> Response:
    with Session() as throwaway:
        return throwaway.request(method=method, url=url, **kwargs)


def get(url: Any, params: Any = None, **kwargs: Any) -> Response:
    return request("get", url, params=params, **kwargs)


def options(url: Any, **kwargs: Any) -> Response:
    return request("options", url, **kwargs)


def head(url: Any, **kwargs: Any) -> Response:
    kwargs.setdefault("allow_redirects", False)
    return request("head", url, **kwargs)


def post(url: Any, data: Any = None, json: Any = None, **kwargs: Any) -> Response:
    return request("post", url, data=data, json=json, **kwargs)


def put(url: Any, data: Any = None, **kwargs: Any) -> Response:
    return request("put", url, data=data, **kwargs)


def patch(url: Any, data: Any = None, **kwargs: Any) -> Response:
    return request("patch", url, data=data, **kwargs)


def delete(url: Any, **kwargs: Any) -> Response:
    return request("delete", url, **kwargs)
