"""Run each account's checks in its own session, inside an admin session.

Risk (cookies, nesting): each iteration's Session keeps that account's
cookies apart (a guest must stay anonymous); hoisting it above the loop
shares the jar, and nests a second requests.Session inside `admin` (a
mistake issue 9 lists). RULES.md: HTP103 is unsafe, never a safe fix;
whether --unsafe-fixes offers it here is the fix's choice, and where it
does, the guest is reported as the previous user.
"""
# expect: never-safe HTP103
# after-unsafe: differs
import sys

import requests

BASE = sys.argv[1]


def check_accounts(accounts):
    with requests.Session() as admin:
        print(admin.get(BASE + "/item/admin").json()["id"])
        for account in accounts:
            with requests.Session() as session:
                if account != "guest":
                    session.get(BASE + "/login?user=" + account)
                reply = session.get(BASE + "/whoami")
                print(account, reply.text)


check_accounts(["alice", "guest", "bob"])
