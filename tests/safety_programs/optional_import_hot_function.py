"""Look items up one by one; requests is optional (`except ImportError: pass`).

Risk (imports, HTP102): `_HTTP_SESSION = requests.Session()` written after
this `try` raises NameError at import time where requests is missing (the
program ran in offline mode before). The harness also runs it with requests
unimportable. RULES.md: HTP102 is unsafe, and where the library is imported
optionally the fix uses that import's scope or is not offered.
"""
# expect: never-safe HTP102
# after-unsafe: same
# also-without: requests
import sys

try:
    import requests
except ImportError:
    pass  # offline mode works without it

ONLINE = "requests" in globals()


def lookup(base, n):
    return requests.get(base + "/item/" + str(n), timeout=10).text


def main(base):
    if not ONLINE:
        print("offline: nothing to look up")
        return
    for n in range(3):
        print(lookup(base, n))


main(sys.argv[1])
