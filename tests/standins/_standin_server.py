"""The stand-in HTTP server behind the stand-in `requests` and `httpx`: it records what a server would see, and answers
each request with a deterministic function of it.

The record holds, per request, the method, the full URL (with the query the params made), the headers and cookies
actually sent, the body, and verify/cert. Whether a connection was reused is deliberately not in it: that is the one
thing a fix is meant to change.

The answers: a path ending in `/missing` is 404, one ending in `/error` is 500, anything else 200; a path containing
`login` sets the cookie `sid` for its host; the body is a JSON document (CRLF line breaks, so line splitting can
differ) echoing the method, path, query and the cookies received; it is sent in transfer chunks of a few bytes, so
a streamed read sees chunk borders where a buffered one does not.
"""

from __future__ import annotations

import json
import zlib
from typing import Any, Dict, Iterator, List, Optional, Tuple
from urllib.parse import urlsplit

RECORD: List[Dict[str, Any]] = []
COOKIES_SET = [0]  # how many responses set a cookie (the unsafe comparison only holds when none did)


def reset() -> None:
    """Forget every request (the runner calls it before each program)."""
    RECORD.clear()
    COOKIES_SET[0] = 0


class Answer:
    """What the server sends back for one request."""

    def __init__(self, status: int, reason: str, headers: Dict[str, str], set_cookies: Dict[str, str],
                 body: bytes, chunks: List[bytes]) -> None:
        self.status = status
        self.reason = reason
        self.headers = headers
        self.set_cookies = set_cookies
        self.body = body
        self.chunks = chunks


_REASONS = {200: "OK", 404: "Not Found", 500: "Internal Server Error"}


def serve(method: str, url: str, headers: List[Tuple[str, str]], cookies: List[Tuple[str, str]], body: bytes,
          verify: Any, cert: Any) -> Answer:
    """Record the request as the server sees it and answer it.

    `cookies` are the pairs of the Cookie header in the order sent; a name sent twice is read as its first value,
    as most servers do (that is how a session's jar cookie beats a per-call one of the same name).
    """
    RECORD.append({
        "method": method.upper(),
        "url": url,
        "headers": sorted([k.lower(), v] for k, v in headers),
        "cookies": [[k, v] for k, v in cookies],
        "body": body.decode("latin-1"),
        "verify": repr(verify),
        "cert": repr(cert),
    })
    parts = urlsplit(url)
    path = parts.path or "/"
    status = 404 if path.endswith("/missing") else 500 if path.endswith("/error") else 200
    set_cookies: Dict[str, str] = {}
    if "login" in path:
        set_cookies["sid"] = "s%08x" % zlib.crc32(url.encode())
        COOKIES_SET[0] += 1
    received: Dict[str, str] = {}
    for name, value in cookies:
        received.setdefault(name, value)
    if method.upper() == "HEAD":
        payload = b""
    else:
        document = {"method": method.upper(), "path": path, "query": parts.query,
                    "cookies": dict(sorted(received.items())), "length": len(body)}
        payload = json.dumps(document, indent=1, sort_keys=True).replace("\n", "\r\n").encode() + b"\r\n"
    step = 3 + zlib.crc32(path.encode()) % 5
    chunks = [payload[i:i + step] for i in range(0, len(payload), step)]
    # chunked transfer encoding: a streamed read sees the chunk borders (urllib3 never reads across one)
    response_headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    return Answer(status, _REASONS[status], response_headers, set_cookies, payload, chunks)


class CookieJar:
    """Cookies as both libraries keep them (http.cookiejar underneath): by domain, then name, in insertion order.

    A cookie set without a domain (a per-call `cookies=` dict) goes to every host; one the server set goes back to
    its host. Sending takes the domains in the order they entered the jar, each with its cookies for the host.
    """

    def __init__(self) -> None:
        self._by_domain: Dict[str, Dict[str, str]] = {}

    def set(self, name: str, value: Optional[str], domain: str = "", **_: Any) -> None:
        if value is None:
            for cookies in self._by_domain.values():
                cookies.pop(name, None)
            return
        self._by_domain.setdefault(domain, {})[name] = str(value)

    def get(self, name: str, default: Any = None, domain: Optional[str] = None, path: Any = None) -> Any:
        for cookie_domain, cookies in self._by_domain.items():
            if (domain is None or domain == cookie_domain) and name in cookies:
                return cookies[name]
        return default

    def get_dict(self, domain: Optional[str] = None, path: Any = None) -> Dict[str, str]:
        out: Dict[str, str] = {}
        for cookie_domain, cookies in self._by_domain.items():
            if domain is None or domain == cookie_domain:
                out.update(cookies)
        return out

    def names(self) -> List[str]:
        return [name for cookies in self._by_domain.values() for name in cookies]

    def keys(self) -> List[str]:
        return self.names()

    def items(self) -> List[Tuple[str, str]]:
        return [item for cookies in self._by_domain.values() for item in cookies.items()]

    def update(self, other: "CookieJar") -> None:
        for domain, cookies in other._by_domain.items():
            for name, value in cookies.items():
                self.set(name, value, domain=domain)

    def clear(self, domain: Optional[str] = None, path: Any = None, name: Optional[str] = None) -> None:
        if domain is None:
            self._by_domain.clear()
        elif name is None:
            self._by_domain.pop(domain, None)
        else:
            self._by_domain.get(domain, {}).pop(name, None)

    def copy(self) -> "CookieJar":
        new = type(self)()
        new.update(self)
        return new

    def for_host(self, host: str) -> List[Tuple[str, str]]:
        return [(name, value) for domain, cookies in self._by_domain.items() if domain in ("", host)
                for name, value in cookies.items()]

    def __contains__(self, name: object) -> bool:
        return name in self.names()

    def __getitem__(self, name: str) -> str:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __setitem__(self, name: str, value: str) -> None:
        self.set(name, value)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"<CookieJar{self.items()!r}>"


def host_of(url: str) -> str:
    """The host a URL names (where a cookie the server sets belongs)."""
    return urlsplit(url).hostname or ""


def encode_body(data: Any, json_body: Any, content: Any = None,
                compact_json: bool = False) -> Tuple[bytes, Optional[str]]:
    """The bytes a request body becomes, and its content type (None when there is no body); httpx writes JSON
    without spaces, requests with them."""
    from urllib.parse import urlencode

    if content is not None:
        return (content.encode() if isinstance(content, str) else bytes(content)), None
    if data is not None:
        if isinstance(data, (dict, list, tuple)):
            items = data.items() if isinstance(data, dict) else data
            return urlencode(list(items)).encode(), "application/x-www-form-urlencoded"
        return (data.encode() if isinstance(data, str) else bytes(data)), None
    if json_body is not None:
        separators = (",", ":") if compact_json else None
        return json.dumps(json_body, separators=separators).encode(), "application/json"
    return b"", None


def with_params(url: str, params: Any) -> str:
    """`url` with `params` (a dict or pairs; None values dropped) appended to its query, as both libraries do."""
    from urllib.parse import urlencode

    if not params:
        return url
    if isinstance(params, (str, bytes)):
        extra = params.decode() if isinstance(params, bytes) else params
    else:
        items = params.items() if isinstance(params, dict) else params
        pairs = []
        for key, value in items:
            values = value if isinstance(value, (list, tuple)) else [value]
            pairs.extend((key, v) for v in values if v is not None)
        extra = urlencode(pairs)
    if not extra:
        return url
    base, _, fragment = url.partition("#")
    joined = base + ("&" if "?" in base else "?") + extra
    return joined + ("#" + fragment if fragment else "")
