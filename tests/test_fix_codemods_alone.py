"""Every registered fix is a libcst codemod that also runs alone:
`python -m libcst.tool codemod -x flake8_http_pool.fixes.<module>.<Class> PATH`.

Run that way a command has no plan from `fix`; `FindingFixCommand` runs the engine on the file and plans from
the findings of its rule(s). Safety is not consulted there: naming an unsafe fix's command on the command line
is the opt-in that `fix --unsafe-fixes` is, so unsafe fixes apply too. Each case holds one fixable finding,
and the command alone must produce exactly what `fix` (with --unsafe-fixes, that rule only) produces.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Dict, Tuple

import pytest
from libcst.codemod import VisitorBasedCodemodCommand

from flake8_http_pool.engine import check_source
from flake8_http_pool.fixes import FIXES
from flake8_http_pool.fixing import fix_source

# FIXES key -> (a module with one fixable finding for that fix, a line the fixed module must contain)
CASES: Dict[str, Tuple[str, str]] = {
    "HTP101": (
        "import requests\n\nfor url in URLS:\n    requests.get(url)\n",
        "with requests.Session() as session:",
    ),
    "HTP101:unsafe": (
        "from concurrent.futures import ThreadPoolExecutor\nimport requests\n\n\n"
        "def run(urls):\n    with ThreadPoolExecutor(8) as pool:\n        return list(pool.map(requests.get, urls))\n",
        "_HTTP_SESSION = requests.Session()",
    ),
    "HTP102": (
        "import requests\n\n\ndef fetch(url):\n    return requests.get(url)\n\n\nfor url in URLS:\n    fetch(url)\n",
        "_HTTP_SESSION = requests.Session()",
    ),
    "HTP103": (
        "import requests\n\n\ndef crawl(urls):\n    for url in urls:\n"
        "        with requests.Session() as s:\n            print(s.get(url).status_code)\n",
        "    with requests.Session() as s:\n        for url in urls:\n",
    ),
    "HTP104": (
        # A private function: RULES.md adds the parameter only where no caller outside can break.
        "import requests\n\n\ndef _download(url):\n    s = requests.Session()\n    return s.get(url).content\n\n\n"
        "def main(urls):\n    return [_download(u) for u in urls]\n",
        "def _download(",
    ),
    "HTP201": (
        "import requests\n\n\ndef save(url, path):\n    r = requests.get(url)\n"
        "    with open(path, \"wb\") as f:\n        f.write(r.content)\n",
        "iter_content",
    ),
    "HTP202": (
        "import requests\n\n\ndef save(url, path):\n    r = requests.get(url)\n"
        "    with open(path, \"wb\") as f:\n        for chunk in r.iter_content(8192):\n            f.write(chunk)\n",
        "stream=True",
    ),
    "HTP203": (
        "import requests\n\n\ndef status(url):\n    r = requests.Session().get(url, stream=True)\n    return r.status_code\n",
        "with requests.Session().get(url, stream=True) as r:",
    ),
    "HTP301": (
        "from concurrent.futures import ThreadPoolExecutor\nimport requests\n\nsession = requests.Session()\n\n\n"
        "def fetch(url):\n    return session.get(url).text\n\n\n"
        "with ThreadPoolExecutor(max_workers=16) as pool:\n    pages = list(pool.map(fetch, URLS))\n",
        'session.mount("https://", HTTPAdapter(pool_connections=16, pool_maxsize=16))',
    ),
    "HTP402": (
        "import requests\nfrom gevent import monkey\n\nmonkey.patch_all()\n",
        "from gevent import monkey\n\nmonkey.patch_all()\n\nimport requests\n",
    ),
}


def test_every_registered_fix_has_a_case() -> None:
    assert set(CASES) == set(FIXES), "add a case here for each fix registered in FIXES"


@pytest.mark.parametrize("key", sorted(FIXES))
def test_command_is_a_visitor_based_codemod(key: str) -> None:
    assert issubclass(FIXES[key].command_class(), VisitorBasedCodemodCommand)


@pytest.mark.slow
@pytest.mark.parametrize("key", sorted(CASES))
def test_codemod_runs_alone_through_libcst_tool(tmp_path: Path, key: str) -> None:
    source, expected = CASES[key]
    fix = FIXES[key]
    assert [f.code for f in check_source(source)].count(fix.rule_code) == 1, "the case needs one finding"
    by_fix = fix_source(source, codes={fix.rule_code}, unsafe=True)
    assert by_fix.error is None and by_fix.text != source, f"{key}: fix itself does not change the case"

    path = tmp_path / "module.py"
    path.write_text(source)
    module, _, class_name = fix.command.partition(":")
    result = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "-x", "--no-format",
         f"flake8_http_pool.fixes.{module}.{class_name}", str(path)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    fixed = path.read_text()
    assert expected in fixed, fixed
    assert fixed == by_fix.text, "the command alone and `fix` disagree"
