"""Benchmark 7: `check` split into shards, as CI jobs run it (docs/sharding.md), and `merge` of their reports.

The tree is big_tree.py's same-mix tree (copies of its first part). Its files are listed in path order and dealt
out round robin into 1, 2 and 4 shards; each shard runs `check --files-from SHARD --project-from ALL
--output-format json --no-cache` (a CI job starts without the cache), one after another on this machine, as
separate jobs would run side by side on separate machines: the wall time of a sharded run in CI is its slowest
shard's plus `merge`'s. `merge` of the shards' reports must write exactly what the unsharded run writes.

    python benchmarks/shards.py [--quick]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, Timed, child_environment, fmt_s, run_alone, timed_run, tool  # noqa: E402
from big_tree import FILES_PER_PART, GENERATED_PER_PART, PARTS, _py_files, build_mix, build_tree  # noqa: E402

SHARDS = (1, 2, 4)


def _files(dirs: List[Path]) -> List[str]:
    """The tree's Python files in path order (git's), as `git ls-files` would list them."""
    return sorted(_py_files([str(folder) for folder in dirs]), key=lambda path: path.encode("utf-8", "surrogateescape"))


def run(quick: bool) -> dict:
    if quick:
        root, shape, copies = CACHE / "tree_quick", (3, 60, 6), 3
    else:
        root, shape, copies = CACHE / "tree10k", (PARTS, FILES_PER_PART, GENERATED_PER_PART), 100
    parts = build_tree(root, *shape)
    mix = build_mix(root.parent / (root.name + "-mix"), parts[0], 10 if quick else 100)  # big_tree.py's sizes
    dirs = mix[:copies]
    work = Path(tempfile.mkdtemp(prefix="shards-"))
    cli = tool("flake8-http-pool")
    base = mix[0].parent
    try:
        files = [os.path.relpath(path, base) for path in _files(dirs)]
        (work / "all.txt").write_text("\n".join(files) + "\n")
        check = [cli, "check", "--isolated", "--no-cache", "--exit-zero", "-q", "--output-format", "json"]
        unsharded = subprocess.run([*check, "--files-from", str(work / "all.txt")], cwd=str(base),
                                   capture_output=True, env=child_environment())
        if unsharded.returncode not in (0, 1, 2):
            raise RuntimeError(f"check failed: {unsharded.stderr[-2000:]!r}")
        rows = []
        for count in SHARDS:
            runs: List[Timed] = []
            reports = []
            for shard in range(count):
                listed = work / f"shard-{count}-{shard}.txt"
                listed.write_text("".join(f"{path}\n" for path in files[shard::count]))
                report = work / f"report-{count}-{shard}.json"
                runs.append(timed_run([*check, "--files-from", str(listed), "--project-from", str(work / "all.txt"),
                                       "-o", str(report)], cwd=str(base)))
                reports.append(str(report))
            merged = work / f"merged-{count}.json"
            merge = timed_run([cli, "merge", "--output-format", "json", "--exit-zero", "-q", "-o", str(merged),
                               *reports], cwd=str(base))
            same = merged.read_bytes() == unsharded.stdout
            rows.append({"shards": count, "slowest": max(r.seconds for r in runs),
                         "cpu": sum(r.cpu_seconds for r in runs), "merge": merge.seconds,
                         "rss": max(r.peak_rss_mib for r in runs), "same": same})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    one = rows[0]["slowest"] + rows[0]["merge"]
    table = [
        f"`check --no-cache` of {len(files):,} files ({copies} copies of the big tree's first part), split "
        "round robin into shards in path order; each shard run alone, one after another (separate CI jobs). "
        "CI wall time = the slowest shard + `merge`.",
        "",
        "| shards | slowest shard | + merge | CI wall time | vs 1 shard | CPU, all shards | peak RSS "
        "| merged = unsharded |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in rows:
        wall = row["slowest"] + row["merge"]
        table.append(f"| {row['shards']} | {fmt_s(row['slowest'])} | {fmt_s(row['merge'])} | {fmt_s(wall)} | "
                     f"{wall / one:.2f} | {row['cpu']:.1f} s | {row['rss']:.0f} MiB | "
                     f"{'yes' if row['same'] else '**no**'} |")
    four = rows[-1]["slowest"] + rows[-1]["merge"]
    goal_rows = [
        {"goal": f"sharded `check` merges to the unsharded report ({', '.join(str(c) for c in SHARDS)} shards)",
         "target": "byte for byte", "measured": "same" if all(r["same"] for r in rows) else "differs",
         "ok": all(r["same"] for r in rows)},
        {"goal": f"4 shards in CI vs 1 ({len(files):,} files)", "target": "reported",
         "measured": f"{four / one:.2f} ({fmt_s(four)} vs {fmt_s(one)})", "ok": None},
    ]
    notes = ["Each shard reads every listed file and summarizes those naming an HTTP library (the project model "
             "needs all of them; docs/sharding.md): only the checking and marking of the shard's own files is "
             "split, so shards shorten a run only as far as that part is its cost."]
    return {"title": "7. `check` in shards, and `merge`", "goal_rows": goal_rows, "table": "\n".join(table),
            "notes": notes, "raw": rows}


if __name__ == "__main__":
    sys.exit(run_alone(run, __doc__))
