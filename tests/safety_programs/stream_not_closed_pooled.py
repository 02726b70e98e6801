"""Peek at the first line of three streamed responses from one session.

Risk (HTP203): none: a `with` around a response used in one block only
returns its connection to the pool sooner. RULES.md: HTP203 is safe.
"""
# expect: safe HTP203
import sys

import requests


def main(base):
    with requests.Session() as session:
        for n in range(3):
            url = base + "/chunked?lines=" + str(n + 2)
            reply = session.get(url, stream=True, timeout=10)
            print(n, reply.status_code, next(reply.iter_lines()))


main(sys.argv[1])
