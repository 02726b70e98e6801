"""Benchmark: what importing the flake8 entry point costs, and that it leaves libcst unimported.

Runs `python -X importtime -c "import flake8_http_pool.plugin"` in fresh processes (flake8 itself is
imported first, as it is when flake8 loads a plugin) and reports the median cumulative import time of
the plugin's modules. Usage: python benchmarks/import_time.py [--runs N]
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import child_environment  # noqa: E402

_PROBE = (
    "import flake8.main.application, flake8.checker\n"  # already loaded when flake8 loads plugins
    "import flake8_http_pool.plugin\n"
    "import sys\n"
    "print('LIBCST' if 'libcst' in sys.modules else 'NO-LIBCST')\n"
)
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def plugin_import_us() -> tuple:
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", _PROBE], capture_output=True, text=True,
                            check=True, env=child_environment())
    total = 0
    for line in result.stderr.splitlines():
        match = _LINE.match(line)
        # Top-level (least indented) entries of our package: their cumulative time covers what they pull in.
        if match and match.group(4) == "flake8_http_pool.plugin":
            total = int(match.group(2))
    return total, result.stdout.strip()


def run(quick: bool, runs: int = 9) -> dict:
    """The benchmark driver's interface (benchmarks/run.py): goal rows, a table and notes."""
    if quick:
        runs = 2
    samples = []
    libcst = set()
    for _ in range(runs):
        micros, marker = plugin_import_us()
        if not micros:
            raise RuntimeError("flake8_http_pool.plugin did not appear in -X importtime's output")
        samples.append(micros)
        libcst.add(marker)
    median_ms = statistics.median(samples) / 1000
    no_libcst = libcst == {"NO-LIBCST"}
    table = "\n".join([
        f"`python -X importtime` in {runs} fresh processes, flake8's own modules imported first (as when flake8 "
        "loads its plugins); the plugin module's cumulative import time.",
        "",
        "| import of `flake8_http_pool.plugin` | median | min | max | libcst imported |",
        "| --- | ---: | ---: | ---: | --- |",
        f"| | {median_ms:.2f} ms | {min(samples) / 1000:.2f} ms | {max(samples) / 1000:.2f} ms | "
        f"{'no' if no_libcst else 'yes'} |",
    ])
    goal_rows = [
        {"goal": "importing the flake8 entry point", "target": "< 20 ms", "measured": f"{median_ms:.2f} ms",
         "ok": median_ms < 20},
        {"goal": "libcst not imported by the flake8 entry point", "target": "not imported",
         "measured": "not imported" if no_libcst else "imported", "ok": no_libcst},
    ]
    return {"title": "2. Importing the flake8 entry point", "goal_rows": goal_rows, "table": table, "notes": [],
            "raw": {"samples_us": samples}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    result = run(False, args.runs)
    print(result["table"])
    for row in result["goal_rows"]:
        print(f"{'PASS' if row['ok'] else 'MISS'}: {row['goal']}: {row['measured']} (goal {row['target']})")
    return 0 if all(row["ok"] for row in result["goal_rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
