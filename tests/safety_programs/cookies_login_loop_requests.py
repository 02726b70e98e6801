"""Log each user in, then ask the server who is calling without a cookie.

Risk (cookies): without a session no cookie is ever sent back, so `/whoami`
answers `anonymous`; with one Session around the loop the cookie set by the
login comes back, and the program now acts as each user. RULES.md: HTP101 is
unsafe (a session keeps cookies): the safe run leaves it, --unsafe-fixes
applies it, and the difference is real.
"""
# expect: unsafe HTP101
# after-unsafe: differs
import sys

import requests

BASE = sys.argv[1]
for user in ["alice", "bob"]:
    login = requests.get(BASE + "/login?user=" + user, timeout=10)
    print(login.text)
    print(requests.get(BASE + "/whoami", timeout=10).text)
