"""Fetch bursts of items through a 16-worker pool and a session of main().

Risk (HTP301): none: mounting a sized adapter on the session the workers use
keeps their connections. RULES.md: HTP301 is safe, and the adapter goes on
that session (bound in the enclosing function), not on a new one; after the
fix `check` no longer reports it.
"""
# expect: safe HTP301
import sys
from concurrent.futures import ThreadPoolExecutor

import requests


def main(base):
    session = requests.Session()

    def fetch(n):
        url = base + "/item/" + str(n) + "?slow=1"
        return session.get(url, timeout=10).json()["id"]

    with ThreadPoolExecutor(max_workers=16) as pool:
        for burst in range(3):
            numbers = range(burst * 16, burst * 16 + 16)
            print(burst, list(pool.map(fetch, numbers)))


main(sys.argv[1])
