"""Fetch everything if requests is installed; the import sits in a `try`.

Risk (imports): the lazy, optional import must stay where it is; a fix that
adds a module-level `import requests` breaks the program where requests is
missing (it ran fine and said so before). The harness also runs it with
requests unimportable. RULES.md: a fix uses the import's scope or is not
offered; never a safe fix.
"""
# expect: never-safe HTP101
# after-unsafe: same
# also-without: requests
import sys


def fetch_all(base, numbers):
    try:
        import requests
    except ImportError:
        print("requests is not installed: nothing fetched")
        return []
    found = []
    for n in numbers:
        reply = requests.get(base + "/item/" + str(n), timeout=10)
        found.append(reply.text)
    return found


print(fetch_all(sys.argv[1], [6, 7]))
