"""Small multi-module trees written into a test's folder, shared by the cache and plugin tests of the project model."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Dict, List

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


def age_tree(root: Path, seconds: int = 600) -> None:
    """Every file of the tree last modified `seconds` ago, and its change time (which only the clock sets) past
    the racy window: old enough for the stat index to vouch for it (a file changed in the seconds before a run
    is read again next time; project_cache.settled)."""
    from flake8_http_pool.project_cache import RACY_NS

    then = os.stat(root).st_mtime - seconds
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (then, then))
    time.sleep(RACY_NS / 1e9 + 0.2)


def edit_keeping_size_and_mtime(root: Path) -> None:
    """app/sync.py of WRAPPER and LOOP's tree rewritten with a text of the same size whose loop is gone, its
    modification time put back (an editor or a checkout can): only the change time and inode tell."""
    sync = root / "app" / "sync.py"
    before = os.stat(sync)
    quiet = LOOP.replace("    for url in urls:\n", "    if  url in urls:\n")
    assert len(quiet) == len(LOOP) and quiet != LOOP
    sync.write_text(quiet, encoding="utf-8")
    os.utime(sync, ns=(before.st_atime_ns, before.st_mtime_ns))


# A project for sharding (tests/test_cli_shards.py, test_cli_merge.py, test_docs_sharding.py): a request wrapper
# called in a loop in another module (HTP102, with a related place), HTP104's client parameter threaded through
# callers in two other modules (a fix across modules: tests/fixtures/fix_projects/client_parameter_private_...),
# a loop on a line with non-ASCII text before the call (columns in bytes and in characters differ), a safe fix,
# and a file that does not parse.
FIX_ACROSS = Path(__file__).parent / "fixtures" / "fix_projects" / "client_parameter_private_across_modules" / "before"
SHARDED = {
    "app/__init__.py": "",
    "app/http.py": WRAPPER,
    "app/sync.py": LOOP,
    "loop_é.py": "import requests\n\n\ndef f(urls):\n    for u in urls:\n        x = 'é'; requests.get(u)\n",
    "streamed.py": "import requests\n\n\ndef g(u):\n    r = requests.Session().get(u, stream=True)\n    return r.headers\n",
    "bad.py": "import requests\ndef x(:\n    pass\n",
}


def git(root: Path, *args: str) -> str:
    """Run git in `root` (no user config), its standard output."""
    environment = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    done = subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.com", *args], cwd=root,
                          env=environment, capture_output=True, text=True, check=True)
    return done.stdout


def sharded_tree(root: Path) -> Path:
    """The sharding project, committed in a new git repository at `root`."""
    write_tree(root, SHARDED)
    write_tree(root, {p.relative_to(FIX_ACROSS).as_posix(): p.read_text(encoding="utf-8")
                      for p in sorted(FIX_ACROSS.rglob("*.py"))})
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "tree")
    return root


def python_files(root: Path) -> List[str]:
    """The repository's Python files, one a line, as the docs list them (`git ls-files`, names unquoted)."""
    return git(root, "-c", "core.quotepath=off", "ls-files", "*.py").splitlines()


def round_robin(paths: List[str], shards: int) -> List[List[str]]:
    """`split -n r/K/N`'s shards: every N-th path, starting at the K-th."""
    return [paths[k::shards] for k in range(shards)]
