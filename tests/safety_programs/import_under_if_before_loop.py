"""Sync records, importing requests under an `if` only in online mode.

Risk (imports): `requests` is local to `sync` and bound only when `online`;
a session opened above the loop fails with UnboundLocalError on the offline
call whose loop never runs. RULES.md: a fix keeps the import's scope or is
not offered, and never as a safe fix.
"""
# expect: never-safe HTP101
# after-unsafe: same
import sys


def sync(base, numbers, online):
    if online:
        import requests
    results = []
    for n in numbers:
        reply = requests.get(base + "/item/" + str(n), timeout=10)
        results.append(reply.text)
    return results


print(sync(sys.argv[1], [], online=False))
print(sync(sys.argv[1], [4, 5], online=True))
