"""Fetch ids, importing requests only once there is work (inside the loop).

Risk (imports): the function-local `import requests` makes `requests` a local
name of the function; a `with requests.Session()` written above the loop runs
before that import and raises UnboundLocalError on every call, even for an
empty list. RULES.md: the fix uses that import's scope or is not offered; it
is never a safe fix (HTP101 is unsafe).
"""
# expect: never-safe HTP101
# after-unsafe: same
import sys


def fetch_ids(base, numbers):
    found = []
    for n in numbers:
        import requests

        reply = requests.get(base + "/item/" + str(n), timeout=10)
        found.append(reply.text)
    return found


print(fetch_ids(sys.argv[1], []))
print(fetch_ids(sys.argv[1], [1, 2, 3]))
