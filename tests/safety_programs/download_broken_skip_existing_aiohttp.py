"""Download reports with aiohttp unless present; one transfer breaks midway.

Risk (downloads): here the file is opened before `await resp.read()`, so the
original leaves an empty file on a broken transfer; streamed with
`iter_chunked` it leaves the partial bytes instead, and the exists() check
keeps whichever it got. RULES.md: HTP201 is unsafe.
"""
# expect: unsafe HTP201
# after-unsafe: differs
import asyncio
import sys
from pathlib import Path

import aiohttp

BASE = sys.argv[1]


async def download(path, name):
    target = Path(name)
    if target.exists():
        print(name, "already there:", target.stat().st_size, "bytes")
        return
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(BASE + path) as resp:
                with open(name, "wb") as out:
                    out.write(await resp.read())
        print(name, "saved")
    except aiohttp.ClientError as error:
        print(name, "failed:", type(error).__name__)


async def main():
    await download("/blob?size=4096", "small.bin")
    await download("/broken/big?size=200000&sent=50000", "big.bin")
    print("-- the next scheduled run")
    await download("/broken/big?size=200000&sent=50000", "big.bin")


asyncio.run(main())
