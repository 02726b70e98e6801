"""HTP203's fix: use the streamed response in a `with` (the shared command is in `htp2xx.py`).

Run alone: `python -m libcst.tool codemod -x flake8_http_pool.fixes.htp203.StreamedResponseNotClosedCommand PATH`.
"""

from __future__ import annotations

from .htp2xx import ResponseFixCommand


class StreamedResponseNotClosedCommand(ResponseFixCommand):
    """HTP203: use the streamed response in a `with`."""

    DESCRIPTION = "HTP203: use the streamed response in a `with`."
    CODE = "HTP203"
