"""Benchmark 3: a 10,000-file tree. `check` and `fix --check` against the floor (reading and `ast.parse`-ing
every file), libcst's own parallel codemod runner with a do-nothing command, and `ruff check` (default rules).

The tree is built once in the benchmarks' cache (~/.cache/flake8-http-pool-benchmarks/): ten parts of 1,000
files, each the standard library's files (copied in turn, so the library appears several times) and 30 generated
files of our own with HTTP call sites.
Peak memory by size is measured on 1, 10 and 100 copies of the first part, so every size has the
same mix of files and the same largest file. Timed commands run as child processes, in rounds
(every command once per round, so ratios come from paired runs), medians over the rounds; peak memory is the
largest resident set of the command or any of its worker processes (wait4's rusage).

    python benchmarks/big_tree.py [--quick]
    python benchmarks/big_tree.py --floor [--jobs N] DIR...   # the floor itself, as a child process
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import CACHE, Timed, child_environment, fmt_s, median, stdlib_files, timed_run, tool  # noqa: E402

FILES_PER_PART = 1000
GENERATED_PER_PART = 30
PARTS = 10
# libcst's runner costs ~20x a parse or more; on the whole tree it would take hours of the 15-minute budget, so
# it runs on every LIBCST_EVERY-th file and its time is scaled linearly (which favours it: with a repo root its
# cost grows faster than that).
LIBCST_EVERY = 100
# The memory scaling runs on 1, 10 and 100 copies of the first part, `check` and `fix --check` alike (the goal
# is flat memory for both; `fix --check` of 100,000 files takes about 50 s here).
MIX_COPIES = (1, 10, 100)
MIX_FIX_UP_TO = 100

_TEMPLATES = [
    '''"""Generated: sequential downloads, one connection each."""
import requests


def fetch_all(urls):
    out = []
    for url in urls:
        response = requests.get(url, timeout=10)
        out.append(response.json())
    return out
''',
    '''"""Generated: a session per request."""
import requests


def fetch(url):
    with requests.Session() as session:
        return session.get(url, timeout=5).text


def crawl(urls):
    return [fetch(u) for u in urls]
''',
    '''"""Generated: httpx in a comprehension and a client per call."""
import httpx


def statuses(urls):
    return [httpx.get(u).status_code for u in urls]


def post_each(items):
    for item in items:
        client = httpx.Client()
        client.post("https://example.invalid/items", json=item)
''',
    '''"""Generated: aiohttp with a session per request."""
import asyncio

import aiohttp


async def get(url):
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as response:
            return await response.text()


async def main(urls):
    return await asyncio.gather(*(get(u) for u in urls))
''',
    '''"""Generated: a download read whole, and a pool of workers on one session."""
from concurrent.futures import ThreadPoolExecutor

import requests

SESSION = requests.Session()


def save(url, path):
    data = requests.get(url).content
    with open(path, "wb") as handle:
        handle.write(data)


def many(urls):
    with ThreadPoolExecutor(max_workers=32) as pool:
        return list(pool.map(SESSION.get, urls))
''',
]


def _generated(index: int) -> str:
    body = _TEMPLATES[index % len(_TEMPLATES)]
    return body + f"\n\nVARIANT = {index}\n"


def build_tree(root: Path, parts: int, files_per_part: int, generated_per_part: int) -> List[Path]:
    """The tree's part directories (built once; a marker records the shape)."""
    marker = root / "tree.json"
    library = stdlib_files()
    shape = {"parts": parts, "files": files_per_part, "generated": generated_per_part, "stdlib": len(library),
             "python": sys.version}
    part_dirs = [root / f"part_{i:02d}" for i in range(parts)]
    if marker.exists() and json.loads(marker.read_text()) == shape:
        return part_dirs
    if root.exists():
        shutil.rmtree(root)
    base = os.path.dirname(os.path.commonpath(library))
    copied = files_per_part - generated_per_part
    cursor = 0
    for p, part in enumerate(part_dirs):
        part.mkdir(parents=True)
        for k in range(copied):
            source = library[cursor % len(library)]
            cursor += 1
            flat = os.path.relpath(source, base).replace(os.sep, "__")
            shutil.copyfile(source, part / f"s{k:04d}_{flat}")
        for g in range(generated_per_part):
            (part / f"http_{g:03d}.py").write_text(_generated(p * generated_per_part + g))
    marker.write_text(json.dumps(shape))
    return part_dirs


