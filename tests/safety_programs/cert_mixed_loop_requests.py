"""Call an mTLS API as each tenant, each with its own client certificate.

Risk (verify/cert): before requests 2.32 a pooled connection was reused
whatever the call's `cert=` (CVE-2024-35195): every tenant would be the first
one. This project does not pin requests. RULES.md: HTP101 is report only for
a loop mixing `verify=`/`cert=` values unless requests is pinned >= 2.32.
argv: http base, https base, CA file, alice's and bob's certificates.
"""
# expect: report-only HTP101
import sys

import requests

HTTPS, CA, ALICE, BOB = sys.argv[2:6]
TENANTS = [("alice", ALICE), ("bob", BOB), ("public", None)]
for tenant, cert in TENANTS:
    reply = requests.get(HTTPS + "/cert", cert=cert, verify=CA)
    print(tenant, reply.text)
