"""A sync job whose start-up code wraps `requests.get` (headers, timeout).

Risk (wrappers): `bootstrap.install()` assigns `requests.get = wrapper`; after
HTP101's fix the loop calls `session.get`, the wrapper no longer applies and
the server stops seeing `X-Client`. RULES.md: HTP101 is report only where the
project wraps the rewritten name (`requests.get = wrapper`).
"""
# expect: report-only HTP101
import sys

import requests

import bootstrap


def main(base):
    for n in range(3):
        reply = requests.get(base + "/headers")
        print(n, reply.json()["x-client"])


if __name__ == "__main__":
    bootstrap.install()
    main(sys.argv[1])
