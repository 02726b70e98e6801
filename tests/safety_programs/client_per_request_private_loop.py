"""A private aiohttp helper opening a session per call, awaited in a loop.

Risk (HTP104): a new parameter and one session shared by the loop; nobody
outside this script can call the helper. RULES.md: HTP104 is unsafe
(declared, applied with --unsafe-fixes); this program behaves the same.
"""
# expect: unsafe HTP104
# after-unsafe: same
import asyncio
import sys

import aiohttp


async def _fetch(url):
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as reply:
            return await reply.text()


async def main(base):
    for n in range(3):
        print(await _fetch(base + "/item/" + str(n)))


asyncio.run(main(sys.argv[1]))
