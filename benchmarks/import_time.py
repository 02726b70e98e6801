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

_PROBE = (
    "import flake8.main.application, flake8.checker\n"  # already loaded when flake8 loads plugins
    "import flake8_http_pool.plugin\n"
    "import sys\n"
    "print('LIBCST' if 'libcst' in sys.modules else 'NO-LIBCST')\n"
)
_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def plugin_import_us() -> tuple:
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", _PROBE], capture_output=True, text=True, check=True)
    total = 0
    for line in result.stderr.splitlines():
        match = _LINE.match(line)
        # Top-level (least indented) entries of our package: their cumulative time covers what they pull in.
        if match and match.group(4) == "flake8_http_pool.plugin":
            total = int(match.group(2))
    return total, result.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    samples = []
    libcst = set()
    for _ in range(args.runs):
        micros, marker = plugin_import_us()
        samples.append(micros)
        libcst.add(marker)
    median_ms = statistics.median(samples) / 1000
    print(f"flake8_http_pool.plugin import: median {median_ms:.2f} ms over {args.runs} runs "
          f"(min {min(samples) / 1000:.2f}, max {max(samples) / 1000:.2f}); libcst: {', '.join(sorted(libcst))}")
    return 0 if median_ms < 20 and libcst == {"NO-LIBCST"} else 1


if __name__ == "__main__":
    sys.exit(main())
