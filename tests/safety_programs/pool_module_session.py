"""Fetch bursts of items through a 16-worker pool and a module-level session.

Risk (HTP301): none: a sized adapter keeps up to 16 pooled connections
instead of 10. RULES.md: HTP301 is safe.
"""
# expect: safe HTP301
import sys
from concurrent.futures import ThreadPoolExecutor

import requests

BASE = sys.argv[1]
session = requests.Session()


def fetch(n):
    url = BASE + "/item/" + str(n) + "?slow=1"
    return session.get(url, timeout=10).json()["id"]


with ThreadPoolExecutor(max_workers=16) as pool:
    for burst in range(3):
        numbers = range(burst * 16, burst * 16 + 16)
        print(burst, list(pool.map(fetch, numbers)))
