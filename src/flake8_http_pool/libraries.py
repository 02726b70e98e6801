"""The HTTP libraries the rules know: unpooled functions, client constructors, and their aliases."""

from __future__ import annotations

import functools
from typing import Dict, FrozenSet, NamedTuple, Optional, Tuple

REQUEST_VERBS: Tuple[str, ...] = ("get", "options", "head", "post", "put", "patch", "delete", "request")

# Module-level functions that build a connection pool for one request and throw it away.
UNPOOLED_FUNCTIONS: Dict[str, FrozenSet[str]] = {
    "requests": frozenset(REQUEST_VERBS),
    "niquests": frozenset(REQUEST_VERBS),
    "httpx": frozenset(REQUEST_VERBS + ("stream",)),
    "httpx2": frozenset(REQUEST_VERBS + ("stream",)),
    "grequests": frozenset(REQUEST_VERBS),
    "aiohttp": frozenset({"request"}),
    "urllib.request": frozenset({"urlopen", "urlretrieve"}),
}

# `getattr(requests, m)(...)`: RULES.md counts any attribute of requests looked up by `getattr` as an unpooled
# function (code that does this looks up a request verb by name), and so the same under niquests, httpx and
# httpx2, whose module-level functions are those verbs too. The name is unknown, so the function stands as
# `requests.*` (ANY_ATTRIBUTE). A literal name is the function itself, of any library: `getattr(requests, "get")`
# is `requests.get`, `getattr(grequests, "get")` is `grequests.get`. grequests, aiohttp and urllib.request are
# not here: RULES.md names their functions one by one, and their other attributes (`grequests.map`,
# `aiohttp.ClientSession`, `urllib.request.Request`) open no pool of their own.
GETATTR_ANY: FrozenSet[str] = frozenset({"requests", "niquests", "httpx", "httpx2"})
ANY_ATTRIBUTE = "*"

CLIENT_CONSTRUCTORS: FrozenSet[str] = frozenset(
    {
        "requests.Session",
        "requests.session",
        "niquests.Session",
        "niquests.AsyncSession",
        "httpx.Client",
        "httpx.AsyncClient",
        "httpx2.Client",
        "httpx2.AsyncClient",
        "aiohttp.ClientSession",
        "aiohttp.TCPConnector",
        "urllib3.PoolManager",
        "urllib3.ProxyManager",
        "urllib3.HTTPConnectionPool",
        "urllib3.HTTPSConnectionPool",
        "urllib3.connection_from_url",
        "requests_futures.sessions.FuturesSession",
    }
)

# Submodule paths that re-export the public names: `requests.api.get` is `requests.get`.
_CANONICAL_PREFIXES: Tuple[Tuple[str, str], ...] = (
    ("requests.packages.urllib3.", "urllib3."),
    ("requests.api.", "requests."),
    ("requests.sessions.", "requests."),
    ("niquests.api.", "niquests."),
    ("niquests.sessions.", "niquests."),
    ("niquests.async_session.", "niquests."),
    ("httpx._api.", "httpx."),
    ("httpx._client.", "httpx."),
    ("httpx2._api.", "httpx2."),
    ("httpx2._client.", "httpx2."),
    ("grequests.api.", "grequests."),
    ("aiohttp.client.", "aiohttp."),
    ("aiohttp.connector.", "aiohttp."),
    ("urllib3.poolmanager.", "urllib3."),
    ("urllib3.connectionpool.", "urllib3."),
)

# The top-level modules a binding must come from before any rule looks at it.
ROOT_MODULES: FrozenSet[str] = frozenset(
    {
        "requests",
        "niquests",
        "httpx",
        "httpx2",
        "grequests",
        "aiohttp",
        "urllib",
        "urllib3",
        "requests_futures",
        "gevent",
        "ssl",
        "socket",
        "http",
        "concurrent",
        "multiprocessing",
        "threading",
        "asyncio",
        "functools",
        "shutil",
        "io",
        "pathlib",
        "importlib",
        "aiofiles",
        "tempfile",
        "gzip",
        "codecs",
        "os",
    }
)

