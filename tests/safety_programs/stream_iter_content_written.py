"""Save a chunked text response to a file, 1 KiB at a time.

Risk (streams): none: chunks of a literal size that are only written give
the same file however the body arrives. RULES.md: HTP202 is safe for
`iter_content(chunk_size=N)` with a literal N whose chunks are only written.
"""
# expect: safe HTP202
import sys
from pathlib import Path

import requests

URL = sys.argv[1] + "/chunked?lines=300"
reply = requests.get(URL, timeout=10)
with open("lines.txt", "wb") as out:
    for chunk in reply.iter_content(chunk_size=1024):
        out.write(chunk)
print(Path("lines.txt").stat().st_size)
