"""A helper that logs a user in and reports the server's view of the caller.

Risk (cookies): HTP102's module-level `_HTTP_SESSION` keeps every cookie the
server sets for the whole process and every caller. RULES.md: HTP102 is
unsafe; here the difference is real (`anonymous` becomes the last user).
"""
# expect: unsafe HTP102
# after-unsafe: differs
import sys

import requests


def audit(base, user):
    requests.get(base + "/login?user=" + user, timeout=10)
    return requests.get(base + "/whoami", timeout=10).text


for name in ["alice", "bob"]:
    print(name, audit(sys.argv[1], name))
