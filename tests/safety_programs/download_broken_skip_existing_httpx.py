"""Download reports with httpx unless present; one transfer breaks midway.

Risk (downloads): read whole, a broken transfer raises before the file is
opened; streamed (`httpx.stream` + `iter_bytes`) it leaves a partial file that
the exists() check keeps. RULES.md: HTP201 is unsafe.
"""
# expect: unsafe HTP201
# after-unsafe: differs
import sys
from pathlib import Path

import httpx

BASE = sys.argv[1]


def download(path, name):
    target = Path(name)
    if target.exists():
        print(name, "already there:", target.stat().st_size, "bytes")
        return
    try:
        reply = httpx.get(BASE + path, timeout=10)
        with open(name, "wb") as out:
            out.write(reply.content)
        print(name, "saved")
    except httpx.HTTPError as error:
        print(name, "failed:", type(error).__name__)


download("/blob?size=4096", "small.bin")
download("/broken/big?size=200000&sent=50000", "big.bin")
print("-- the next scheduled run")
download("/broken/big?size=200000&sent=50000", "big.bin")
