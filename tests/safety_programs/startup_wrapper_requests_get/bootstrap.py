"""Start-up: every requests.get of this app sends X-Client and a timeout."""
import functools

import requests

_plain_get = requests.get


@functools.wraps(_plain_get)
def _get_with_defaults(url, **kwargs):
    kwargs.setdefault("timeout", 10)
    headers = kwargs.setdefault("headers", {})
    headers.setdefault("X-Client", "inventory-sync/1.0")
    return _plain_get(url, **kwargs)


def install():
    requests.get = _get_with_defaults
