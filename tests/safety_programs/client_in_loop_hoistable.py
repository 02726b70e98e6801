"""An httpx.Client built for every item of a loop.

Risk (HTP103): hoisting shares cookies and auth between iterations; here
there are none, so this program behaves the same. RULES.md: HTP103 is unsafe:
declared by the safe run, applied with --unsafe-fixes.
"""
# expect: unsafe HTP103
# after-unsafe: same
import sys

import httpx


def main(base):
    for n in range(3):
        with httpx.Client(timeout=10) as client:
            reply = client.get(base + "/item/" + str(n))
            print(reply.json()["id"])


main(sys.argv[1])
