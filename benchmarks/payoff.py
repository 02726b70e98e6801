"""Benchmark 4, the payoff: legacy HTTP client programs before and after `flake8-http-pool fix --unsafe-fixes`.

Programs in the styles users write (generated into a temporary directory): 1,000 sequential `requests.get`
calls; a `ThreadPoolExecutor(max_workers=8)` mapping a `requests.get` function over 1,000 URLs; aiohttp with a
`ClientSession` per request, gathered over 1,000 URLs and bounded by a semaphore of 8 (in two common shapes).
Each is copied and rewritten with `python -m flake8_http_pool fix --unsafe-fixes <copy>`; then the original (A)
and the rewritten copy (B) run against a local keep-alive server (benchmarks/keepalive_server.py) over HTTP and
over HTTPS (a CA and certificate made at run time by trustme), in pairs A B A B ..., and we report the
connections the server accepted, wall times (medians), the time ratio B/A (median of the per-pair ratios), and
check that B printed exactly what A printed. Wall time is the whole child process; the "net" ratio subtracts
the median time of the same program run with 0 URLs (interpreter start-up and imports).

Usage: python benchmarks/payoff.py [--quick]   (--quick: 50 URLs, 1 pair)
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from keepalive_server import KeepAliveServer  # noqa: E402

TITLE = "Payoff: legacy client programs before and after `fix --unsafe-fixes`"


class Program(NamedTuple):
    name: str
    label: str
    workers: int  # the most connections the fixed program should need
    source: str


# Each program takes the base URL and the number of URLs from argv. requests reads its CA bundle from
# REQUESTS_CA_BUNDLE (the Session the fix introduces does too); the aiohttp programs build an ssl context from
# the file named by CA_BUNDLE at import time and pass it on each request, so the rewritten program still uses it.
PROGRAMS = [
    Program("sequential_requests", "(a) sequential `requests.get` in a loop", 1, '''\
        """Fetch every item, one after another."""
        import sys

        import requests


        def main():
            base, count = sys.argv[1], int(sys.argv[2])
            total = 0
            for i in range(count):
                r = requests.get(f"{base}/items/{i}", timeout=30)
                r.raise_for_status()
                total += len(r.content)
                print(r.status_code, r.text.strip())
            print("total bytes", total)


        if __name__ == "__main__":
            main()
        '''),
    Program("threadpool_requests", "(b) `ThreadPoolExecutor(max_workers=8)` mapping a `requests.get` function", 8, '''\
        """Fetch every item with eight worker threads."""
        import sys
        from concurrent.futures import ThreadPoolExecutor

        import requests


        def fetch(url):
            r = requests.get(url, timeout=30)
            r.raise_for_status()
            return r.text.strip()


        def main():
            base, count = sys.argv[1], int(sys.argv[2])
            urls = [f"{base}/items/{i}" for i in range(count)]
            with ThreadPoolExecutor(max_workers=8) as executor:
                for body in executor.map(fetch, urls):
                    print(body)


        if __name__ == "__main__":
            main()
        '''),
    Program("aiohttp_session_per_request",
            "(c) aiohttp, a `ClientSession` per request inside `async with sem:`", 8, '''\
        """Fetch every item with aiohttp, eight at a time."""
        import asyncio
        import os
        import ssl
        import sys

        import aiohttp

        SSL_CONTEXT = ssl.create_default_context(cafile=os.environ.get("CA_BUNDLE"))


        async def fetch(url, limit):
            async with limit:
                async with aiohttp.ClientSession() as session:
                    async with session.get(url, ssl=SSL_CONTEXT) as resp:
                        resp.raise_for_status()
                        return (await resp.text()).strip()


        async def main():
            base, count = sys.argv[1], int(sys.argv[2])
            limit = asyncio.Semaphore(8)
            bodies = await asyncio.gather(*(fetch(f"{base}/items/{i}", limit) for i in range(count)))
            for body in bodies:
                print(body)


        if __name__ == "__main__":
            asyncio.run(main())
        '''),
    Program("aiohttp_session_outside_semaphore",
            "(c') aiohttp, a `ClientSession` per request around `async with sem:`", 8, '''\
        """Fetch every item with aiohttp, eight requests at a time."""
        import asyncio
        import os
        import ssl
        import sys

        import aiohttp

        SSL_CONTEXT = ssl.create_default_context(cafile=os.environ.get("CA_BUNDLE"))


        async def fetch(url, limit):
            async with aiohttp.ClientSession() as session:
                async with limit:
                    async with session.get(url, ssl=SSL_CONTEXT) as resp:
                        resp.raise_for_status()
                        return (await resp.text()).strip()


        async def main():
            base, count = sys.argv[1], int(sys.argv[2])
            limit = asyncio.Semaphore(8)
            bodies = await asyncio.gather(*(fetch(f"{base}/items/{i}", limit) for i in range(count)))
            for body in bodies:
                print(body)


        if __name__ == "__main__":
            asyncio.run(main())
        '''),
]


class RunResult(NamedTuple):
    seconds: float
    connections: int
    requests: int
    stdout: str


def _tool(*args: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8_http_pool", *args], cwd=cwd, capture_output=True, text=True)


def _child_env(server: Optional[KeepAliveServer]) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "CA_BUNDLE"):
        env.pop(name, None)
    if server is not None and server.ca_bundle:
        env["REQUESTS_CA_BUNDLE"] = env["CA_BUNDLE"] = server.ca_bundle
    return env


def _run_program(path: Path, server: KeepAliveServer, count: int, env: Dict[str, str]) -> RunResult:
    server.reset()
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, str(path), server.url, str(count)], env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=600)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{path.name} against {server.url} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    # The server counts a request after its last write: the client may have exited a moment earlier.
    deadline = time.monotonic() + 2.0
    while server.requests < count and time.monotonic() < deadline:
        time.sleep(0.005)
    return RunResult(seconds, server.connections, server.requests, proc.stdout)


# A raw keep-alive client (http.client, one connection): how fast the server itself answers, so the programs'
# times can be seen not to be the server's.
_FLOOR_CLIENT = """\
import http.client, os, ssl, sys, time
url, count = sys.argv[1], int(sys.argv[2])
host, port = url.split("//")[1].split(":")
if url.startswith("https"):
    context = ssl.create_default_context(cafile=os.environ["CA_BUNDLE"])
    conn = http.client.HTTPSConnection(host, int(port), context=context)
