"""Run generated programs against the stand-in `requests`/`httpx` and report what each did, as JSON.

Usage: python run_programs.py JOBS.json RESULTS.json WORKDIR

JOBS.json is a list of {"source": text, "hide": [module names to make unimportable]}. Each program runs as
`__main__` in a fresh directory of its own (its cwd), with fresh copies of the stand-in libraries, and a time limit.
Its result: stdout, the exception that ended it (None if none), the files it wrote, the stand-in server's record of
requests, and how many responses set a cookie. Running this file puts its own folder, the stand-ins, first on
sys.path, ahead of the real libraries.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import signal
import sys
import traceback
from typing import Any, Dict, List

import _standin_server

TIME_LIMIT_SECONDS = 10.0
_STANDIN_DIR = os.path.dirname(os.path.abspath(__file__))
_LIBRARIES = ("requests", "httpx")


class TimeLimit(BaseException):
    """A program ran past its time limit (a BaseException, so the program's own `except Exception` cannot eat it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise TimeLimit(f"ran longer than {TIME_LIMIT_SECONDS} s")


def _forget_libraries() -> None:
    """Drop the stand-ins (and anything a program patched on them) so the next program imports them afresh."""
    for name in list(sys.modules):
        if name.split(".")[0] in _LIBRARIES:
            del sys.modules[name]


def _files_under(root: str) -> Dict[str, str]:
    found = {}
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, root)] = handle.read().decode("latin-1")
    return dict(sorted(found.items()))


def run_one(source: str, hide: List[str], workdir: str) -> Dict[str, Any]:
    """Run one program in `workdir` and return what it did."""
    program_dir = os.path.join(workdir, "program")
    cwd = os.path.join(workdir, "cwd")
    os.makedirs(program_dir)
    os.makedirs(cwd)
    path = os.path.join(program_dir, "prog.py")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(source)
    _forget_libraries()
    for name in hide:
        sys.modules[name] = None  # type: ignore[assignment]  # `import name` then raises ImportError
    _standin_server.reset()
    out, err = io.StringIO(), io.StringIO()
    exception = None
    detail = ""
    old_cwd, old_argv = os.getcwd(), sys.argv
    os.chdir(cwd)
    sys.argv = [path]
    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT_SECONDS)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            runpy.run_path(path, run_name="__main__")
    except BaseException as error:  # the program's own failure is part of its behaviour: record it
        exception = f"{type(error).__module__}.{type(error).__qualname__}"
        if isinstance(error, SystemExit):
            exception += f"({error.code!r})"
        detail = "".join(traceback.format_exception_only(type(error), error)).strip()
    finally:
        if hasattr(signal, "setitimer"):
            signal.setitimer(signal.ITIMER_REAL, 0)
        os.chdir(old_cwd)
        sys.argv = old_argv
        for name in hide:
            sys.modules.pop(name, None)
    return {
        "stdout": out.getvalue(),
        "exception": exception,
        "detail": detail,
        "files": _files_under(cwd),
        "record": [dict(entry) for entry in _standin_server.RECORD],
        "cookies_set": _standin_server.COOKIES_SET[0],
    }


def main(argv: List[str]) -> int:
    jobs_path, results_path, workdir = argv[1:4]
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _on_alarm)
    with open(jobs_path, encoding="utf-8") as handle:
        jobs = json.load(handle)
    results = []
    for number, job in enumerate(jobs):
        results.append(run_one(job["source"], job.get("hide", []), os.path.join(workdir, str(number))))
    # the stand-ins must have been the libraries the programs saw, never the installed ones
    import requests

    assert os.path.dirname(os.path.dirname(os.path.abspath(requests.__file__))) == _STANDIN_DIR, requests.__file__
    with open(results_path, "w", encoding="utf-8") as handle:
        json.dump(results, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
