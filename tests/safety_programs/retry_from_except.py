"""Fetch a report, retrying from the `except` while the origin is busy.

Risk (retry loops): none to fix: the loop returns as soon as a request
succeeds, so it makes one request when things go well, and a failed
connection is not worth reusing. RULES.md: a retry loop is not a loop scope:
no HTP101, and `fix` leaves it alone.
"""
# expect: untouched HTP101
import sys
import time

import requests


def fetch_report(url):
    for attempt in range(3):
        try:
            reply = requests.get(url, timeout=10)
            reply.raise_for_status()
            return reply.json()
        except requests.RequestException as error:
            print("attempt", attempt + 1, "failed:", type(error).__name__)
            time.sleep(0.01)
    raise SystemExit("gave up")


print(fetch_report(sys.argv[1] + "/busy/report?times=2"))
