"""Poll an export until the origin stops answering 524.

Risk (retry loops): none to fix: the loop leaves on a successful status and
repeats only on a failed one (`!= 524`). RULES.md: a retry loop is not a loop
scope: no HTP101, and `fix` leaves it alone.
"""
# expect: untouched HTP101
import sys

import requests

URL = sys.argv[1] + "/busy/export?times=2"
while True:
    reply = requests.get(URL, timeout=10)
    if reply.status_code != 524:
        break
    print("origin busy, retrying")
print(reply.json())
