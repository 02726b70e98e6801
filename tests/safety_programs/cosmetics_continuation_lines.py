"""A loop whose request call continues on an aligned second line.

Risk (cosmetics): `session.` is shorter than `requests.`, so the continuation
line is no longer aligned (E127/E128) unless the fix re-aligns it; fixed code
must pass flake8's default checks where the original did. RULES.md: HTP101
is unsafe; continuation lines stay aligned, no trailing whitespace, no blank
line after the new `with` header.
"""
# expect: unsafe HTP101
# after-unsafe: same
import sys

import requests

BASE = sys.argv[1]
for n in range(3):
    reply = requests.get(BASE + "/item/" + str(n),
                         timeout=10)
    print(reply.json()["id"])
