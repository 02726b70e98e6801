"""Report each user's identity, sending that user's own session cookie.

Risk (cookies): a Session keeps the `sid` the server sets and sends it back; a
per-call `cookies={"sid": ...}` then loses to (or travels beside) the jar's
cookie of the same name, so every user after the first acts as the first.
RULES.md: HTP101 is report only where the call passes per-call `cookies=`.
"""
# expect: report-only HTP101
import sys

import requests

SIDS = {"alice": "s-alice", "bob": "s-bob", "carol": "s-carol"}


def main(base):
    for user, sid in SIDS.items():
        response = requests.get(
            base + "/whoami", cookies={"sid": sid}, timeout=10
        )
        print(user, response.text)


if __name__ == "__main__":
    main(sys.argv[1])
