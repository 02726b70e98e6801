"""HTP202's fix: add `stream=True` and use the response in a `with` (the shared command is in `htp2xx.py`).

Run alone: `python -m libcst.tool codemod -x flake8_http_pool.fixes.htp202.StreamApiWithoutStreamCommand PATH`.
"""

from __future__ import annotations

from .htp2xx import ResponseFixCommand


class StreamApiWithoutStreamCommand(ResponseFixCommand):
    """HTP202: add `stream=True` and use the response in a `with`."""

    DESCRIPTION = "HTP202: add `stream=True` and use the response in a `with`."
    CODE = "HTP202"
