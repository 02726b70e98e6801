"""Call an mTLS API as each tenant; the project pins requests >= 2.32.

Risk (verify/cert): none with requests >= 2.32, which keys its pools by
`cert=`/`verify=`. RULES.md: HTP101 is unsafe (declared, applied with
--unsafe-fixes) but offered here, and the program behaves the same.
argv: http base, https base, CA file, alice's and bob's certificates.
"""
# expect: unsafe HTP101
# after-unsafe: same
import sys

import requests

HTTPS, CA, ALICE, BOB = sys.argv[2:6]
TENANTS = [("alice", ALICE), ("bob", BOB), ("public", None)]
for tenant, cert in TENANTS:
    reply = requests.get(HTTPS + "/cert", cert=cert, verify=CA)
    print(tenant, reply.text)
