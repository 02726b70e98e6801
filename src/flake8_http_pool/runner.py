"""Runs a per-file job over many files, in worker processes when there are several, results in input order.

Work goes out in small chunks of paths as they are discovered, with a bounded number of chunks in flight, so
neither the path list nor the results of a big tree are ever held whole, and no task carries more than its
own chunk (libcst's runner pickles the whole path list into every task, which is quadratic).

Stopping: a worker that gets SIGINT, SIGTERM or SIGHUP exits at once (a write in progress completes first, as
every write of a worker holds those signals back, so no temporary file is left). The main process, stopped by
an exception, sends its workers SIGTERM before waiting for them. A worker dies with the main process even
when that is killed outright (SIGKILL): on Linux the kernel kills it (PR_SET_PDEATHSIG), elsewhere it notices
its parent is gone before the next file and before each write.
"""

from __future__ import annotations

import os
import signal
import sys
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import chain, islice
from types import FrameType
from typing import Any, Callable, Deque, Generic, Iterable, Iterator, List, Optional, Tuple, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

CHUNK_SIZE = 16
CHUNKS_IN_FLIGHT_PER_WORKER = 4
# The items a pool of a job that parses files is given before it is replaced (Runner's `renew_after`).
RENEW_AFTER = 1024

# Set in each worker by the pool initializer, so the job and its settings are pickled once per worker.
_job: Optional[Callable[..., Any]] = None
_shared: Any = None
# In a worker: the process that started it (None in the main process).
_parent_pid: Optional[int] = None

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class Interrupted(BaseException):
    """A stopping signal turned into an exception, so the run unwinds as it does for Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def worker_count(requested: Optional[int], note: Callable[[str], None]) -> int:
    """The workers to run: --jobs capped at the core count (told through `note` when capped), else the cores.

    More workers than cores only adds processes (`--jobs 1000` once started 1000 of them, 14 GB and 25x
    slower); the cap at the number of files is applied by `Runner.run`, which knows it, silently as flake8 does.
    """
    cores = default_jobs()
    if requested is None:
        return cores
    if requested > cores:
        note(f"--jobs {requested}: using {cores} (the core count)")
        return cores
    return requested


def _init_worker(job: Callable[..., Any], shared: Any) -> None:
    global _job, _shared, _parent_pid
    _job, _shared = job, shared
    # The handlers first: a stop sent while the rest starts up (importing ctypes takes a while) must end the
    # worker quietly, not run a handler inherited from the parent and print its traceback.
    for signum in STOP_SIGNALS:
        signal.signal(signum, _worker_stop)
    _parent_pid = os.getppid()
    _die_with_parent()


# Linux: the C library, loaded by the process that starts a pool so that its forked workers have it already
# (each worker importing ctypes cost it about 5 ms, twice per pool, before its first file).
_libc: Any = None


def _load_libc() -> Any:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:
            import ctypes

            _libc = ctypes.CDLL(None, use_errno=True)
        except (ImportError, OSError):
            _libc = False
    return _libc


def _die_with_parent() -> None:
    """Linux: have the kernel SIGKILL this worker when the process that started it dies."""
    libc = _load_libc()
    if not libc:
        return
    try:
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        pass  # the getppid() check still stops it before its next file


def _worker_stop(signum: int, frame: Optional[FrameType]) -> None:
    # Nothing of a worker's needs unwinding: every file it writes (a fixed source, a cache entry) is written
    # with these signals held, so a signal lands before the temporary file exists or after it is renamed.
    # Raising instead was lost whenever the signal landed in a finalizer (`__del__`), which Python reports
    # as an ignored exception and then carries on with the file.
    os._exit(128 + signum)


def orphaned() -> bool:
    """In a worker: whether the process that started it has died (the worker was handed to another parent)."""
    return _parent_pid is not None and os.getppid() != _parent_pid


def stop_if_orphaned() -> None:
    """Exit a worker at once when its parent has died: nobody reads its results, so it must write nothing more."""
    if orphaned():
        os._exit(1)


def _run_chunk(chunk: List[Any]) -> List[Any]:
    assert _job is not None
    results = []
    for item in chunk:
        stop_if_orphaned()
        results.append(_job(_shared, item))
    return results


def _submit(pool: ProcessPoolExecutor, chunk: List[Any]) -> "Future[List[Any]]":
    try:
        return pool.submit(_run_chunk, chunk)
    except BrokenProcessPool as error:
        # A worker died while chunks were still going out: the pool refuses new ones at once. The chunk then
        # fails as those in flight do, and is run again with them (this raised out of the run before).
        failed: "Future[List[Any]]" = Future()
        failed.set_exception(error)
        return failed


class Runner(Generic[Item, Result]):
    """Applies `job(shared, item)` to every item. `job` must be a module-level function (it is pickled).

    `crashed(item)` makes the result for an item whose worker process died (a crash in C code, the OOM
    killer): that item is reported, and the others of its chunk are run again.
    """

    def __init__(
        self,
        job: Callable[[Any, Item], Result],
        shared: Any,
        crashed: Callable[[Item], Result],
        jobs: int,
        chunk_size: int = CHUNK_SIZE,
        renew_after: Optional[int] = None,
    ) -> None:
        self.job = job
        self.shared = shared
        self.crashed = crashed
        self.jobs = max(1, jobs)
        self.chunk_size = chunk_size
        # A job that parses and walks files leaves each worker's heap a little more fragmented with every file:
        # its peak memory grew with the tree (by a quarter from 1,000 files to 100,000). Its pool is then
        # replaced by a new one after this many items, as multiprocessing's `maxtasksperchild` does; a
        # worker's peak is then that of a run of this many files.
        self.renew_after = renew_after

    def run(self, items: Iterable[Item]) -> Iterator[Result]:
        """Results in the order of `items`."""
        iterator = iter(items)
        # Enough items to give every worker a full chunk: fewer means a small run, sized to what it holds.
        head = list(islice(iterator, self.jobs * self.chunk_size if self.jobs > 1 else 2))
        if self.jobs == 1 or len(head) < 2:
            # One file, or --jobs 1: starting processes would cost more than the work.
            for item in chain(head, iterator):
                yield self.job(self.shared, item)
            return
        if len(head) < self.jobs * self.chunk_size:
            # All the items are in hand: no more workers than items, and the items spread over them.
            self.jobs = min(self.jobs, len(head))
            self.chunk_size = max(1, -(-len(head) // self.jobs))
        yield from self._run_in_pool(chain(head, iterator))

    def _new_pool(self) -> ProcessPoolExecutor:
        _load_libc()
        pool = ProcessPoolExecutor(max_workers=self.jobs, initializer=_init_worker, initargs=(self.job, self.shared))
        _quiet_wakeup(pool)
        return pool

    def _run_in_pool(self, items: Iterator[Item]) -> Iterator[Result]:
        pool = self._new_pool()
        pending: Deque[Tuple[List[Item], "Future[List[Result]]"]] = deque()
        limit = self.jobs * CHUNKS_IN_FLIGHT_PER_WORKER
        submitted = 0  # items given to this pool
        try:
            while True:
                spent = self.renew_after is not None and submitted >= self.renew_after
                chunk = [] if spent else list(islice(items, self.chunk_size))
                if chunk:
                    pending.append((chunk, _submit(pool, chunk)))
                    submitted += len(chunk)
                    if len(pending) < limit:
                        continue
                if not pending:
                    if not spent:
                        break
                    _shut_down(pool)  # its results are all in hand
                    pool, submitted = self._new_pool(), 0  # (a pool starts its workers at its first task)
                    continue
                done_chunk, future = pending.popleft()
                try:
                    results = future.result()
                except BrokenProcessPool:
                    pool.shutdown(wait=False, cancel_futures=True)
                    retry = [done_chunk] + [c for c, _ in pending]
                    pending.clear()
                    yield from self._isolate(chain.from_iterable(retry))
                    pool, submitted = self._new_pool(), 0
                    continue
                yield from results
        except BaseException:
            _stop_workers(pool)
            raise
        finally:
            _shut_down(pool)

    def _isolate(self, items: Iterable[Item]) -> Iterator[Result]:
        """After a crash, run the unfinished items one per task, so only the culprit is lost."""
        pool = self._new_pool()
        try:
            for item in items:
                try:
                    yield pool.submit(_run_chunk, [item]).result()[0]
                except BrokenProcessPool:
                    pool.shutdown(wait=False, cancel_futures=True)
                    yield self.crashed(item)
                    pool = self._new_pool()
        except BaseException:
            _stop_workers(pool)
            raise
        finally:
            _shut_down(pool)


# How long the workers of a finished pool get to exit before they are stopped (their results are all in hand).
SHUTDOWN_GRACE_S = 2.0


def _shut_down(pool: ProcessPoolExecutor) -> None:
    """Shut a pool down once its results are in hand, stopping any worker that has not exited after
    SHUTDOWN_GRACE_S. CPython's fork pool can leave a worker blocked for ever on its call queue's lock at
    shutdown (seen in about 1 run in 40 of a small project's `check`, which starts several pools): waiting on
    it, as `shutdown(wait=True)` does, hung the whole run."""
    import time
    from multiprocessing.connection import wait

    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + SHUTDOWN_GRACE_S
    waiting = {process.sentinel: process for process in processes}
    while waiting:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        for sentinel in wait(list(waiting), left):
            del waiting[sentinel]
    for process in waiting.values():
        try:
            process.terminate()  # idle in the queue: the worker's handler exits at once (_worker_stop)
            if wait([process.sentinel], 1.0) == []:
                process.kill()
        except (OSError, ValueError, AttributeError):
            pass
    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(SHUTDOWN_GRACE_S)
        # At exit, concurrent.futures wakes every pool's manager thread it still knows; one closing its wakeup
        # pipe at that moment made the interpreter print a traceback (EBADF: a race between the two threads,
        # met after a stopping signal once a run starts several pools). This one was woken by the shutdown
        # above and needs nothing more.
        wakeups = getattr(sys.modules.get("concurrent.futures.process"), "_threads_wakeups", None)
        if wakeups is not None:
            wakeups.pop(manager, None)


def _quiet_wakeup(pool: ProcessPoolExecutor) -> None:
    """Make waking the pool's manager thread harmless once its pipe is closed.

    At exit, concurrent.futures wakes every manager thread it still knows without the pool's lock, while a
    manager that is shutting down closes its wakeup pipe under that lock. The two race (3.9 to 3.13 alike),
    and the interpreter printed an EBADF traceback after a stopping signal had cut a pool's shutdown short
    (3 runs in 21 of a signalled `fix --jobs 2`, looped). A closed pipe means the thread is already leaving, so
    the failed wakeup is dropped; every other call of it holds the pool's lock and cannot meet a closed pipe.
    """
    wakeup_owner = getattr(pool, "_executor_manager_thread_wakeup", None)
    wake = getattr(wakeup_owner, "wakeup", None)
    if wake is None:
        return

    def wakeup() -> None:
        try:
            wake()
        except (OSError, ValueError):
            pass

    wakeup_owner.wakeup = wakeup


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Ask the pool's workers to stop now (SIGTERM): waiting for their chunks could take minutes."""
    processes = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        try:
            process.terminate()
        except (OSError, ValueError, AttributeError):
            pass
