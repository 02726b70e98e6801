"""Small multi-module trees written into a test's folder, shared by the cache and plugin tests of the project model."""

from __future__ import annotations

from pathlib import Path
from typing import Dict

CACHE = ".flake8-http-pool-cache"
# A request wrapper in app/http.py and a loop calling it in app/sync.py: HTP102 in http.py only with the model.
WRAPPER = "import requests\n\n\ndef get_json(url):\n    return requests.get(url, timeout=5).json()\n"
LOOP = "from app.http import get_json\n\n\ndef sync(urls):\n    for url in urls:\n        get_json(url)\n"


def write_tree(root: Path, files: Dict[str, str]) -> None:
    """Each relative path's text, folders made as needed."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
