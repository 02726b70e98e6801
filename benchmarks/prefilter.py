"""Benchmark: which prefilter should the repository scan use, the bytes gate + `ast` or ast-grep-py?

On the CPython standard library, each paired run times, per stage:
  gate+ast : search each file's bytes for the HTTP libraries' names (checking.mentions_a_library), then the
             engine's text gate and `ast.parse` of the files that pass (what `check` does today);
  ast-grep : parse every file with ast-grep-py and look for an import of those libraries structurally, then
             `ast.parse` of the files that pass (the engine works on `ast`, so they are parsed again).
Reading the bytes is common to both and timed apart. Medians of N paired runs (default 5), and their ratio.

    python benchmarks/prefilter.py [--runs 5] [--root DIR]
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import sys
import sysconfig
import time
from typing import List, Tuple

from flake8_http_pool.checking import mentions_a_library
from flake8_http_pool.engine import may_have_findings

LIBRARIES = ("requests", "httpx", "aiohttp", "urllib", "niquests", "gevent", "grequests", "requests_futures")


def source_files(root: str) -> List[str]:
    out = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in ("site-packages", "__pycache__"))
        out += [os.path.join(directory, name) for name in sorted(files) if name.endswith(".py")]
    return out


def read_all(paths: List[str]) -> List[Tuple[str, bytes]]:
    out = []
    for path in paths:
        with open(path, "rb") as handle:
            out.append((path, handle.read()))
    return out


def _parse(text: str) -> bool:
    try:
        ast.parse(text)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def gate_then_ast(files: List[Tuple[str, bytes]]) -> Tuple[float, float, int]:
    start = time.perf_counter()
    passing = [data for _, data in files if mentions_a_library(data)]
    texts = [t for t in (d.decode("utf-8", "replace") for d in passing) if may_have_findings(t)]
    gate = time.perf_counter() - start
    start = time.perf_counter()
    for text in texts:
        _parse(text)
    return gate, time.perf_counter() - start, len(texts)


def _imports_a_library(root) -> bool:
    for kind in ("import_statement", "import_from_statement"):
        for node in root.find_all(kind=kind):
            text = node.text()
            if any(name in text for name in LIBRARIES):
                return True
    return False


def ast_grep_then_ast(files: List[Tuple[str, bytes]]) -> Tuple[float, float, int]:
    from ast_grep_py import SgRoot

    start = time.perf_counter()
    texts = []
    for _, data in files:
        text = data.decode("utf-8", "replace")
        if _imports_a_library(SgRoot(text, "python").root()):
            texts.append(text)
    prefilter = time.perf_counter() - start
    start = time.perf_counter()
    for text in texts:
        _parse(text)
    return prefilter, time.perf_counter() - start, len(texts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--root", default=sysconfig.get_paths()["stdlib"])
    args = parser.parse_args()
    import ast_grep_py  # noqa: F401  (imported before timing: its load is a one-off)

    paths = source_files(args.root)
    start = time.perf_counter()
    files = read_all(paths)
    read = time.perf_counter() - start
    total_bytes = sum(len(d) for _, d in files)
    start = time.perf_counter()
    for _, data in files:
        _parse(data.decode("utf-8", "replace"))
    parse_all = time.perf_counter() - start
    print(f"{len(files)} files, {total_bytes / 1e6:.1f} MB under {args.root}; read {read:.2f} s; "
          f"ast.parse of every file {parse_all:.2f} s (reference)")

    rows = {"gate+ast": [], "ast-grep": []}
    counts = {}
    for run in range(args.runs):
        # Paired: both variants in each run, order alternated so neither always gets the warmer cache.
        order = [("gate+ast", gate_then_ast), ("ast-grep", ast_grep_then_ast)]
        if run % 2:
            order.reverse()
        for name, variant in order:
            pre, parse, passed = variant(files)
            rows[name].append((pre, parse))
            counts[name] = passed
    print(f"medians of {args.runs} paired runs:")
    print(f"{'variant':<10} {'prefilter s':>12} {'ast.parse s':>12} {'total s':>10} {'files parsed':>13}")
    totals = {}
    for name, values in rows.items():
        pre = statistics.median(v[0] for v in values)
        parse = statistics.median(v[1] for v in values)
        totals[name] = statistics.median(v[0] + v[1] for v in values)
        print(f"{name:<10} {pre:>12.3f} {parse:>12.3f} {totals[name]:>10.3f} {counts[name]:>13}")
    ratio = totals["ast-grep"] / totals["gate+ast"] if totals["gate+ast"] else float("inf")
    winner = "gate+ast" if ratio > 1 else "ast-grep"
    print(f"ast-grep / gate+ast = {ratio:.1f}x -> {winner} wins; bytes gate = "
          f"{100 * statistics.median(v[0] for v in rows['gate+ast']) / parse_all:.1f} % of parsing every file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
