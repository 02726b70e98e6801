"""Workers that cannot start never hang a run (issue 32): under a memory limit (`ulimit -v`) a worker may fail to
start or die, or the run itself run out of memory; the run then ends with its results, the work done in one
process, or with one line saying it ran out of memory.

The real commands run under RLIMIT_AS in a session of their own, killed whole if they outlive their time; the
pool's failures are also made to happen on purpose, each in a subprocess with a timeout.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List, Optional

import pytest

from cli_support import command, processes

LOOP = "import requests\n\nfor u in urls:\n    requests.get(u)\n"
NOTE = "flake8-http-pool: worker processes cannot be used ("
OUT_OF_MEMORY = "flake8-http-pool: error: out of memory\n"

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and fork pools as on Linux"),
    pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity") else True,
                       reason="a pool needs two cores (--jobs is capped at the core count)"),
]


def _env() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return env


def _limited(args: List[str], cwd: Path, limit_kb: int, timeout: float = 60) -> Optional[subprocess.CompletedProcess]:
    """`args` run under an address-space limit of `limit_kb` KiB; None when it (or a worker it left) was still
    running after `timeout` seconds: then its whole session is killed."""
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_kb * 1024, limit_kb * 1024))

    process = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=cap, start_new_session=True, env=_env())
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _stuck.append(_session_state(process.pid))
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None
    return subprocess.CompletedProcess(args, process.returncode, out, err)


# What was still running in each session `_limited` killed: said by the test that fails on it.
_stuck: List[str] = []


def _session_state(session: int) -> str:
    """Each process of the session: pid, parent, state, where the kernel has it waiting, and its threads."""
    lines = []
    for entry, fields in processes():
        if int(fields[3]) != session:  # the process group: the session's leader made it
            continue
        try:
            with open(f"/proc/{entry}/wchan") as handle:
                wchan = handle.read()
            threads = len(os.listdir(f"/proc/{entry}/task"))
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")[-60:]
        except OSError:
            continue
        lines.append(f"pid {entry} ppid {fields[1]} state {fields[0]} wchan {wchan} threads {threads}: {cmdline}")
    return "; ".join(lines) or "nothing left"


def _floor_kb() -> int:
    """The smallest limit (KiB, in steps of 2,500) under which this interpreter starts and imports the command's
    modules, flake8's and the standard library's it loads, without a word: below it, what fails is Python (a
    module half-imported, `Fatal Python error`), before any code of ours can say anything."""
    probe = [sys.executable, "-c", "import hashlib, json, flake8.main.application, flake8_http_pool.plugin, "
             "flake8_http_pool.engine; from flake8_http_pool.cli import build_parser; build_parser()"]
    for limit in range(10000, 300000, 2500):
        result = _limited(probe, Path.cwd(), limit)
        if result is not None and result.returncode == 0 and not result.stderr:
            return limit
    pytest.skip("Python does not start under 300 MB of address space here")


def _project(root: Path, modules: int) -> Path:
    """`modules` modules behind a root marker."""
    (root / "pyproject.toml").write_text("")
    for number in range(modules):
        (root / f"m{number:03}.py").write_text(LOOP)
    return root


COMMANDS = {
    "check": [*command(), "check", "--no-cache", "--jobs", "2", "."],
    "fix --diff": [*command(), "fix", "--no-cache", "--no-progress", "--jobs", "2", "--diff", "--unsafe-fixes", "."],
    # flake8's own pool (-j 2) fails to start under these limits in flake8 itself: the plugin's is what is tried.
    "flake8": [sys.executable, "-m", "flake8", "--isolated", "-j", "1", "--select", "HTP", "."],
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMMANDS))
def test_under_a_memory_limit_a_run_ends_with_its_results_or_says_out_of_memory(tmp_path: Path, name: str) -> None:
    args = COMMANDS[name]
    project = _project(tmp_path, 200 if name == "flake8" else 40)  # the plugin's cold solve pools from 200 on
    free = subprocess.run(args, cwd=project, capture_output=True, text=True, timeout=600, env=_env())
    assert free.returncode in (0, 1) and free.stdout, free.stderr
    floor = _floor_kb()
    normal_after = 0
    seen = []
    for limit in range(floor, floor + 150000, 2500):
        result = _limited(args, project, limit)
        assert result is not None, f"{name} under {limit} KiB: still running after 60 s: {_stuck[-1]}"
        seen.append((limit, result.returncode, result.stderr[:120]))
        stderr = result.stderr
        if stderr.startswith(NOTE):
            note, stderr = stderr.split("\n", 1)
            assert note.endswith("; working in this process"), note
        if (result.returncode, result.stdout, stderr) == (free.returncode, free.stdout, free.stderr):
            normal_after = 0 if result.stderr != free.stderr else normal_after + 1
            if normal_after >= 3:
                break  # past the limits too low for the run
            continue
        # Too little memory for the work itself: said so (for the run, or for the files it could not do).
        normal_after = 0
        if name == "flake8":
            assert "MemoryError" in stderr or "out of memory" in stderr, (limit, result.stderr)
        else:
            # The lines other than a file's "out of memory" first: pytest cuts a long message short.
            said = (limit, result.returncode, len(result.stdout),
                    [line for line in stderr.splitlines() if "out of memory" not in line][:8], result.stderr)
            assert "Traceback" not in stderr, said
            # A file's line may name what CPython itself raised when an allocation failed without a MemoryError
            # (`SystemError: error return without exception set`); anything else internal is a bug of ours.
            assert all("internal error" not in line or "SystemError" in line for line in stderr.splitlines()), said
            assert "out of memory" in stderr and result.returncode == 2, said
    # The sweep crossed from too little memory for the run to enough. (No limit in between leaves the workers
    # unable to start while the run goes on: forked workers need no more address space than their parent, and
    # the pool has no thread to reserve a stack for. Workers that cannot start are made on purpose below.)
    assert normal_after >= 3, f"{name}: no limit let the run end as it does without one: {seen}"
    if name != "flake8":
        assert any(code == 2 and "out of memory" in said for _, code, said in seen), seen


# -- the pool's failures, made on purpose --------------------------------------------------------------------
_SCRIPT = """
import errno, os, sys
from flake8_http_pool import runner

