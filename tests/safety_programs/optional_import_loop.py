"""A tool that fetches items when requests is installed, and says so if not.

Risk (imports): `try: import requests except ImportError: requests = None`
is an optional import; a fix that adds an unconditional module-level
`import requests` makes the program fail where it used to degrade. The
harness also runs it with requests unimportable. RULES.md: a fix adds a
module-level import only where the module imports the library
unconditionally; never a safe fix here (HTP101 is unsafe).
"""
# expect: never-safe HTP101
# after-unsafe: same
# also-without: requests
import sys

try:
    import requests
except ImportError:
    requests = None


def fetch(base, numbers):
    if requests is None:
        print("offline: install requests to fetch")
        return []
    found = []
    for n in numbers:
        reply = requests.get(base + "/item/" + str(n), timeout=10)
        found.append(reply.text)
    return found


print(fetch(sys.argv[1], [1, 2, 3]))
