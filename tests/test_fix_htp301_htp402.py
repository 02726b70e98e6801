"""HTP301's and HTP402's codemods also run alone through `python -m libcst.tool codemod`, planning by themselves."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CASES = [
    (
        "flake8_http_pool.fixes.htp301.PoolSmallerThanWorkersCommand",
        "from concurrent.futures import ThreadPoolExecutor\nimport requests\n\nsession = requests.Session()\n\n\n"
        "def fetch(url):\n    return session.get(url).text\n\n\n"
        "with ThreadPoolExecutor(max_workers=16) as pool:\n    pages = list(pool.map(fetch, URLS))\n",
        'session.mount("https://", HTTPAdapter(pool_connections=16, pool_maxsize=16))',
    ),
    (
        "flake8_http_pool.fixes.htp402.LateMonkeyPatchCommand",
        "import requests\nfrom gevent import monkey\n\nmonkey.patch_all()\n",
        "from gevent import monkey\n\nmonkey.patch_all()\n\nimport requests\n",
    ),
]


@pytest.mark.parametrize("command, source, expected", CASES, ids=["HTP301", "HTP402"])
def test_codemod_runs_alone(tmp_path: Path, command: str, source: str, expected: str) -> None:
    path = tmp_path / "module.py"
    path.write_text(source)
    result = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "-x", "--no-format", command, str(path)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert expected in path.read_text()
