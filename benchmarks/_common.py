"""Helpers shared by the benchmark scripts: timing child processes with their peak memory, medians, paths."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# Outside the repository, so that linters run over it (`flake8 benchmarks/`, `check .`) never meet the 10,000-file
# tree; FLAKE8_HTTP_POOL_BENCH_CACHE overrides it.
CACHE = Path(os.environ.get("FLAKE8_HTTP_POOL_BENCH_CACHE")
             or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "flake8-http-pool-benchmarks")


class Timed(NamedTuple):
    seconds: float
    peak_rss_mib: float  # the largest resident set of the child or any process it waited for
    returncode: int
    cpu_seconds: float = 0.0  # user + system time of the child and the processes it waited for
    timed_out: bool = False  # killed at timed_run's `limit`


def child_environment(env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment a timed command runs in: `env` (else this one) without PYTHONDONTWRITEBYTECODE, so the
    Python tools load their modules from bytecode as on a user's machine, not compiled afresh on every run
    (some sandboxes and CI images set it; it cost every flake8 and flake8-http-pool run ~0.1 s here)."""
    environment = dict(os.environ if env is None else env)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return environment


# A child forked from this process starts with this process's resident set as its peak (Linux copies the
# parent's RSS into a forked child's high-water mark, and exec keeps it): once a benchmark has read a tree in
# process, every command would report at least that. So commands are started from a small launcher process,
# which times them, waits for them (wait4) and prints what it measured.
_LAUNCHER = r"""
import json, os, signal, subprocess, sys, time
limit = float(sys.argv[1])
start = time.perf_counter()
# A session of its own, so that a command stopped at its time limit is stopped with its worker processes.
proc = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        start_new_session=True)
stopped = []
def stop(*_):
    stopped.append(True)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
if limit > 0:
    signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, limit)
_, status, usage = os.wait4(proc.pid, 0)
signal.setitimer(signal.ITIMER_REAL, 0)
elapsed = time.perf_counter() - start
print(json.dumps([elapsed, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status),
                  usage.ru_utime + usage.ru_stime, bool(stopped)]))
"""


def timed_run(cmd: Sequence[str], cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
              limit: Optional[float] = None) -> Timed:
    """Run `cmd` with its output discarded; wall time, CPU time and peak RSS (from wait4, so worker processes
    count), measured by a small launcher process (see _LAUNCHER). `limit`: seconds after which the command and
    its processes are killed (`timed_out` is then set, and the times are those up to the kill)."""
    env = child_environment(env)
    done = subprocess.run([sys.executable, "-c", _LAUNCHER, str(limit or 0), *cmd], cwd=cwd, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the launcher failed on {list(cmd)!r}: {done.stderr[-2000:]}")
    seconds, peak, returncode, cpu, stopped = json.loads(done.stdout)
    return Timed(seconds, peak, returncode, cpu, stopped)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def stdlib_files() -> List[str]:
    """Every .py file of this interpreter's standard library (its site-packages excluded), sorted."""
    root = sysconfig.get_paths()["stdlib"]
    out = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in ("site-packages", "__pycache__"))
        out += [os.path.join(directory, name) for name in sorted(files) if name.endswith(".py")]
    return out


def tool(name: str) -> str:
    """A console script installed beside this interpreter (the virtualenv's bin/)."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name


def fmt_s(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds < 100 else f"{seconds:.0f} s"


def print_result(result: dict) -> None:
    """A benchmark's table and its goals, one PASS/MISS line each, as its own script prints them when run alone."""
    print(result["table"])
    for row in result["goal_rows"]:
        verdict = "INFO" if row["ok"] is None else "PASS" if row["ok"] else "MISS"
        print(f"{verdict}: {row['goal']}: {row['measured']} (goal {row['target']})")


def run_alone(run: Callable[[bool], dict], doc: Optional[str]) -> int:
    """A benchmark module run as a script: `--quick`, then its table and its goals."""
    import argparse

    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    parser.add_argument("--quick", action="store_true", help="tiny inputs")
    print_result(run(parser.parse_args().quick))
    return 0


# -- the HTTP-dense project ------------------------------------------------------------------------------------
# The libraries whose import makes a module "talk HTTP" for the dense benchmark project: a file of the shared
# corpus that imports one of these (any import form, at any depth of the file) is copied in.
DENSE_LIBRARIES = frozenset({"requests", "httpx", "httpx2", "niquests", "aiohttp", "urllib3", "urllib", "http",
                             "grequests", "requests_futures"})


def corpus_folder() -> Optional[Path]:
    """The shared corpus as tests/test_corpus.py fetches it (../shared/corpus/fetch.sh into the user's cache, or
    $FLAKE8_HTTP_POOL_CORPUS); None when it has not been fetched."""
    folder = Path(os.environ.get("FLAKE8_HTTP_POOL_CORPUS") or Path.home() / ".cache" / "flake8-http-pool" / "corpus")
    return folder if folder.is_dir() and any(p.is_dir() for p in folder.iterdir() if p.name != "_archives") else None


def _imports_http(data: bytes) -> bool:
    import ast

    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in DENSE_LIBRARIES for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] in DENSE_LIBRARIES:
            return True
    return False


def dense_project(copies: int, corpus: Optional[Path] = None) -> Path:
    """The HTTP-dense project (DESIGN.md's bars): every file of the shared corpus that imports an HTTP library,
    kept at its path in its package, copied `copies` times (`copy0/`, `copy1/`, ...) under one pyproject.toml;
    built once under CACHE and reused (its corpus's file list is its key). 2 copies are about 600 files, 10 about
    3,000 (with the packages' `__init__.py` files). Raises RuntimeError when the corpus has not been fetched."""
    import hashlib
    import shutil

    corpus = corpus or corpus_folder()
    if corpus is None:
        raise RuntimeError("the shared corpus is not fetched: run ../shared/corpus/fetch.sh "
                           "~/.cache/flake8-http-pool/corpus (or set FLAKE8_HTTP_POOL_CORPUS)")
    files = [p for p in sorted(corpus.rglob("*.py")) if "_archives" not in p.relative_to(corpus).parts]
    key = hashlib.sha256("\0".join(str(p.relative_to(corpus)) for p in files).encode()).hexdigest()[:12]
    root = CACHE / f"dense-{copies}-{key}"
    if (root / "pyproject.toml").is_file():
        return root
    building = root.with_name(root.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    chosen = [(p.relative_to(corpus), data) for p, data in ((p, p.read_bytes()) for p in files) if _imports_http(data)]
    # With the `__init__.py` of every package holding one, so that imports between them resolve as they do in
    # the packages themselves (most of those name no HTTP library).
    packages = set()
    for relative, _ in chosen:
        for parent in relative.parents:
            packages.add(parent / "__init__.py")
    have = {relative for relative, _ in chosen}
    chosen += [(relative, (corpus / relative).read_bytes()) for relative in sorted(packages - have)
               if (corpus / relative).is_file()]
    for copy in range(copies):
        for relative, data in chosen:
            target = building / f"copy{copy}" / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    (building / "pyproject.toml").write_text('[project]\nname = "dense"\nversion = "0"\n')
    shutil.rmtree(root, ignore_errors=True)
    building.rename(root)
    return root
