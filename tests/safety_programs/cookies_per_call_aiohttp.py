"""Report each user's identity with aiohttp, one request per user's cookie.

Risk (cookies): one aiohttp.ClientSession shares its cookie jar between the
users of the loop. RULES.md: HTP101 is report only with per-call `cookies=`
(whatever the library: a jar that accepts the cookie breaks the program).
"""
# expect: report-only HTP101
import asyncio
import sys

import aiohttp

SIDS = {"alice": "s-alice", "bob": "s-bob", "carol": "s-carol"}


async def main(base):
    for user, sid in SIDS.items():
        async with aiohttp.request(
            "GET", base + "/whoami", cookies={"sid": sid}
        ) as response:
            print(user, await response.text())


asyncio.run(main(sys.argv[1]))
