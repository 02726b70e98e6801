"""A gevent worker that patches after its imports (a late monkey-patch).

Risk (HTP402): none inside the leading block of imports: moving the patch to
the top of it keeps what the program computes. RULES.md: HTP402 is safe there.
"""
# expect: safe HTP402
# needs: gevent
import sys

import requests
from gevent import monkey

monkey.patch_all()

BASE = sys.argv[1]
with requests.Session() as session:
    print([session.get(BASE + "/item/" + n).text for n in "ab"])
