"""The stand-in `requests.adapters`: HTTPAdapter keeps its pool settings; pools are not modelled (no connections)."""

from __future__ import annotations

from typing import Any


class HTTPAdapter:
    """A transport adapter to mount on a Session; the sizes only matter to connection reuse, which is not recorded."""

    def __init__(self, pool_connections: int = 10, pool_maxsize: int = 10, max_retries: Any = 0,
                 pool_block: bool = False) -> None:
        self.pool_connections = pool_connections
        self.pool_maxsize = pool_maxsize
        self.max_retries = max_retries
        self.pool_block = pool_block

    def close(self) -> None:
        pass
