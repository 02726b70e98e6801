"""Concurrent fetches with grequests, imported after requests.

Risk (HTP402): none: `import grequests` (which patches with gevent) moves to
the top of the leading import block. RULES.md: HTP402 is safe there.
"""
# expect: safe HTP402
# needs: grequests
import sys

import requests
import grequests

BASE = sys.argv[1]
with requests.Session() as session:
    pending = [
        grequests.get(BASE + "/item/" + str(n), session=session)
        for n in range(3)
    ]
    print([r.json()["id"] for r in grequests.map(pending)])
