"""Runs every benchmark and writes docs/benchmarks.md: the machine, then one table per benchmark (goal, measured,
verdict) with its details.

    python benchmarks/run.py            # the full run (about 15 minutes on 2 cores); writes docs/benchmarks.md
    python benchmarks/run.py --quick    # tiny inputs, one repeat: checks each benchmark runs and gives numbers;
                                        # writes a temporary file; exits non-zero only when a benchmark breaks,
                                        # never on a missed goal
    python benchmarks/run.py --only big_tree,import_time [--output FILE]

Each benchmark is a module here exposing `run(quick: bool) -> dict` with "title", "goal_rows" (dicts of goal,
target, measured, ok), "table" (markdown) and "notes"; a module not there yet is reported and skipped.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import List, Optional

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import REPO  # noqa: E402

BENCHMARKS = ("flake8_overhead", "import_time", "big_tree", "payoff", "project_model", "precommit_fix", "shards",
              "dense", "corpus_fix")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def _os() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return f"{line.split('=', 1)[1].strip(chr(34))}, Linux {platform.release()}"
    except OSError:
        pass
    return platform.platform()


def _versions() -> str:
    out = []
    for name in ("flake8-http-pool", "flake8", "libcst", "ast-grep-py", "ruff", "requests", "aiohttp", "trustme"):
        try:
            out.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            pass
    return ", ".join(out)


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _load() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


SPEED_LOOP = 10_000_000


def _speed() -> str:
    """How fast this machine runs CPython now: a loop of SPEED_LOOP additions, median of 5, in seconds. A
    virtual machine's speed changes from day to day; the goals in seconds (not the ratios) move with it."""
    times = []
    for _ in range(5):
        started = time.perf_counter()
        total = 0
        for i in range(SPEED_LOOP):
            total += i
        times.append(time.perf_counter() - started)
    return f"{sorted(times)[2]:.2f} s"


def machine_section(load_before: str, load_after: str, speed_before: str = "", speed_after: str = "") -> str:
    cores = os.cpu_count()
    return "\n".join([
        "## Machine",
        "",
        "| | |",
        "| --- | --- |",
        f"| CPU | {_cpu_model()} |",
        f"| cores | {cores} |",
        f"| memory | {_memory()} |",
        f"| OS | {_os()} |",
        f"| Python | {platform.python_implementation()} {platform.python_version()} |",
        f"| tools | {_versions()} |",
        f"| commit | {_commit()} |",
        f"| load average (1, 5, 15 min) before / after | {load_before} / {load_after} |",
    ] + ([f"| CPython speed: a loop of {SPEED_LOOP:,} additions, before / after | {speed_before} / {speed_after} |"]
         if speed_before else []))


def normalise(row: dict) -> dict:
    """A goal row as {goal, target, measured, ok}, from either form the modules give: that one, or
    {name, goal, measured, verdict: "met"/"missed"}."""
    goal = row.get("goal", "")
    if row.get("name"):
        goal = f"{row['name']}: {goal}" if goal else row["name"]
    ok = row.get("ok")
    if ok is None and "verdict" in row:
        ok = str(row["verdict"]).lower() in ("met", "pass", "ok", "yes", "true")
    return {"goal": goal, "target": row.get("target") or "(in the goal)", "measured": row.get("measured", ""), "ok": ok}


def _verdict(ok: Optional[bool]) -> str:
    return "n/a" if ok is None else ("met" if ok else "**not met**")


def render(results: List[dict], machine: str, elapsed: float, quick: bool) -> str:
    out = [
        "# Benchmarks",
        "",
        "Generated by `python benchmarks/run.py` (do not edit by hand; see each benchmark's module in "
        f"`benchmarks/` for its method). Full run took {elapsed / 60:.1f} minutes."
        + (" **Quick mode: tiny inputs, one repeat: these numbers mean nothing.**" if quick else ""),
        "Public tools only: `time.perf_counter`, `os.wait4`'s rusage for peak memory, `subprocess`; "
        "paired runs in alternating order, medians, ratios within one run.",
        "",
        machine,
        "",
        "## Goals",
        "",
        "| benchmark | goal | target | measured | verdict |",
        "| --- | --- | --- | --- | --- |",
    ]
    for result in results:
        for row in result.get("goal_rows", []):
            out.append(f"| {result['title']} | {row['goal']} | {row['target']} | {row['measured']} | "
                       f"{_verdict(row.get('ok'))} |")
    for result in results:
        out += ["", f"## {result['title']}", "", result.get("table", "").rstrip()]
        notes = result.get("notes") or []
        if notes:
            out.append("")
            out += [f"- {note}" for note in notes]
    return "\n".join(out) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny inputs; fail only on a broken benchmark")
    parser.add_argument("--only", help="comma-separated benchmark modules (default: all)")
    parser.add_argument("--output", help="where to write the markdown (default: docs/benchmarks.md; "
                                         "a temporary file with --quick); the raw numbers go beside it, "
                                         "same name with .json")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(BENCHMARKS)
    started = time.perf_counter()
    load_before, speed_before = _load(), _speed()
    results, broken = [], []
    for name in names:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            print(f"{name}: not yet available", file=sys.stderr)
            continue
        print(f"== {name} ...", file=sys.stderr, flush=True)
        t = time.perf_counter()
        try:
            result = module.run(args.quick)
        except Exception:
            traceback.print_exc()
            broken.append(name)
            continue
        result.setdefault("title", name)
        result["goal_rows"] = [normalise(row) for row in result.get("goal_rows", [])]
        print(f"== {name}: {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
        for row in result.get("goal_rows", []):
            print(f"   {'met    ' if row.get('ok') else 'NOT MET'} {row['goal']}: {row['measured']} "
                  f"(target {row['target']})", file=sys.stderr)
        if not result.get("goal_rows") and not result.get("table"):
            print(f"{name}: gave no numbers", file=sys.stderr)
            broken.append(name)
        results.append(result)
    elapsed = time.perf_counter() - started
    text = render(results, machine_section(load_before, _load(), speed_before, _speed()), elapsed, args.quick)
    if args.output:
        output = Path(args.output)
    elif args.quick:
        output = Path(tempfile.mkdtemp(prefix="benchmarks-quick-")) / "benchmarks.md"
    else:
        output = REPO / "docs" / "benchmarks.md"
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text)
    raw = output.with_suffix(".json")
    if args.quick or args.output:
        raw.write_text(json.dumps([{k: v for k, v in r.items()} for r in results], indent=1, default=str))
    print(f"wrote {output} in {elapsed:.0f} s", file=sys.stderr)
    if broken:
        print(f"broken benchmarks: {', '.join(broken)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