def build_mix(root: Path, part: Path, copies: int) -> List[Path]:
    """`copies` folders each holding a copy of the files of `part`: trees of
    1x, 10x and 100x one part have the same mix of files, the largest file among them, so their peak memory can
    be compared (the parts of the main tree hold different files of the standard library)."""
    marker = root / "mix.json"
    names = sorted(path.name for path in part.iterdir() if path.suffix == ".py")
    shape = {"part": str(part), "copies": copies, "files": names, "links": False}
    dirs = [root / f"copy_{i:03d}" for i in range(copies)]
    if marker.exists() and json.loads(marker.read_text()) == shape:
        return dirs
    if root.exists():
        shutil.rmtree(root)
    for folder in dirs:
        folder.mkdir(parents=True)
        for name in names:  # copies, not links: `check` and `fix` read a file linked twice once
            shutil.copyfile(part / name, folder / name)
    marker.write_text(json.dumps(shape))
    return dirs


# ---------------------------------------------------------------------------------------------------- the floor
def _parse_file(path: str) -> bool:
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        ast.parse(data)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _py_files(dirs: List[str]) -> List[str]:
    out = []
    for top in dirs:
        for directory, subdirs, files in os.walk(top):
            subdirs.sort()
            out += [os.path.join(directory, n) for n in sorted(files) if n.endswith(".py")]
    return out


def floor_main(dirs: List[str], jobs: int) -> int:
    paths = _py_files(dirs)
    if jobs > 1:
        from multiprocessing import Pool

        with Pool(jobs) as pool:
            ok = sum(pool.imap_unordered(_parse_file, paths, chunksize=16))
    else:
        ok = sum(map(_parse_file, paths))
    print(f"{ok}/{len(paths)} parsed")
    return 0


_NOOP_CODEMOD = '''
from libcst.codemod import VisitorBasedCodemodCommand


class NoOp(VisitorBasedCodemodCommand):
    DESCRIPTION = "Parses, visits and prints every file unchanged."
'''