else:
    conn = http.client.HTTPConnection(host, int(port))
start = time.perf_counter()
for i in range(count):
    conn.request("GET", f"/items/{i}")
    conn.getresponse().read()
print(time.perf_counter() - start)
"""


def _server_floor_us(server: KeepAliveServer, count: int, repeats: int) -> float:
    """Median microseconds per request the server takes with a raw keep-alive client in another process."""
    samples = []
    for _ in range(max(repeats, 1)):
        proc = subprocess.run([sys.executable, "-c", _FLOOR_CLIENT, server.url, str(count)], env=_child_env(server),
                              capture_output=True, text=True, check=True, timeout=300)
        samples.append(float(proc.stdout) / count * 1e6)
    return statistics.median(samples)


def _startup_seconds(path: Path, server: KeepAliveServer, repeats: int, env: Dict[str, str]) -> float:
    """The program with 0 URLs: interpreter start-up, imports and set-up, no request."""
    return statistics.median(_run_program(path, server, 0, env).seconds for _ in range(min(max(repeats, 1), 3)))


def _short_diff(before: str, after: str, name: str) -> str:
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), f"{name}.py", f"{name}.py (fixed)",
                                 n=0, lineterm="")
    return "\n".join(line for line in lines if not line.startswith("@@"))


def _fenced(text: str, language: str = "") -> str:
    """A code block indented to sit inside a markdown list item."""
    return "\n".join("  " + line for line in [f"```{language}", *text.splitlines(), "```"])


def _fix_programs(workdir: Path) -> Dict[str, dict]:
    """Write every program and its rewritten copy; what the tool said and changed."""
    out: Dict[str, dict] = {}
    for program in PROGRAMS:
        source = textwrap.dedent(program.source)
        original = workdir / f"{program.name}.py"
        fixed = workdir / f"{program.name}_fixed.py"
        original.write_text(source)
        fixed.write_text(source)
        check = _tool("check", original.name, cwd=str(workdir))
        fix = _tool("fix", "--unsafe-fixes", fixed.name, cwd=str(workdir))
        if fix.returncode not in (0, 1):
            raise RuntimeError(f"fix --unsafe-fixes {fixed.name} exited {fix.returncode}:\n{fix.stderr}")
        after = fixed.read_text()
        recheck = _tool("check", fixed.name, cwd=str(workdir))
        compile(after, str(fixed), "exec")
        out[program.name] = {
            "original": original,
            "fixed": fixed,
            "changed": after != source,
            "diff": _short_diff(source, after, program.name),
            "findings_before": check.stdout.strip(),
            "fix_output": (fix.stdout + fix.stderr).strip(),
            "findings_after": recheck.stdout.strip().replace(f"{program.name}_fixed.py", f"{program.name}.py (fixed)"),
        }
    return out


def _measure(program: Program, fixed: dict, server: KeepAliveServer, count: int, repeats: int) -> dict:
    env = _child_env(server)
    row: dict = {"program": program.name, "protocol": "https" if server.tls else "http", "urls": count,
                 "fixed": fixed["changed"]}
    row["startup_s"] = _startup_seconds(fixed["original"], server, repeats, env)
    before: List[RunResult] = []
    after: List[RunResult] = []
    for _ in range(repeats):
        before.append(_run_program(fixed["original"], server, count, env))
        if fixed["changed"]:
            after.append(_run_program(fixed["fixed"], server, count, env))
    expected = before[0].stdout
    if len(expected.splitlines()) < count:
        raise RuntimeError(f"{program.name} printed {len(expected.splitlines())} lines for {count} URLs")
    for result in before + after:
        if result.stdout != expected:
            raise AssertionError(f"{program.name} ({row['protocol']}): output differs between runs or after the fix")
        if result.requests != count:
            raise AssertionError(f"{program.name}: the server answered {result.requests} requests, expected {count}")
    row["connections_before"] = min(r.connections for r in before)  # the best run
    row["wall_before_s"] = statistics.median(r.seconds for r in before)
    row["samples_before_s"] = [round(r.seconds, 4) for r in before]
    if after:
        row["connections_after"] = max(r.connections for r in after)  # the worst run
        row["wall_after_s"] = statistics.median(r.seconds for r in after)
        row["samples_after_s"] = [round(r.seconds, 4) for r in after]
        row["ratio"] = statistics.median(b.seconds / a.seconds for a, b in zip(before, after))
        net_before = row["wall_before_s"] - row["startup_s"]
        net_after = row["wall_after_s"] - row["startup_s"]
        # Meaningless when start-up is nearly all of the run (a few URLs, as in --quick).
        row["net_ratio"] = net_after / net_before if net_before > 0.1 and net_after > 0 else None
        row["output_identical"] = True
    return row


def _table(rows: List[dict], count: int) -> str:
    head = (f"| program ({count} URLs) | protocol | connections before | after | wall before | after | "
            "time after/before | net of start-up | output same |\n|---|---|---:|---:|---:|---:|---:|---:|---|\n")
    labels = {p.name: p.label for p in PROGRAMS}
    body = []
    for row in rows:
        cells = [labels[row["program"]], row["protocol"].upper(), f"{row['connections_before']:.0f}"]
        if "ratio" in row:
            net = "-" if row["net_ratio"] is None else f"{row['net_ratio']:.2f} ({1 / row['net_ratio']:.1f}x)"
            ratio = f"{row['ratio']:.2f} ({1 / row['ratio']:.1f}x speed-up)"
            cells += [f"{row['connections_after']:.0f}", f"{row['wall_before_s']:.2f} s",
                      f"{row['wall_after_s']:.2f} s", ratio, net, "yes"]
        else:
            cells += ["not fixed", f"{row['wall_before_s']:.2f} s", "-", "-", "-", "-"]
        body.append("| " + " | ".join(cells) + " |")
    return head + "\n".join(body) + "\n"


def _goal_rows(rows: List[dict]) -> List[dict]:
    by_name = {p.name: p for p in PROGRAMS}
    goals = []
    for row in rows:
        program = by_name[row["program"]]
        goal = f"{program.label}, {row['protocol'].upper()}: connections opened, before -> after the fix"
        target = f"{row['urls']} -> at most {program.workers}; time ratio reported"
        if "ratio" not in row:
            goals.append({"goal": goal, "target": target,
                          "measured": f"not rewritten by `fix --unsafe-fixes`: {row['connections_before']:.0f} "
                                      "connections, unchanged", "ok": False})
            continue
        ok = row["connections_after"] <= program.workers and row["connections_before"] >= row["urls"]
        goals.append({"goal": goal, "target": target,
                      "measured": f"{row['connections_before']:.0f} -> {row['connections_after']:.0f}; time "
                                  f"after/before {row['ratio']:.2f} ({1 / row['ratio']:.1f}x speed-up)",
                      "ok": ok})
    return goals


def run(quick: bool) -> dict:
    count = 50 if quick else 1000
    repeats = 1 if quick else 5
    rows: List[dict] = []
    floors: Dict[str, float] = {}
    notes: List[str] = []
    started = time.perf_counter()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="payoff-") as tmp:
        fixes = _fix_programs(Path(tmp))
        for tls in (False, True):
            with KeepAliveServer(tls=tls) as server:
                floors["https" if tls else "http"] = _server_floor_us(server, count, repeats)
                for program in PROGRAMS:
                    rows.append(_measure(program, fixes[program.name], server, count, repeats))
    nets = [r.get("wall_after_s", r["wall_before_s"]) - r["startup_s"] for r in rows]
    fastest = (f"; the fastest program, net of its start-up, took {min(n for n in nets if n > 0.1) / count * 1e6:.0f} "
               "us/request" if any(n > 0.1 for n in nets) else "")
    notes.append(
        f"{count} URLs per program, {repeats} paired run(s) A B A B (A = original, B = after `fix --unsafe-fixes`); "
        "connections: the fewest any original run opened and the most any fixed run opened; "
        "wall time is the whole child process, medians; the ratio is the median of the per-pair ratios B/A; "
        "'net of start-up' is (median after - start-up) / (median before - start-up), start-up being the median "
        "time of the same program run with 0 URLs "
        "(start-up: " + ", ".join(f"{r['program']} {r['protocol']} {r['startup_s']:.2f} s" for r in rows
                                  if r["protocol"] == "http") + "). "
        "Server: benchmarks/keepalive_server.py on 127.0.0.1 (a thread per connection, keep-alive, TCP_NODELAY); "
        "HTTPS with a trustme CA made at run time. It answers a raw keep-alive `http.client` loop in another "
        f"process in {floors['http']:.0f} us/request over HTTP and {floors['https']:.0f} us/request over HTTPS "
        f"(median){fastest}. "
        "Every fixed program printed exactly what the original printed, "
        "and the server answered exactly one request per URL in every run."
    )
    for program in PROGRAMS:
        fix = fixes[program.name]
        if fix["changed"]:
            notes.append(f"{program.label}: the fix's diff:\n" + _fenced(fix["diff"], "diff"))
        else:
            notes.append(f"{program.label}: NOT rewritten by `fix --unsafe-fixes`; `check` and `fix` reported:\n"
                         + _fenced(f"{fix['findings_before'] or '(no finding)'}\n{fix['fix_output']}"))
        if fix["changed"] and fix["findings_after"]:
            notes.append(f"{program.label}: `check` after the fix still reports:\n" + _fenced(fix["findings_after"]))
    load_after = os.getloadavg()
    notes.append(f"Benchmark wall time: {time.perf_counter() - started:.0f} s; 1-minute load average "
                 f"{load_before[0]:.2f} before, {load_after[0]:.2f} after, on {os.cpu_count()} cores "
                 "(the client program and the server each take one).")
    return {"title": TITLE, "goal_rows": _goal_rows(rows), "table": _table(rows, count), "notes": notes, "rows": rows,
            "server_floor_us": floors}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 URLs, one pair of runs")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args()
    result = run(args.quick)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"## {result['title']}\n")
    print("| goal | target | measured | verdict |\n|---|---|---|---|")
    for goal in result["goal_rows"]:
        print(f"| {goal['goal']} | {goal['target']} | {goal['measured']} | {'met' if goal['ok'] else 'NOT MET'} |")
    print()
    print(result["table"])
    for note in result["notes"]:
        print(f"- {note}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
