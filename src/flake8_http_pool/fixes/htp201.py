"""HTP201's fix: stream the request in a `with` and write the body in chunks (the shared command is in `htp2xx.py`).

Run alone: `python -m libcst.tool codemod -x flake8_http_pool.fixes.htp201.UnstreamedDownloadCommand PATH`.
"""

from __future__ import annotations

from .htp2xx import ResponseFixCommand


class UnstreamedDownloadCommand(ResponseFixCommand):
    """HTP201: stream the request in a `with` and write the body in chunks."""

    DESCRIPTION = "HTP201: stream the request in a `with` and write the body in chunks."
    CODE = "HTP201"
