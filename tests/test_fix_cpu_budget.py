"""fix's per-file budget counts CPU time, not the clock (issue 33): the same run fixes the same files on a quiet
machine and on a loaded one.

On a loaded machine the clock runs two and three times as long as the CPU a fix uses; a wall-clock budget of 20 s
dropped a 5,000-line module's fixes there and kept them on a quiet machine. The budget is now SIGPROF's timer
(ITIMER_PROF): time spent waiting for a core, or sleeping, does not count, and SIGALRM stays its users'.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple

import pytest

from cli_support import command
from flake8_http_pool.time_budget import OverBudget, time_budget

needs_cpu_timer = pytest.mark.skipif(not hasattr(signal, "ITIMER_PROF"), reason="no CPU-time timer (Windows)")


def _spin(seconds: float) -> None:
    """Use the CPU for up to `seconds` on the clock."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


@needs_cpu_timer
def test_waiting_does_not_spend_the_budget() -> None:
    with time_budget(0.2):
        time.sleep(0.6)  # a wall-clock budget ended here


@needs_cpu_timer
def test_using_the_cpu_spends_it() -> None:
    with pytest.raises(OverBudget):
        with time_budget(0.05):
            _spin(10)


@needs_cpu_timer
def test_sigalrm_stays_with_its_users() -> None:
    rang: List[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: rang.append(signum))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with time_budget(5):
            time.sleep(0.3)
        assert rang == [signal.SIGALRM]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@needs_cpu_timer
def test_a_cpu_timer_set_before_is_put_back() -> None:
    previous = signal.signal(signal.SIGPROF, signal.SIG_IGN)
    try:
        signal.setitimer(signal.ITIMER_PROF, 100, 50)
        with time_budget(1):
            pass
        delay, interval = signal.getitimer(signal.ITIMER_PROF)
        assert 90 < delay <= 101 and interval == 50  # the kernel rounds to its tick
        assert signal.getsignal(signal.SIGPROF) == signal.SIG_IGN
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


# -- under a CPU hog ------------------------------------------------------------------------------------------
HOGS_PER_CORE = 4


def _module() -> str:
    """A module whose fix costs about a second of CPU: one hot function's request (HTP102) among much code."""
    parts = ["import json\nimport requests\n\n\ndef fetch(url):\n    return requests.get(url, timeout=5)\n\n\n"
             "def crawl(urls):\n    for url in urls:\n        fetch(url)\n"]
    for n in range(250):
        parts.append(f"\n\ndef helper_{n}(value, scale={n}):\n    data = {{'value': value, 'n': scale}}\n"
                     f"    return json.dumps(data, indent=2) + str(value * scale)\n")
    return "".join(parts)


def _cores() -> Optional[Tuple[int, ...]]:
    """Two of the cores this process may run on, to hold the hogs and fix to (None where that cannot be set)."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    return tuple(sorted(os.sched_getaffinity(0))[:2])


def _on(cores: Optional[Tuple[int, ...]]) -> Optional[Callable[[], None]]:
    if cores is None:
        return None
    return lambda: os.sched_setaffinity(0, cores)  # type: ignore[attr-defined]


def _fix(directory: Path, budget: float, cores: Optional[Tuple[int, ...]]) -> Tuple[str, float]:
    """`fix --diff` of the module with `budget` seconds of CPU per file: its output, and the CPU it took."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [*command(), "fix", "--isolated", "--unsafe-fixes", "--diff", "--no-progress", "--jobs", "1",
         "--timeout-per-file", str(budget), "module.py"],
        cwd=directory, capture_output=True, text=True, timeout=600, env=env, preexec_fn=_on(cores),
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done.stdout + done.stderr, cpu


@pytest.mark.slow
@needs_cpu_timer
def test_a_file_near_its_budget_is_fixed_the_same_under_a_cpu_hog(tmp_path: Path) -> None:
    (tmp_path / "module.py").write_text(_module())
    cores = _cores()
    _, cpu = _fix(tmp_path, 0, cores)
    # Twice the CPU the whole run took (start-up included): the fix's CPU stays under it with hogs beside it,
    # while the clock, with four hogs a core, runs about five times its CPU.
    budget = round(2 * cpu, 2)
    quiet, _ = _fix(tmp_path, budget, cores)
    assert "+_HTTP_SESSION = requests.Session()" in quiet and "took longer" not in quiet, quiet
    hogs: List[Any] = []
    try:
        for _ in range(HOGS_PER_CORE * len(cores or (0, 1))):
            hogs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=_on(cores)))
        loaded, _ = _fix(tmp_path, budget, cores)
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
    assert loaded == quiet
