"""HTP301: thread pools with more workers than the shared session keeps connections."""
from __future__ import annotations
def pool_smaller_than_workers(analysis): return ()