# Names a star import from a library module brings in that the rules care about.
STAR_EXPORTS: Dict[str, FrozenSet[str]] = {
    "requests": frozenset(REQUEST_VERBS + ("Session", "session")),
    "niquests": frozenset(REQUEST_VERBS + ("Session", "AsyncSession")),
    "httpx": frozenset(REQUEST_VERBS + ("stream", "Client", "AsyncClient")),
    "httpx2": frozenset(REQUEST_VERBS + ("stream", "Client", "AsyncClient")),
    "grequests": frozenset(REQUEST_VERBS),
    "aiohttp": frozenset({"request", "ClientSession", "TCPConnector"}),
    "urllib.request": frozenset({"urlopen", "urlretrieve"}),
    "urllib3": frozenset(
        {"PoolManager", "ProxyManager", "HTTPConnectionPool", "HTTPSConnectionPool", "connection_from_url"}
    ),
}


class Family(NamedTuple):
    """How a library is talked about in messages and fixes."""

    library: str  # the name users import: "requests", "httpx", ...
    client: str  # the pooled client to use instead: "requests.Session"
    variable: str  # the conventional name of that client: "session", "client"
    is_async: bool


FAMILIES: Dict[str, Family] = {
    "requests": Family("requests", "requests.Session", "session", False),
    "niquests": Family("niquests", "niquests.Session", "session", False),
    "httpx": Family("httpx", "httpx.Client", "client", False),
    "httpx2": Family("httpx2", "httpx2.Client", "client", False),
    "grequests": Family("grequests", "requests.Session", "session", False),
    "aiohttp": Family("aiohttp", "aiohttp.ClientSession", "session", True),
    "urllib.request": Family("urllib.request", "urllib3.PoolManager", "http", False),
}

# Clients whose request methods block (HTP403) and whose responses are requests-style (HTP202).
SYNC_CLIENTS: FrozenSet[str] = frozenset(
    {"requests.Session", "requests.session", "niquests.Session", "httpx.Client", "httpx2.Client"}
)
REQUESTS_STYLE: FrozenSet[str] = frozenset({"requests", "niquests", "grequests"})
CLIENT_REQUEST_METHODS: FrozenSet[str] = frozenset(REQUEST_VERBS + ("send", "stream", "ws_connect"))


@functools.lru_cache(maxsize=8192)
def canonical(qualname: str) -> str:
    """Map a re-exported path to the public one: `requests.api.get` -> `requests.get`."""
    for prefix, replacement in _CANONICAL_PREFIXES:
        if qualname.startswith(prefix):
            return replacement + qualname[len(prefix):]
    if qualname == "requests_futures.FuturesSession":
        return "requests_futures.sessions.FuturesSession"
    return qualname


# The name of every unpooled function, whatever its module.
UNPOOLED_NAMES: FrozenSet[str] = frozenset(name for names in UNPOOLED_FUNCTIONS.values() for name in names)


def unpooled_family(qualname: str) -> Optional[str]:
    """The library of an unpooled function (`requests.get` -> "requests"), or None."""
    module, _, name = qualname.rpartition(".")
    names = UNPOOLED_FUNCTIONS.get(module)
    if names is not None and (name in names or (name == ANY_ATTRIBUTE and module in GETATTR_ANY)):
        return module
    return None


def shown(qualname: str) -> str:
    """How messages name an unpooled function: by its name, or `getattr(requests, ...)` when it is looked up by
    a name the source does not spell out."""
    module, _, name = qualname.rpartition(".")
    return f"getattr({module}, ...)" if name == ANY_ATTRIBUTE else qualname


def constructor_family(qualname: str) -> str:
    """The library a client constructor belongs to, for messages."""
    if qualname.startswith("requests_futures."):
        return "requests_futures"
    return qualname.split(".", 1)[0]
