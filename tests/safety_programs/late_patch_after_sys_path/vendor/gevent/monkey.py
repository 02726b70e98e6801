"""The vendored gevent's monkey module (a stand-in: it records the call)."""
PATCHED = []


def patch_all(**options):
    PATCHED.append(options)
