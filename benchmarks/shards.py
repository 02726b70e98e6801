"""Benchmark 7: `check` split into shards, as CI jobs run it (docs/sharding.md), and `merge` of their reports.

The tree is big_tree.py's same-mix tree (copies of its first part). Its files are listed in path order and dealt
out into 1, 2 and 4 shards, round robin (`split -n r/K/N`) and in runs of the list (`split -n l/K/N`); each shard
runs `check --files-from SHARD --project-from ALL --output-format json --no-cache` (a CI job starts without the
cache), one after another on this machine, as separate jobs would run side by side on separate machines: the
wall time of a sharded run in CI is its slowest shard's plus `merge`'s. `merge` of the shards' reports must
write exactly what the unsharded run writes.

Round robin over copies of one part of 1,000 files gives every shard the same files of each copy: the shard
holding the part's few heavy modules holds them a hundred times, which a real tree does not do. Runs of the
list give each shard 25 copies of the whole part, the same work each; both are measured.

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
GOAL = 0.4  # 4 shards' CI wall time over one shard's


def _round_robin(files: List[str], count: int) -> List[List[str]]:
    """`split -n r/K/N`: every count-th path, starting at the K-th."""
    return [files[shard::count] for shard in range(count)]


def _runs(files: List[str], count: int) -> List[List[str]]:
    """`split -n l/K/N`: the list cut into `count` runs of (nearly) equal length, in order."""
    size, extra = divmod(len(files), count)
    bounds = [shard * size + min(shard, extra) for shard in range(count + 1)]
    return [files[bounds[shard]:bounds[shard + 1]] for shard in range(count)]


DEALINGS = (("round robin", _round_robin), ("in runs", _runs))


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
        for dealing, deal in DEALINGS:
            for count in SHARDS if dealing == DEALINGS[0][0] else SHARDS[1:]:
                runs: List[Timed] = []
                reports = []
                for shard, part in enumerate(deal(files, count)):
                    listed = work / f"shard-{dealing}-{count}-{shard}.txt"
                    listed.write_text("".join(f"{path}\n" for path in part))
                    report = work / f"report-{dealing}-{count}-{shard}.json"
                    runs.append(timed_run([*check, "--files-from", str(listed), "--project-from",
                                           str(work / "all.txt"), "-o", str(report)], cwd=str(base)))
                    reports.append(str(report))
                merged = work / f"merged-{dealing}-{count}.json"
                merge = timed_run([cli, "merge", "--output-format", "json", "--exit-zero", "-q", "-o", str(merged),
                                   *reports], cwd=str(base))
                same = merged.read_bytes() == unsharded.stdout
                rows.append({"dealing": dealing, "shards": count, "slowest": max(r.seconds for r in runs),
                             "fastest": min(r.seconds for r in runs), "cpu": sum(r.cpu_seconds for r in runs),
                             "merge": merge.seconds, "rss": max(r.peak_rss_mib for r in runs), "same": same})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    one = rows[0]["slowest"] + rows[0]["merge"]
    table = [
        f"`check --no-cache` of {len(files):,} files ({copies} copies of the big tree's first part), dealt out "
        "round robin (`split -n r/K/N`) or in runs of the list (`split -n l/K/N`) in path order; each shard run "
        "alone, one after another (separate CI jobs). CI wall time = the slowest shard + `merge`.",
        "",
        "| dealt | shards | slowest shard | fastest shard | + merge | CI wall time | vs 1 shard | CPU, all shards "
        "| peak RSS | merged = unsharded |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in rows:
        wall = row["slowest"] + row["merge"]
        table.append(f"| {row['dealing'] if row['shards'] > 1 else '-'} | {row['shards']} | {fmt_s(row['slowest'])} | "
                     f"{fmt_s(row['fastest'])} | {fmt_s(row['merge'])} | {fmt_s(wall)} | {wall / one:.2f} | "
                     f"{row['cpu']:.1f} s | {row['rss']:.0f} MiB | {'yes' if row['same'] else '**no**'} |")
    goal_rows = [
        {"goal": f"sharded `check` merges to the unsharded report ({', '.join(str(c) for c in SHARDS)} shards, "
                 "both ways dealt)",
         "target": "byte for byte", "measured": "same" if all(r["same"] for r in rows) else "differs",
         "ok": all(r["same"] for r in rows)},
    ]
    for dealing, _ in DEALINGS:
        four = next(row for row in rows if row["dealing"] == dealing and row["shards"] == SHARDS[-1])
        ratio = (four["slowest"] + four["merge"]) / one
        goal_rows.append({"goal": f"4 shards in CI vs 1 ({len(files):,} files, dealt {dealing})",
                          "target": f"<= {GOAL:.1f}", "ok": ratio <= GOAL,
                          "measured": f"{ratio:.2f} ({fmt_s(four['slowest'] + four['merge'])} vs {fmt_s(one)})"})
    notes = ["A shard given part of the project checks its own files, then answers for them from the modules "
             "that can matter to them (docs/sharding.md): it reads the project's other files for the callers of "
             "its functions, but checks and summarizes only its own and the few its files call. One shard given "
             "the whole project solves it whole, as an unsharded run does.",
             f"Round robin deals the same {len(files) // copies // SHARDS[-1]:,} files of every copy to each of "
             f"{SHARDS[-1]} shards: the slowest is the one holding the part's heaviest modules {copies} times over; "
             f"in runs of the list every shard holds {copies // SHARDS[-1]} whole copies.",
             "A shard's peak memory is above one whole run's: its focused solve holds its own files' paths in "
             "memory (a set of them, and their list in the project's order), where the whole solve reads every "
             "path from its file table."]
    return {"title": "7. `check` in shards, and `merge`", "goal_rows": goal_rows, "table": "\n".join(table),
            "notes": notes, "raw": rows}


if __name__ == "__main__":
    sys.exit(run_alone(run, __doc__))
