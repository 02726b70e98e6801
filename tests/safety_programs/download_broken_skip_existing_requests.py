"""Download reports unless already present; one transfer breaks midway.

Risk (downloads): the original reads the whole body before it opens the
file, so a broken transfer leaves no file and the next run retries it.
Streamed to the file, the break leaves a partial file, and the
download-if-missing check then keeps it forever. RULES.md: HTP201 is unsafe;
the safe run must not change this program.
"""
# expect: unsafe HTP201
# after-unsafe: differs
import sys
from pathlib import Path

import requests

BASE = sys.argv[1]


def download(path, name):
    target = Path(name)
    if target.exists():
        print(name, "already there:", target.stat().st_size, "bytes")
        return
    try:
        reply = requests.get(BASE + path, timeout=10)
        target.write_bytes(reply.content)
        print(name, "saved")
    except requests.RequestException as error:
        print(name, "failed:", type(error).__name__)


download("/blob?size=4096", "small.bin")
download("/broken/big?size=200000&sent=50000", "big.bin")
print("-- the next scheduled run")
download("/broken/big?size=200000&sent=50000", "big.bin")
