"""HTP301 pool-smaller-than-workers: a thread pool with more workers than the shared session's connection pool."""

from ..checks import pools
from ..rule import FIX_SAFE, Rule

RULE = Rule(
    code="HTP301",
    name="pool-smaller-than-workers",
    summary="A thread pool with more workers than the shared requests session keeps connections",
    message="{pool} runs {workers} workers on a {client} whose connection pool keeps {size}; the rest are opened and discarded: mount HTTPAdapter(pool_connections={workers}, pool_maxsize={workers})",
    fix=FIX_SAFE,
    fix_sites=(
        'report only where the session the pool uses cannot be found'
    ),
    fix_title="Mount an HTTPAdapter sized to the workers",
    check=pools.pool_smaller_than_workers,
    what_it_does="""\
Checks for a thread pool (`ThreadPoolExecutor`, `multiprocessing.pool.ThreadPool`) with a literal number of
workers N, whose `map` / `submit` (and the other pool methods) is handed a function that uses one
`requests.Session` bound at module level or in the enclosing function, when N exceeds the number of
connections that session keeps per host: 10 by default (`pool_maxsize`), or the literal `pool_maxsize` of
an `HTTPAdapter` mounted on it. It also checks `requests_futures`' `FuturesSession(max_workers=N)` with N
above 10 and no adapter of its own. It is reported at the pool's (or the `FuturesSession`'s) constructor.""",
    why_bad="""\
urllib3 keeps at most `pool_maxsize` idle connections per host. When more threads than that use the session
at once, the extra threads open connections of their own, and when those come back to a full pool urllib3
closes them and logs "Connection pool is full, discarding connection". The next burst of work opens them all
again, with a TCP (and TLS) handshake each. It bites in bursts: measured here, 20 bursts of 16 requests
through a 16-worker pool opened 130 connections with the default pool and 16 with the pool sized to the
workers; one long `map` kept 16 either way.""",
    example="""\
from concurrent.futures import ThreadPoolExecutor
import requests

session = requests.Session()


def fetch(url):
    return session.get(url, timeout=10).status_code


with ThreadPoolExecutor(max_workers=16) as pool:  # HTP301
    codes = list(pool.map(fetch, URLS))
""",
    use_instead="""\
from concurrent.futures import ThreadPoolExecutor
import requests
from requests.adapters import HTTPAdapter

session = requests.Session()
adapter = HTTPAdapter(pool_connections=16, pool_maxsize=16)
session.mount("http://", adapter)
session.mount("https://", adapter)


def fetch(url):
    return session.get(url, timeout=10).status_code


with ThreadPoolExecutor(max_workers=16) as pool:
    codes = list(pool.map(fetch, URLS))
""",
    fix_safety="""\
The fix is safe. It mounts `HTTPAdapter(pool_connections=N, pool_maxsize=N)` on the session for `http://`
and `https://`, right after the statement that creates the session the workers use (first in the body of a
`with ... as session:`), with N the number of workers: the session bound in the enclosing function or at
module level that the finding names, never a new one. The requests are sent exactly as before; the only
change is how many idle connections the session keeps for reuse, so no connection is discarded while all
the workers are busy. After the fix `check` no longer reports the pool.

Report only (no fix offered):
- the session cannot be named: stored on an attribute (`self.session`), bound on the line of an `if` or after
  a `;`, or a `FuturesSession` that sends through a session handed to it;
- an adapter is already mounted on that session (in its own function, or anywhere for a module-level
  session): replacing it would drop its retries or its own sizes;
- a niquests session, whose own adapters carry its settings.

Comments survive the fix.""",
    options="",
    references=(
        "https://requests.readthedocs.io/en/latest/user/advanced/#transport-adapters",
        "https://requests.readthedocs.io/en/latest/api/#requests.adapters.HTTPAdapter",
        "https://urllib3.readthedocs.io/en/stable/advanced-usage.html",
        "https://docs.python.org/3/library/concurrent.futures.html#threadpoolexecutor",
    ),
    valid=(
        """\
# ten workers fit the default pool of ten
from concurrent.futures import ThreadPoolExecutor
import requests

session = requests.Session()


def fetch(url):
    return session.get(url).text


with ThreadPoolExecutor(max_workers=10) as pool:
    pages = list(pool.map(fetch, URLS))
""",
        """\
# the adapter is sized to the workers
from concurrent.futures import ThreadPoolExecutor
import requests
from requests.adapters import HTTPAdapter

session = requests.Session()
session.mount("https://", HTTPAdapter(pool_connections=32, pool_maxsize=32))


def fetch(url):
    return session.get(url).text


with ThreadPoolExecutor(max_workers=32) as pool:
    pages = list(pool.map(fetch, URLS))
""",
        """\
# the number of workers is not a literal
from concurrent.futures import ThreadPoolExecutor
import requests

session = requests.Session()


def fetch(url):
    return session.get(url).text


def crawl(urls, workers):
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fetch, urls))
""",
        """\
# an httpx client has its own limits
from concurrent.futures import ThreadPoolExecutor
import httpx

client = httpx.Client()


def fetch(url):
    return client.get(url).text


with ThreadPoolExecutor(max_workers=16) as pool:
    pages = list(pool.map(fetch, URLS))
""",
        """\
# FuturesSession with ten workers
from requests_futures.sessions import FuturesSession

session = FuturesSession(max_workers=10)
futures = [session.get(url) for url in URLS]
""",
    ),
    invalid=(
        """\
# a session bound in the enclosing function, used by a nested def
from concurrent.futures import ThreadPoolExecutor
import requests


def crawl(urls):
    session = requests.Session()

    def fetch(url):
        return session.get(url).text

    with ThreadPoolExecutor(max_workers=32) as pool:  # HTP301
        return list(pool.map(fetch, urls))
""",
        """\
# mounted adapter smaller than the workers
import concurrent.futures
import requests
from requests.adapters import HTTPAdapter

session = requests.Session()
session.mount("https://", HTTPAdapter(pool_maxsize=20))


def fetch(url):
    return session.get(url).json()


with concurrent.futures.ThreadPoolExecutor(50) as pool:  # HTP301
    results = list(pool.map(fetch, URLS))
""",
        """\
# FuturesSession with more workers than connections
from requests_futures.sessions import FuturesSession

session = FuturesSession(max_workers=20)  # HTP301
futures = [session.get(url) for url in URLS]
""",
        """\
# submit in a loop to an executor bound to a name
from concurrent.futures import ThreadPoolExecutor
import requests

session = requests.Session()


def upload(path):
    with open(path, "rb") as f:
        return session.post(UPLOAD_URL, data=f)


executor = ThreadPoolExecutor(max_workers=24)  # HTP301
futures = [executor.submit(upload, path) for path in PATHS]
""",
        """\
# multiprocessing thread pool with more threads than connections
from multiprocessing.pool import ThreadPool
import requests

session = requests.Session()


def fetch(url):
    return session.get(url).status_code


with ThreadPool(processes=16) as pool:  # HTP301
    codes = pool.map(fetch, URLS)
""",
    ),
)
