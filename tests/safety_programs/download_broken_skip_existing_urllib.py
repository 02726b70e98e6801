"""Download reports with urllib unless present; one transfer breaks midway.

Risk (downloads): `resp.read()` raises IncompleteRead on a short body (the
file, opened first, stays empty and the run says it failed);
`shutil.copyfileobj(resp, f)` reads in pieces, and http.client then stops
quietly at the early end: a partial file, reported as saved and kept by the
exists() check. RULES.md: HTP201 is unsafe.
"""
# expect: unsafe HTP201
# after-unsafe: differs
import http.client
import sys
import urllib.request
from pathlib import Path

BASE = sys.argv[1]


def download(path, name):
    target = Path(name)
    if target.exists():
        print(name, "already there:", target.stat().st_size, "bytes")
        return
    try:
        with urllib.request.urlopen(BASE + path, timeout=10) as resp:
            with open(name, "wb") as out:
                out.write(resp.read())
        print(name, "saved")
    except (OSError, http.client.HTTPException) as error:
        print(name, "failed:", type(error).__name__)


download("/blob?size=4096", "small.bin")
download("/broken/big?size=200000&sent=50000", "big.bin")
print("-- the next scheduled run")
download("/broken/big?size=200000&sent=50000", "big.bin")