def _libcst_setup(root: Path) -> Dict[str, str]:
    """A codemod project in `root` as libcst's docs set one up: its config (repo_root ".") and a no-op command."""
    (root / "bench_noop_codemod.py").write_text(_NOOP_CODEMOD)
    (root / ".libcst.codemod.yaml").write_text(
        "generated_code_marker: '@generated'\nformatter: []\nblacklist_patterns: []\nmodules: []\nrepo_root: '.'\n"
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _commands(dirs: List[str]) -> Dict[str, List[str]]:
    me = str(Path(__file__).resolve())
    cli = tool("flake8-http-pool")
    return {
        "floor": [sys.executable, me, "--floor", "--jobs", "2", *dirs],
        "check": [cli, "check", "--isolated", "--no-cache", *dirs],
        "fix_check": [cli, "fix", "--check", "--isolated", "--no-cache", "--no-progress", *dirs],
        "ruff": [tool("ruff"), "check", "--isolated", "--no-cache", "--no-respect-gitignore", "--exit-zero",
                 "--quiet", *dirs],
    }


def _libcst_cmd(dirs: List[str]) -> List[str]:
    # libcst.tool reads its own options after the command's name.
    return [sys.executable, "-m", "libcst.tool", "codemod", "-x", "bench_noop_codemod.NoOp", "-j", "2",
            "--no-format", "--hide-progress", "--hide-generated-warnings", "--hide-blacklisted-warnings", *dirs]


# ------------------------------------------------------------------------------------------ memory by stage
def memory_by_stage(dirs: List[str]) -> Dict[str, List[float]]:
    """`check`'s main process: its resident set and its peak so far when each stage ends (memory_stages.py)."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "stages.json")
        subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "memory_stages.py"), out, *dirs],
                       check=True, env=child_environment(), stdin=subprocess.DEVNULL, capture_output=True)
        with open(out) as stream:
            return json.load(stream)  # type: ignore[no-any-return]


def memory_table(rows: List[dict]) -> List[str]:
    """The peak so far of `check`'s main process at the end of each stage, by tree size, and what each stage
    adds per file from the smallest tree to the largest (the cells of that row add up to the whole growth)."""
    from memory_stages import STAGES

    names = [stage for stage in STAGES[1:] if all(stage in row["stages"] for row in rows)]
    table = ["| files | " + " | ".join(names) + " |", "| ---: |" + " ---: |" * len(names)]
    for row in rows:
        table.append(f"| {row['files']:,} | " + " | ".join(f"{row['stages'][n][1]:.0f} MiB" for n in names) + " |")
    small, large = rows[0], rows[-1]
    if large["files"] > small["files"]:
        def added(row: dict, i: int) -> float:  # MiB of peak this stage added to the one before it
            return row["stages"][names[i]][1] - (row["stages"][names[i - 1]][1] if i else 0.0)

        per_file = [(added(large, i) - added(small, i)) * 2 ** 20 / (large["files"] - small["files"])
                    for i in range(len(names))]
        table.append(f"| added per file, {small['files']:,} -> {large['files']:,} | "
                     + " | ".join(f"{value:.0f} B" for value in per_file) + " |")
    return table


def memory_note(rows: List[dict]) -> str:
    """Where the main process's memory still grows with the tree."""
    small, large = rows[0], rows[-1]
    files = large["files"] - small["files"]

    def per_file(stage: str, before: str = "") -> float:
        grown = large["stages"][stage][1] - small["stages"][stage][1]
        if before:
            grown -= large["stages"][before][1] - small["stages"][before][1]
        return grown * 2 ** 20 / files if files else 0.0

    return (f"The main process's peak grows by {per_file('reported'):.0f} bytes per file from {small['files']:,} "
            f"to {large['files']:,} files. The files themselves are held on disk (file_table.py, SQLite's private "
            "temporary database: a page cache of 512 KiB per database), so listing them, phase 1 and the module "
            f"map add {per_file('module map'):.0f} bytes a file (the page caches filling); what grows is the "
            "project model's state over the modules it summarizes, which in this mix are one file in 30: the "
            f"gate's second phase adds {per_file('gate', 'module map'):.0f} bytes a file (the names searched for "
            f"and the functions that can matter), the solve {per_file('solved', 'gate'):.0f} (the hot functions), "
            f"the marks {per_file('marked', 'solved'):.0f}.")


# ------------------------------------------------------------------------------------------------- the stages
def stages(dirs: List[str], sample_dirs: List[str]) -> List[dict]:
    """Each stage of `fix`'s pipeline timed in one process on the files that reach it, plus ast-grep-py and
    libcst as if every file went through them (on `sample_dirs`, scaled to the tree)."""
    from flake8_http_pool.checking import mentions_a_library
    from flake8_http_pool.engine import analyze, may_have_findings
    from flake8_http_pool.fixing import fix_source
    from flake8_http_pool.source_files import SourceError, decode_source, parse_source

    paths = _py_files(dirs)
    t = time.perf_counter()
    blobs = []
    for path in paths:
        with open(path, "rb") as handle:
            blobs.append(handle.read())
    read_s = time.perf_counter() - t
    t = time.perf_counter()
    passed = [i for i, data in enumerate(blobs) if mentions_a_library(data)]
    gate_s = time.perf_counter() - t
    t = time.perf_counter()
    texts = {}
    for i in passed:
        try:
            text = decode_source(blobs[i])
        except SourceError:
            continue
        if may_have_findings(text):
            texts[i] = text
    text_gate_s = time.perf_counter() - t
    t = time.perf_counter()
    with_findings = []
    for i, text in texts.items():
        try:
            if analyze(parse_source(text, paths[i]), source=text):
                with_findings.append(i)
        except (SourceError, RecursionError):
            pass
    walk_s = time.perf_counter() - t
    # libcst is slow: fix the files with findings of the sample only, and scale.
    sample_set = set(_py_files(sample_dirs))
    fixed = [i for i in with_findings if paths[i] in sample_set] or with_findings[:1]
    fix_source(texts[fixed[0]], filename=paths[fixed[0]])  # libcst's import is not a per-file cost
    t = time.perf_counter()
    changed = 0
    for i in fixed:
        result = fix_source(texts[i], filename=paths[i])
        changed += result.text != texts[i]
    fix_s = (time.perf_counter() - t) * len(with_findings) / max(1, len(fixed))
    changed = round(changed * len(with_findings) / max(1, len(fixed)))

    sample = sorted(sample_set)
    scale = len(paths) / max(1, len(sample))
    sample_texts = []
    for path in sample:
        with open(path, "rb") as handle:
            sample_texts.append(handle.read().decode("utf-8", "replace"))
    from ast_grep_py import SgRoot

    t = time.perf_counter()
    for text in sample_texts:
        SgRoot(text, "python").root().find(kind="import_statement")
    grep_s = (time.perf_counter() - t) * scale
    t = time.perf_counter()
    for text in sample_texts:
        try:
            ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    parse_all_s = (time.perf_counter() - t) * scale
    import libcst

    cst_sample = sample_texts[: max(1, len(sample_texts) // 5)]
    t = time.perf_counter()
    for text in cst_sample:
        try:
            libcst.parse_module(text)
        except Exception:  # libcst refuses some valid files (and the invalid ones)
            pass
    cst_all_s = (time.perf_counter() - t) * len(paths) / len(cst_sample)
    n = len(paths)
    return [
        {"stage": "read bytes", "files": n, "seconds": read_s, "in_pipeline": True},
        {"stage": "bytes gate (library names in the bytes)", "files": n, "seconds": gate_s, "in_pipeline": True},
        {"stage": "decode + text gate (an import of a library)", "files": len(passed), "seconds": text_gate_s,
         "in_pipeline": True},
        {"stage": "`ast` parse + engine walk", "files": len(texts), "seconds": walk_s, "in_pipeline": True},
        {"stage": f"libcst fix (files with findings; ~{changed} change; timed on the first part, scaled)",
         "files": len(with_findings),
         "seconds": fix_s, "in_pipeline": True},
        {"stage": "ast-grep-py prefilter, every file (not used)", "files": n, "seconds": grep_s,
         "in_pipeline": False},
        {"stage": "`ast.parse`, every file (what `check` paid before it skipped the gate-rejected files)",
         "files": n, "seconds": parse_all_s,
         "in_pipeline": False},
        {"stage": "libcst parse, every file (what a libcst tool pays)", "files": n, "seconds": cst_all_s,
         "in_pipeline": False},
    ]


# ---------------------------------------------------------------------------------------------------- run
def run(quick: bool) -> dict:
    if quick:
        parts, per_part, generated, rounds, sizes = 3, 60, 6, 1, (1, 3, 10)
        root = CACHE / "tree_quick"
    else:
        parts, per_part, generated, rounds, sizes = PARTS, FILES_PER_PART, GENERATED_PER_PART, 3, MIX_COPIES
        root = CACHE / "tree10k"
    part_dirs = build_tree(root, parts, per_part, generated)
    # project_model.py makes the same tree one project (a pyproject.toml at its root); this benchmark measures
    # the parts as given, with no project root above them, whichever ran first.
    (root / "pyproject.toml").unlink(missing_ok=True)
    all_dirs = [str(p) for p in part_dirs]
    commands = _commands(all_dirs)
    samples: Dict[str, List[Timed]] = {name: [] for name in commands}
    for r in range(rounds):
        order = list(commands) if r % 2 == 0 else list(reversed(commands))  # A B ... then ... B A
        for name in order:
            samples[name].append(timed_run(commands[name]))
    med = {name: median([s.seconds for s in runs]) for name, runs in samples.items()}

    # libcst's codemod runner, as its users run it (from the project root holding its config).
    env = _libcst_setup(root)
    every = 30 if quick else LIBCST_EVERY
    tree_files = [os.path.relpath(p, root) for p in _py_files(all_dirs)]
    cst_files = tree_files[::every]
    cst = timed_run(_libcst_cmd(cst_files), cwd=str(root), env=env)
    if cst.returncode != 0:
        raise RuntimeError(f"libcst's codemod runner failed (exit {cst.returncode})")
    cst_scaled = cst.seconds * len(tree_files) / len(cst_files)

    # Time and peak memory at each size, on trees of copies of the first part (the same mix of files).
    mix_dirs = build_mix(root.parent / (root.name + "-mix"), part_dirs[0], max(sizes))
    scaling = []
    for size in sizes:
        cmds = _commands([str(p) for p in mix_dirs[:size]])
        c = timed_run(cmds["check"])
        f = timed_run(cmds["fix_check"]) if size <= MIX_FIX_UP_TO else None
        scaling.append({"files": size * per_part, "check_s": c.seconds, "check_rss": c.peak_rss_mib,
                        "fix_s": f.seconds if f else None, "fix_rss": f.peak_rss_mib if f else None})
    memory = [{"files": size * per_part, "stages": memory_by_stage([str(p) for p in mix_dirs[:size]])}
              for size in sizes]
    stage_rows = stages(all_dirs, all_dirs[:1])

    n = parts * per_part
    fix_vs_floor = med["fix_check"] / med["floor"]
    cst_vs_fix = cst_scaled / med["fix_check"]
    check_vs_ruff = med["check"] / med["ruff"]
    fixed = [row for row in scaling if row["fix_rss"] is not None]
    rss = [row["fix_rss"] for row in fixed] + [row["check_rss"] for row in scaling]
    rss_growth = max(fixed[-1]["fix_rss"] / fixed[0]["fix_rss"], scaling[-1]["check_rss"] / scaling[0]["check_rss"])
    goal_rows = [
        {"goal": f"`check` faster than `ruff check` ({n:,} files)", "target": "ratio < 1",
         "measured": f"{check_vs_ruff:.2f} ({fmt_s(med['check'])} vs {fmt_s(med['ruff'])})",
         "ok": check_vs_ruff < 1},
        {"goal": "`fix --check` at most half of reading + `ast.parse` of every file", "target": "ratio <= 0.5",
         "measured": f"{fix_vs_floor:.3f} ({fmt_s(med['fix_check'])} vs {fmt_s(med['floor'])})",
         "ok": fix_vs_floor <= 0.5},
        {"goal": "`fix --check` at least 50x faster than libcst's codemod runner (no-op command)",
         "target": "ratio >= 50",
         "measured": f"{cst_vs_fix:.0f}x ({fmt_s(med['fix_check'])} vs {fmt_s(cst_scaled)}"
                     f", scaled from {len(cst_files):,} files)",
         "ok": cst_vs_fix >= 50},
        {"goal": f"peak memory does not grow with the tree ({scaling[0]['files']:,} -> {scaling[-1]['files']:,} "
                 f"files of the same mix; `fix --check` up to {fixed[-1]['files']:,})",
         "target": "growth < 1.25x",
         "measured": f"{rss_growth:.2f}x (max {max(rss):.0f} MiB)", "ok": rss_growth < 1.25},
    ]
    table = [
        f"Tree: {n:,} files in {parts} parts of {per_part:,} ({per_part - generated} standard-library files "
        f"copied in turn + {generated} generated files with HTTP call sites each). Medians of {rounds} rounds; "
        "every command runs once per round, in alternating order. 2 worker processes everywhere "
        "(`check`/`fix` default to the core count; the floor uses a pool of 2; ruff uses its own threads).",
        "",
        "| command | median | min | max | vs floor | peak RSS |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    labels = {
        "floor": "(a) read + `ast.parse` every file (the floor, 2 processes)",
        "check": "`flake8-http-pool check`",
        "fix_check": "`flake8-http-pool fix --check`",
        "ruff": "(c) `ruff check` (default rules, --no-cache)",
    }
    for name, runs in samples.items():
        secs = [s.seconds for s in runs]
        table.append(f"| {labels[name]} | {fmt_s(med[name])} | {fmt_s(min(secs))} | {fmt_s(max(secs))} | "
                     f"{med[name] / med['floor']:.3f} | {max(s.peak_rss_mib for s in runs):.0f} MiB |")
    note = f" (measured on {len(cst_files):,} files: {fmt_s(cst.seconds)}; x{len(tree_files) / len(cst_files):.0f})"
    table.append(f"| (b) libcst codemod runner, no-op command, `-j 2` | {fmt_s(cst_scaled)}{note} | | | "
                 f"{cst_scaled / med['floor']:.1f} | {cst.peak_rss_mib:.0f} MiB |")
    table += ["", "Stages of `fix`'s pipeline, one process, whole tree (the last three: every file through the stage "
              "— ast-grep-py and `ast.parse` timed on the first part and scaled, libcst on a fifth of it):", "",
              "| stage | files in | time | per file |", "| --- | ---: | ---: | ---: |"]
    for row in stage_rows:
        per = row["seconds"] / row["files"] * 1e6 if row["files"] else 0.0
        table.append(f"| {row['stage']} | {row['files']:,} | {row['seconds']:.3f} s | {per:.0f} µs |")
    table += ["", f"Time and peak memory by tree size: 1, 10 and 100 copies of the tree's first part of "
              f"{per_part:,} files (the same mix of files at every size, so the same largest file), "
              f"one run each; `fix --check` up to {fixed[-1]['files']:,} files:", "",
              "| files | `check` | `check` peak RSS | `fix --check` | `fix --check` peak RSS |",
              "| ---: | ---: | ---: | ---: | ---: |"]
    for row in scaling:
        fix_cells = (f"{fmt_s(row['fix_s'])} | {row['fix_rss']:.0f} MiB" if row["fix_s"] is not None
                     else "not run | not run")
        table.append(f"| {row['files']:,} | {fmt_s(row['check_s'])} | {row['check_rss']:.0f} MiB | {fix_cells} |")
    table += ["", "Where the memory of `check`'s main process goes: its peak so far when each stage ends, on the same "
              "trees (benchmarks/memory_stages.py; the workers are not in it): the files listed (on disk), phase 1 "
              "(every file checked alone, summaries of those the gate takes), the module map, the gate's second "
              "phase, the solve, the findings marked with their fixes, and the report:", ""] + memory_table(memory)
    notes = [
        "`check` decodes every file but parses only those the byte gate passes (a syntax error in a file that "
        "can have no finding is flake8's and ruff's to report): the floor, (a), is what parsing them all costs.",
        "ruff is a compiled, multi-threaded linter; `(a)`, `check` and `fix` are CPython processes: the floor "
        "alone costs " + f"{med['floor'] / med['ruff']:.1f}x ruff's time here, so any tool that parses every "
        "file with `ast` cannot beat ruff on this machine.",
    ]
    notes.append(f"libcst's runner (`python -m libcst.tool codemod` with a do-nothing `VisitorBasedCodemodCommand`, "
                 f"run from a project holding its `.libcst.codemod.yaml`, repo_root `.`) ran on every {every}th "
                 f"file ({len(cst_files):,} of {len(tree_files):,}), and its time was scaled linearly: on the whole "
                 "tree it would take longer than the whole budget of this benchmark. With a repo root it pickles the "
                 "whole path list into every task, so its real cost on the whole tree is at least that.")
    notes.append(memory_note(memory))
    return {"title": f"3. A {n:,}-file tree", "goal_rows": goal_rows, "table": "\n".join(table), "notes": notes,
            "raw": {"medians": med, "libcst": cst.seconds, "libcst_scaled": cst_scaled, "scaling": scaling,
                    "stages": stage_rows, "memory": memory}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--jobs", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("dirs", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        return floor_main(args.dirs, args.jobs)
    result = run(args.quick)
    print(result["table"])
    for row in result["goal_rows"]:
        print(f"{'PASS' if row['ok'] else 'MISS'}: {row['goal']}: {row['measured']} (goal {row['target']})")
    for note in result["notes"]:
        print("note:", note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
