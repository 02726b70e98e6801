"""An async lookup that calls requests (blocking), gathered over ids.

Risk (re-flagged code): after HTP102's fix the blocking call goes through
`_HTTP_SESSION` inside an `async def`; it still blocks the event loop and
must still be reported as HTP403. RULES.md: HTP102 is unsafe, and a fix never
hides another rule's finding.
"""
# expect: unsafe HTP102
# after-unsafe: same
import asyncio
import sys

import requests


async def lookup(base, n):
    reply = requests.get(base + "/item/" + str(n), timeout=10)
    return reply.json()["id"]


async def main(base):
    print(await asyncio.gather(*(lookup(base, n) for n in range(3))))


asyncio.run(main(sys.argv[1]))