def double(shared, item):
    return item * 2

{setup}
results = list(runner.Runner(double, None, lambda item: "crashed", 2, chunk_size=3).run(range(40)))
assert results == [item * 2 for item in range(40)], results
print("ok")
"""


def _run_script(setup: str) -> subprocess.CompletedProcess:
    script = _SCRIPT.format(setup=textwrap.dedent(setup))
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=_env())


FAILURES = {
    # fork fails (ENOMEM, or a process limit): starting the pool raises OSError.
    "fork": """
        def refuse():
            raise OSError(errno.ENOMEM, "Cannot allocate memory")
        os.fork = refuse
    """,
    # Every worker dies as it starts (no memory left for its first allocations): the pool breaks before any
    # result, and a worker of a new pool cannot run a task that does nothing either.
    "worker start": """
        def die(*args):
            os._exit(1)
        runner._init_worker = die
    """,
    # The pipes to the workers break as chunks go out (a worker gone): the same, seen by the send.
    "pipe": """
        import multiprocessing.connection
        def broken(self, obj):
            raise BrokenPipeError(32, "Broken pipe")
        multiprocessing.connection.Connection.send = broken
    """,
}


@pytest.mark.skipif(sys.platform == "win32", reason="the pools fork")
@pytest.mark.parametrize("failure", list(FAILURES))
def test_workers_that_cannot_start_leave_the_work_to_this_process(failure: str) -> None:
    result = _run_script(FAILURES[failure])
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(NOTE), result.stderr  # said once, no thread's traceback


def _ends(script: str, timeout: float = 30) -> Optional[subprocess.CompletedProcess]:
    """The script run in a session of its own; None when it, or a process it left holding its output, was still
    running after `timeout` seconds (the session is then killed)."""
    process = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True, env=_env())
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


# The end of a script that sets a pool's failure up: a run over 40 items, which prints "out of memory" when it
# raises MemoryError.
_RUN_OR_OUT_OF_MEMORY = """
def double(shared, item):
    return item * 2

try:
    list(runner.Runner(double, None, lambda item: "crashed", 2, chunk_size=3).run(range(40)))
except MemoryError:
    print("out of memory")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="the pools fork")
def test_a_run_that_fails_in_its_pool_s_shutdown_still_exits() -> None:
    """Out of memory in the shutdown itself: the workers were neither told to stop nor stopped. The run still
    ends: a worker's pipe closes with its parent, and multiprocessing stops the daemonic workers at exit."""
    result = _ends(textwrap.dedent("""
        from flake8_http_pool import runner

        def exhausted(pool):
            raise MemoryError
        runner._Pool.close = runner._Pool.stop = exhausted

    """) + _RUN_OR_OUT_OF_MEMORY)
    assert result is not None, "still running after 30 s: a worker outlived the run"
    assert (result.returncode, result.stdout) == (0, "out of memory\n"), result.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="the pools fork")
def test_a_worker_out_of_memory_outside_its_job_leaves_the_run_out_of_memory() -> None:
    """A worker with no memory to send its results back printed multiprocessing's traceback and died, and every
    file was reported as one whose worker died. It ends quietly with an exit code that says why, and the run is
    out of memory, as when the worker's MemoryError came back through the pool."""
    result = _ends(textwrap.dedent("""
        import multiprocessing.connection, os
        from flake8_http_pool import runner

        parent, send = os.getpid(), multiprocessing.connection.Connection.send
        def failing(self, obj):
            if os.getpid() != parent:
                raise MemoryError
            return send(self, obj)
        multiprocessing.connection.Connection.send = failing

    """) + _RUN_OR_OUT_OF_MEMORY)
    assert result is not None, "still running after 30 s"
    assert (result.returncode, result.stdout, result.stderr) == (0, "out of memory\n", "")


