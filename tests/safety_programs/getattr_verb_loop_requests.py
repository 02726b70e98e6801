"""Fetch each item with the verb a table names for it.

Risk (HTP101 through `getattr`): `getattr(requests, verb)` looks a module
function up by name; `getattr(session, verb)` would find another attribute, or
none, for a name the module and a session do not share. RULES.md: the fix is
report only.
argv: http base.
"""
# expect: report-only HTP101
import sys

import requests

BASE = sys.argv[1]
for verb, item in [("get", 1), ("get", 2), ("get", 3)]:
    reply = getattr(requests, verb)(f"{BASE}/item/{item}", timeout=10)
    print(verb, item, reply.status_code, reply.json())
