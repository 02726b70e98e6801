"""Check every user's identity concurrently with grequests.

Risk (cookies): passing one `session=` to every grequests call shares its
cookie jar, so each user's per-call `sid` meets the cookies the server set
for the others. RULES.md: HTP101 is report only with per-call `cookies=`.
"""
# expect: report-only HTP101
# needs: grequests
import sys

import grequests

SIDS = {"alice": "s-alice", "bob": "s-bob", "carol": "s-carol"}

URL = sys.argv[1] + "/whoami"
pending = [
    grequests.get(URL, cookies={"sid": sid}, timeout=10)
    for sid in SIDS.values()
]
for user, reply in zip(SIDS, grequests.map(pending)):
    print(user, reply.text)
