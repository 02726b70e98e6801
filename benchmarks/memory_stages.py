"""Where `check`'s main process holds its memory: its resident set after each stage of one run.

    python benchmarks/memory_stages.py OUT.json DIR...

Runs `flake8-http-pool check --isolated --no-cache DIR...` in this process (the report discarded), with the
stages of project_check.py and project.py wrapped so that each records this process's current resident set and
its peak so far (Linux's /proc/self/status, VmRSS and VmHWM) when it ends. The worker processes are not in
these numbers (big_tree.py's table has the whole command's peak); the main process is the one that grows with
the tree. Writes {stage: [rss_mib, peak_mib]} to OUT.json, the stages in the order they ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, Callable, Dict, List

STAGES = ["started", "listed", "phase 1", "module map", "gate", "solved", "marked", "reported"]


def _status() -> List[float]:
    """[VmRSS, VmHWM] in MiB."""
    values = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                values[name] = int(rest.split()[0]) / 1024
    return [values["VmRSS"], values["VmHWM"]]


def main(argv: List[str]) -> int:
    out, dirs = argv[0], argv[1:]
    from flake8_http_pool import cli, file_table, project, project_check

    seen: Dict[str, List[float]] = {"started": _status()}

    def ended(stage: str) -> None:
        seen.setdefault(stage, _status())

    def after(function: Callable[..., Any], stage: str) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            result = function(*args, **kwargs)
            ended(stage)
            return result

        return wrapped

    def before(function: Callable[..., Any], stage: str) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            ended(stage)
            return function(*args, **kwargs)

        return wrapped

    # The stages end: every file listed (in the file table), phase 1 done (every file checked alone, its summary
    # made when the gate takes it), the module map made, the gate's second phase done (the summaries are then
    # narrowed for the solve), the solve done, the findings marked with their fixes, the report written.
    wrapped: Dict[Any, Dict[str, Callable[..., Any]]] = {
        file_table.FileTable: {"add": after(file_table.FileTable.add, "listed")},
        project_check: {"_first_results": after(project_check._first_results, "phase 1"),
                        "_mark": after(project_check._mark, "marked")},
        project.ModuleMap: {"__init__": after(project.ModuleMap.__init__, "module map")},
        project.Summaries: {"narrow": before(project.Summaries.narrow, "gate")},
        project: {"_solve_gated": after(project._solve_gated, "solved")},
    }
    for owner, names in wrapped.items():
        for name, function in names.items():
            setattr(owner, name, function)
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        try:
            cli.main(["check", "--isolated", "--no-cache", "--exit-zero", *dirs])
        except SystemExit:
            pass
    ended("reported")
    with open(out, "w") as stream:
        json.dump(seen, stream)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
