"""Open two feeds first and read them later, keeping their iterators.

Risk (streams): the iterators escape the statement that made them; streamed
inside a `with`, they are read after the response is closed and come back
empty (or fail). RULES.md: HTP202 is report only where the iterator escapes
(stored, returned, passed on).
"""
# expect: report-only HTP202
import sys

import requests

with requests.Session() as session:
    feeds = []
    for name in ("news", "sport"):
        reply = session.get(sys.argv[1] + "/chunked?lines=3")
        feeds.append(reply.iter_content(chunk_size=64))
    for feed in feeds:
        print(b"".join(feed).count(b"\n"))
