"""Read a chunked text response by joining 1 KiB chunks.

Risk (streams): none: joined chunks are the same bytes. RULES.md: HTP202 is
safe for `iter_content(chunk_size=N)` with a literal N, chunks only joined.
"""
# expect: safe HTP202
import hashlib
import sys

import requests

URL = sys.argv[1] + "/chunked?lines=300"
reply = requests.get(URL, timeout=10)
body = b"".join(reply.iter_content(chunk_size=1024))
print(len(body), hashlib.sha256(body).hexdigest())
