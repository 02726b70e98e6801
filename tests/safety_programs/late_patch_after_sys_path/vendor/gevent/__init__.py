"""The gevent this application vendors (a pinned build shipped with it)."""
