"""HTP401-HTP402: gevent monkey-patching that pyOpenSSL or a late patch undoes."""
from __future__ import annotations
def gevent_with_pyopenssl(analysis): return ()
def late_monkey_patch(analysis): return ()
