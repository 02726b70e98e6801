"""HTP403: blocking HTTP calls inside `async def`."""
from __future__ import annotations
def blocking_http_in_async(analysis): return ()
