"""HTP201-HTP203: response bodies held whole in memory, and streamed responses never closed."""
from __future__ import annotations
def unstreamed_download(analysis): return ()
def stream_api_without_stream(analysis): return ()
def streamed_response_not_closed(analysis): return ()
