"""Fetch items in a loop with urllib.request.urlopen.

Risk (urllib): urllib has no session to share; RULES.md: HTP101 on
`urllib.request.urlopen` is report only.
"""
# expect: report-only HTP101
import json
import sys
import urllib.request

for n in range(3):
    url = sys.argv[1] + "/item/" + str(n)
    with urllib.request.urlopen(url, timeout=10) as reply:
        print(json.load(reply)["id"])
