"""Fetch items concurrently with grequests, a request per item.

Risk (HTP101, grequests): the fix passes `session=session` instead of calling
through it (and must not leave trailing whitespace). RULES.md: HTP101 is
unsafe: declared, applied with --unsafe-fixes; this program behaves the same.
"""
# expect: unsafe HTP101
# after-unsafe: same
# needs: grequests
import sys

import grequests

pending = [
    grequests.get(sys.argv[1] + "/item/" + str(n), timeout=10)
    for n in range(4)
]
print([reply.json()["id"] for reply in grequests.map(pending)])
