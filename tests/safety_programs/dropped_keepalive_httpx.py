"""Fetch items with httpx from a server that drops kept-alive connections.

Risk (dropped connections): one httpx.Client reuses the connection the
server dropped, and the next request fails (RemoteProtocolError). RULES.md:
HTP101 is unsafe; the difference is real.
"""
# expect: unsafe HTP101
# after-unsafe: differs
import sys

import httpx


def main(base):
    for n in range(3):
        reply = httpx.get(base + "/drop/" + str(n), timeout=10)
        print(reply.json()["id"])


main(sys.argv[1])
