"""Number the lines of a chunked text response.

Risk (streams): streamed, `iter_lines()` splits each chunk on its own, and a
CRLF split between two chunks (`...\\r` | `\\n...`) gives an extra empty
line after every line. RULES.md: HTP202 is unsafe for `iter_lines()`.
"""
# expect: unsafe HTP202
# after-unsafe: differs
import sys

import requests

URL = sys.argv[1] + "/chunked?lines=4"
reply = requests.get(URL, timeout=10)
for number, line in enumerate(reply.iter_lines()):
    print(number, line.decode())
