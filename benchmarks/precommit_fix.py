"""Benchmark 6: `fix` as a pre-commit hook runs it, one small file at a time.

pre-commit starts `flake8-http-pool fix FILE...` for the staged files: start-up and the work on a small file are
the whole cost. Measured as CPU time (user + system of the command and its workers, wait4's rusage), the bar
issue 13 sets, beside wall time:

- a 60-line module with one finding whose fix is safe (HTP203: a session's `stream=True` response never closed, wrapped
  in `with`), restored before every run, so every run fixes it (libcst imported, one parse and one pass);
- the same module with the finding already fixed (nothing to do: libcst never imported);
- a 318 KB module on one line (a generated table holding one finding), which once took minutes: it must finish
  within the per-file time budget (`--timeout-per-file`, 20 s by default).

    python benchmarks/precommit_fix.py [--quick]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Timed, fmt_s, median, run_alone, timed_run, tool  # noqa: E402

GOAL_CPU_S = 0.5  # issue 13: a 60-line file with one finding
BUDGET_S = 20.0  # fix's default --timeout-per-file

_HEAD = '''"""A small legacy client: 60 lines, one streamed response left open."""
import json
import logging

import requests

LOG = logging.getLogger(__name__)
'''

_LOOP = '''

def first_line(url):
    r = requests.Session().get(url, stream=True, timeout=10)
    for line in r.iter_lines():
        return line
'''


def _module(fixed: bool) -> str:
    """60 lines: the loop (or what fix makes of it) and plain helpers around it."""
    body = _HEAD + (_FIXED if fixed else _LOOP)
    helper = 0
    while body.count("\n") < 56:
        body += f"\n\ndef helper_{helper}(value):\n    return json.dumps({{'value': value, 'n': {helper}}})\n"
        helper += 1
    return body + "# padding\n" * (60 - body.count("\n"))


_FIXED = '''

def first_line(url):
    with requests.Session().get(url, stream=True, timeout=10) as r:
        for line in r.iter_lines():
            return line
'''


def _one_line(size: int) -> str:
    """A module whose data is one line of about `size` bytes, with one finding after it."""
    entries = []
    total = 0
    index = 0
    while total < size:
        entry = f"'k{index}': {index}, "
        entries.append(entry)
        total += len(entry)
        index += 1
    return "import requests\nTABLE = {" + "".join(entries) + "}\n" + _LOOP


def _rounds(commands: Dict[str, Callable[[], Timed]], rounds: int) -> Dict[str, List[Timed]]:
    out: Dict[str, List[Timed]] = {name: [] for name in commands}
    names = list(commands)
    for index in range(rounds):
        for name in (names if index % 2 == 0 else names[::-1]):
            out[name].append(commands[name]())
    return out


def run(quick: bool) -> dict:
    rounds = 2 if quick else 9
    cli = tool("flake8-http-pool")
    work = Path(tempfile.mkdtemp(prefix="precommit-fix-"))
    try:
        (work / "pyproject.toml").write_text("")
        one, clean, huge = work / "client.py", work / "clean.py", work / "table.py"
        loop_text, clean_text = _module(fixed=False), _module(fixed=True)
        huge_kb = 32 if quick else 318
        huge_text = _one_line(huge_kb * 1024)
        if loop_text.count("\n") != 60:
            raise RuntimeError(f"the module has {loop_text.count(chr(10))} lines, not 60")
        clean.write_text(clean_text)

        def fix_one() -> Timed:
            one.write_text(loop_text)
            timed = timed_run([cli, "fix", "-q", "--no-cache", str(one)], cwd=str(work))
            if one.read_text() == loop_text:
                raise RuntimeError("fix did not fix the 60-line module")
            return timed

        def fix_huge() -> Timed:
            huge.write_text(huge_text)
            return timed_run([cli, "fix", "-q", "--no-cache", str(huge)], cwd=str(work))

        def fix_clean() -> Timed:
            return timed_run([cli, "fix", "-q", "--no-cache", str(clean)], cwd=str(work))

        commands = {"one": fix_one, "clean": fix_clean, "huge": fix_huge}
        runs = _rounds(commands, rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def cpu(name: str) -> float:
        return median([t.cpu_seconds for t in runs[name]])

    def wall(name: str) -> float:
        return median([t.seconds for t in runs[name]])

    huge_worst = max(t.seconds for t in runs["huge"])
    goal_rows = [
        {"goal": "`fix` in pre-commit: a 60-line file with one finding, CPU time", "target": f"< {GOAL_CPU_S} s",
         "measured": f"{cpu('one'):.2f} s (wall {fmt_s(wall('one'))})", "ok": cpu("one") < GOAL_CPU_S},
        {"goal": f"`fix` on a {huge_kb} KB one-line file within the per-file time budget",
         "target": f"< {BUDGET_S:.0f} s",
         "measured": f"{fmt_s(huge_worst)} (slowest of {rounds})", "ok": huge_worst < BUDGET_S},
    ]
    table = [
        f"`flake8-http-pool fix -q --no-cache FILE` as a pre-commit hook runs it, {rounds} rounds in alternating "
        "order; CPU is user + system time of the command and its workers.",
        "",
        "| file | CPU median | wall median | wall min | wall max | peak RSS |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    labels = {"one": "60 lines, one safe finding (fixed each run)", "clean": "60 lines, nothing to fix",
              "huge": f"{huge_kb} KB on one line, one finding"}
    for name, label in labels.items():
        seconds = [t.seconds for t in runs[name]]
        table.append(f"| {label} | {cpu(name):.2f} s | {fmt_s(median(seconds))} | {fmt_s(min(seconds))} | "
                     f"{fmt_s(max(seconds))} | {max(t.peak_rss_mib for t in runs[name]):.0f} MiB |")
    return {"title": "6. `fix` in a pre-commit hook", "goal_rows": goal_rows, "table": "\n".join(table), "notes": [],
            "raw": {name: [(t.seconds, t.cpu_seconds) for t in timed] for name, timed in runs.items()}}


if __name__ == "__main__":
    sys.exit(run_alone(run, __doc__))
