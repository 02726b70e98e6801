"""Save a release archive in one go; the transfer succeeds.

Risk (downloads): none visible when nothing breaks: streaming writes the same
bytes. RULES.md: HTP201 is still unsafe (declared, not applied by the safe
run), and with --unsafe-fixes this program behaves the same.
"""
# expect: unsafe HTP201
# after-unsafe: same
import hashlib
import sys

import requests


def save(url, path):
    reply = requests.get(url, timeout=10)
    reply.raise_for_status()
    with open(path, "wb") as out:
        out.write(reply.content)


save(sys.argv[1] + "/blob?size=300000", "release.tar")
with open("release.tar", "rb") as saved:
    print(hashlib.sha256(saved.read()).hexdigest())
