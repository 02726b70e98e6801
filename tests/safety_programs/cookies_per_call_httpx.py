"""Report each user's identity with httpx, sending that user's own cookie.

Risk (cookies): an httpx.Client keeps the cookies the server sets; a per-call
`cookies=` is merged with the client's jar, so later users send the first
user's `sid` too. RULES.md: HTP101 is report only with per-call `cookies=`.
"""
# expect: report-only HTP101
import sys

import httpx

SIDS = {"alice": "s-alice", "bob": "s-bob", "carol": "s-carol"}

URL = sys.argv[1] + "/whoami"
for user, sid in SIDS.items():
    reply = httpx.get(URL, cookies={"sid": sid})
    print(user, reply.text)
