"""Fetch items one by one with aiohttp.request in an async loop.

Risk (HTP101, aiohttp): none visible here (no cookies, no dropped
connections). RULES.md: HTP101 is unsafe: declared by the safe run, applied
with --unsafe-fixes; this program behaves the same.
"""
# expect: unsafe HTP101
# after-unsafe: same
import asyncio
import sys

import aiohttp


async def main(base):
    for n in range(3):
        url = base + "/item/" + str(n)
        async with aiohttp.request("GET", url) as reply:
            print((await reply.json())["id"])


asyncio.run(main(sys.argv[1]))
