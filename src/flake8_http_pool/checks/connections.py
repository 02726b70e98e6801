"""HTP101-HTP104: connections thrown away by unpooled calls and clients made per iteration or per call."""
from __future__ import annotations
def unpooled_call_in_loop(analysis): return ()
def unpooled_call_in_hot_function(analysis): return ()
def client_created_in_loop(analysis): return ()
def client_per_request(analysis): return ()
