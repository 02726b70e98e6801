"""A private helper with its own Session, called once and in a loop.

Risk (HTP104): at the call without any loop there is nothing to hoist the
client above: the fix would only move a per-call client to the caller.
RULES.md: HTP104 is never offered where a call site has no loop or gather.
"""
# expect: report-only HTP104
import sys

import requests


def _fetch(base, sku):
    with requests.Session() as session:
        reply = session.get(base + "/item/" + sku, timeout=10)
        return reply.json()["id"]


def main(base):
    print("featured:", _fetch(base, "featured"))
    for sku in ["tea", "cake"]:
        print(sku, _fetch(base, sku))


main(sys.argv[1])
