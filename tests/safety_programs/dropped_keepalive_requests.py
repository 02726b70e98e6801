"""Fetch items one by one from a server that drops idle kept-alive connections.

Risk (dropped connections): with a connection per request nothing is reused;
with one Session the next request goes out on a connection the server has
dropped and fails. RULES.md: HTP101 is unsafe; the difference is real.
"""
# expect: unsafe HTP101
# after-unsafe: differs
import sys

import requests

BASE = sys.argv[1]
for n in range(3):
    reply = requests.get(BASE + "/drop/" + str(n), timeout=10)
    print(reply.json()["id"])