@pytest.mark.skipif(sys.platform == "win32", reason="the pools fork")
def test_a_job_s_exception_that_does_not_unpickle_is_raised_in_the_run() -> None:
    """An exception whose class wants other arguments than its message pickles but does not unpickle: the run
    stopped on a TypeError from reading it, not the job's error. It is raised as a RuntimeError naming it."""
    result = _ends("""
        from flake8_http_pool import runner

        class Odd(Exception):
            def __init__(self, a, b):
                super().__init__(f"{a}/{b}")

        def fails(shared, item):
            if item == 7:
                raise Odd(1, 2)
            return item

        try:
            list(runner.Runner(fails, None, lambda item: "crashed", 2, chunk_size=3).run(range(40)))
        except RuntimeError as error:
            print(error)
    """)
    assert result is not None, "still running after 30 s"
    assert (result.returncode, result.stdout) == (0, "Odd: 1/2\n"), result.stderr


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG")
def test_a_worker_whose_parent_died_before_it_began_exits() -> None:
    """A worker slow to begin whose parent dies meanwhile: read then, its parent's pid was already init's, the
    kernel's signal was asked for too late to come, and the worker waited on its queue for ever, holding the
    parent's output open."""
    result = _ends("""
        import os, threading, time
        from flake8_http_pool import runner

        begin = runner._init_worker
        def slow(*args):
            time.sleep(2)
            begin(*args)
        runner._init_worker = slow

        def double(shared, item):
            return item * 2

        threading.Timer(0.5, lambda: os._exit(0)).start()
        list(runner.Runner(double, None, lambda item: "crashed", 2, chunk_size=3).run(range(40)))
    """)
    assert result is not None, "still running after 30 s: a worker outlived its parent"
    assert result.returncode == 0, result.stderr


def test_a_crash_on_one_item_is_still_that_item_s_alone() -> None:
    """A pool that breaks before its first result because an item crashed its worker is not taken for one whose
    workers cannot start: a new worker runs the probe, and only the culprit is lost."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import os
        from flake8_http_pool.runner import Runner

        def die_on_3(shared, item):
            if item == 3:
                os._exit(3)
            return item

        print(list(Runner(die_on_3, None, lambda item: -item, 2, chunk_size=2).run(range(8))))
    """)], capture_output=True, text=True, timeout=120, env=_env())
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[0, 1, 2, -3, 4, 5, 6, 7]\n" and result.stderr == ""


def test_out_of_memory_is_said_even_when_the_text_layer_has_no_memory_left(capfd, monkeypatch) -> None:
    """The one line reaches the terminal when sys.stderr itself cannot allocate (a run at its memory limit
    printed the pool's note, then stopped without a word)."""
    from flake8_http_pool import cli

    class Exhausted:
        def write(self, text: str) -> int:
            raise MemoryError

        def flush(self) -> None:
            raise MemoryError

    monkeypatch.setattr(sys, "stderr", Exhausted())
    assert cli._out_of_memory() == cli.EXIT_ERROR
    assert capfd.readouterr().err == OUT_OF_MEMORY


def test_a_failed_allocation_that_cpython_calls_a_system_error_is_out_of_memory(capfd) -> None:
    """Under a memory limit CPython may report a failed allocation as `SystemError: error return without exception
    set`: the run then says it ran out of memory, not that the tool has a bug."""
    from flake8_http_pool import cli

    assert cli._internal_error(SystemError("error return without exception set")) == cli.EXIT_ERROR
    assert capfd.readouterr().err == OUT_OF_MEMORY
    assert cli._internal_error(ValueError("a bug")) == cli.EXIT_ERROR
    assert capfd.readouterr().err == "flake8-http-pool: internal error: ValueError: a bug\n"


def test_a_package_the_loader_had_no_memory_to_list_is_out_of_memory(capfd) -> None:
    """Under a memory limit an import can fail listing a package's folder with ENOMEM (libcst's, as `fix` loads
    it): out of memory for the file or the run, not an internal error."""
    import errno

    from flake8_http_pool import cli
    from flake8_http_pool.source_files import no_memory_to_load

    no_memory = OSError(errno.ENOMEM, "Cannot allocate memory", "site-packages/libcst/helpers")
    assert no_memory_to_load(no_memory)
    assert not no_memory_to_load(OSError(errno.ENOENT, "No such file or directory"))
    assert no_memory_to_load(SystemError("error return without exception set"))
    assert not no_memory_to_load(SystemError("a bug"))
    assert cli._internal_error(no_memory) == cli.EXIT_ERROR
    assert capfd.readouterr().err == OUT_OF_MEMORY
