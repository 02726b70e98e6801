"""Report the pieces a chunked response arrives in.

Risk (streams): without stream=True the body is already in memory and
`iter_content(chunk_size=None)` yields it as one piece; with stream=True it
yields each piece as it arrives. RULES.md: HTP202 is unsafe for
`iter_content(chunk_size=None)`.
"""
# expect: unsafe HTP202
# after-unsafe: differs
import sys

import requests

URL = sys.argv[1] + "/chunked?lines=4"
reply = requests.get(URL, timeout=10)
sizes = [len(part) for part in reply.iter_content(chunk_size=None)]
print("pieces:", sizes)
