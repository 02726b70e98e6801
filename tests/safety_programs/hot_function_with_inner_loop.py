"""A per-user sync with its own loop of requests, called for every user.

Risk (re-flagged code): a Session written around the inner loop sits in a
function that runs many times: a client per call, HTP104. RULES.md: HTP101 is
unsafe; there the site gets the hot function's fix (or none), and `check`
after the fix reports nothing the fix wrote.
"""
# expect: unsafe HTP101
# after-unsafe: same
import sys

import requests


def sync_user(base, user):
    ids = []
    for n in range(2):
        url = base + "/item/" + user + "-" + str(n)
        ids.append(requests.get(url, timeout=10).json()["id"])
    return ids


for name in ["alice", "bob"]:
    print(name, sync_user(sys.argv[1], name))
