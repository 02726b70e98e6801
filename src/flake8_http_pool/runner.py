"""Runs a per-file job over many files, in worker processes when there are several, results in input order.

Work goes out in small chunks of paths as they are discovered, with a bounded number of chunks in flight, so
neither the path list nor the results of a big tree are ever held whole, and no task carries more than its
own chunk (libcst's runner pickles the whole path list into every task, which is quadratic).

Stopping: a worker that gets SIGINT, SIGTERM or SIGHUP exits at once (a write in progress completes first, as
every write of a worker holds those signals back, so no temporary file is left). The main process, stopped by
an exception, sends its workers SIGTERM before waiting for them. A worker dies with the main process even
when that is killed outright (SIGKILL): on Linux the kernel kills it (PR_SET_PDEATHSIG), elsewhere it notices
its parent is gone before the next file and before each write.

Workers that cannot start (no memory for a process or a thread, `ulimit -v`, a process limit) never stop a
run: the work left is done in this process, said once. No wait on a pool is for ever: a pool whose manager
thread has died (it could not start the thread that feeds the workers) is found by a wait in short rounds.
"""

from __future__ import annotations

import os
import signal
import sys
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from itertools import chain, islice
from types import FrameType
from typing import Any, Callable, Deque, Dict, Generic, Iterable, Iterator, List, Optional, Set, Tuple, TypeVar

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
# In a worker: its pool's tally (`_Activity`), shared with the process that started the pool.
_tally: Any = None

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

# What starting a pool's processes or threads raises when the system has none to give: `can't start new thread`
# (RuntimeError), fork's ENOMEM or EAGAIN (OSError), or no memory for the pool's own structures.
_START_ERRORS = (RuntimeError, OSError, MemoryError)
# How often a wait on a worker looks whether the pool can still answer (its manager thread is alive).
POLL_S = 0.5
# How long a pool may hold work not done while none of its workers runs a chunk or takes a new one, before it is
# given up (`_Activity`).
IDLE_S = 10.0
# How long a worker of a new pool gets to start and run a task that does nothing, when asked whether workers
# can start at all (after a pool broke before it gave a result).
PROBE_S = 30.0


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


def _init_worker(job: Callable[..., Any], shared: Any, parent: int, tally: Any) -> None:
    global _job, _shared, _parent_pid, _tally
    _job, _shared, _tally = job, shared, tally
    # The handlers first: a stop sent while the rest starts up (importing ctypes takes a while) must end the
    # worker quietly, not run a handler inherited from the parent and print its traceback.
    for signum in STOP_SIGNALS:
        signal.signal(signum, _worker_stop)
    # `parent` is the pid of the process that forked this one, passed in: one read here with getppid() is
    # already init's when the parent died first, and neither the kernel's signal (asked for below, too late) nor
    # the orphan check would then ever stop this worker, left waiting on its queue holding the parent's stdout.
    _parent_pid = parent
    _die_with_parent()
    stop_if_orphaned()  # (after the prctl: a parent that dies from here on is the kernel's to report)
    if tally is not None:
        with tally.get_lock():
            tally[2] += 1


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
    if _tally is not None:
        with _tally.get_lock():
            _tally[0] += 1
            _tally[1] += 1
    try:
        results = []
        for item in chunk:
            stop_if_orphaned()
            results.append(_job(_shared, item))
        return results
    finally:
        if _tally is not None:
            with _tally.get_lock():
                _tally[0] -= 1


class _Activity:
    """Whether a pool's workers still move: a tally they share with this process, of the chunks they are running,
    of those they have taken (`_run_chunk` counts both) and of the workers that have started (`_init_worker`).

    A pool can lose a chunk without a sign: the thread that feeds the workers, out of memory, failed in its own
    error handler and died (CI, `check` under `ulimit -v`), or dropped a chunk it could not send. Its future then
    never completes while the manager thread lives on, and every worker waits on an empty queue: a wait for that
    future hung the run. Work not done while a worker has started but none has run or taken a chunk, nor another
    started, for IDLE_S is work lost (workers slow to start are not idle: that is START_S's and the probe's)."""

    def __init__(self, tally: Any) -> None:
        self.tally = tally
        self.seen: Tuple[int, int] = (-1, -1)
        self.idle_since: Optional[float] = None

    def stalled(self, now: float) -> bool:
        running, taken, started = self.tally[0], self.tally[1], self.tally[2]
        if running or not started or (taken, started) != self.seen:
            self.seen, self.idle_since = (taken, started), None
            return False
        if self.idle_since is None:
            self.idle_since = now
        return now - self.idle_since > IDLE_S


# Each pool's _Activity, by the pool's id, until it is shut down.
_activities: Dict[int, _Activity] = {}


class _NoWorkers(Exception):
    """The pool's processes or threads could not be started, or its manager thread died: no worker will answer."""


def _probe() -> bool:
    return True


# How long the first task given to a pool may take to go in: it forks the workers and starts the manager thread.
START_S = 10.0


class _LateStart(Exception):
    """The first task given to a pool was not in after START_S."""


def _submit_first(pool: ProcessPoolExecutor, fn: Callable[..., Any], *args: Any) -> "Future[Any]":
    """`pool.submit(fn, *args)` for a pool not yet started (`_bounded_submit`); the workers that submit forked
    are kept to be killed at exit, whether it ended well or not (`_remember_workers`)."""
    try:
        return _bounded_submit(pool, fn, *args)
    finally:
        _remember_workers(pool)


def _bounded_submit(pool: ProcessPoolExecutor, fn: Callable[..., Any], *args: Any) -> "Future[Any]":
    """`pool.submit(fn, *args)` for a pool not yet started, given at most START_S (an alarm) when this is the
    main thread.

    That submit forks the workers, then starts the pool's manager thread with threading.Thread.start(), which
    waits without a bound for the new thread to say it has begun: a thread that dies before it says so (no
    memory left for it: Python 3.13 at 47.5 MB here, every run; 3.11 now and then) hung the run there for ever.
    A wait on a lock is cut short by a signal's handler that raises, so SIGALRM ends it. (Making that submit in
    another thread instead, to wait for it with a bound, forked the workers off that thread: they died with it,
    and a child forked off a thread other than the main one never ran its signal handlers.)"""
    import threading

    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return pool.submit(fn, *args)
    waiting = True

    def late(signum: int, frame: Optional[FrameType]) -> None:
        if waiting:
            raise _LateStart

    previous = signal.signal(signal.SIGALRM, late)
    try:
        signal.setitimer(signal.ITIMER_REAL, START_S)
        try:
            future = pool.submit(fn, *args)
            waiting = False
            return future
        except _LateStart:
            _abandoned.add(id(pool))
            raise _NoWorkers(f"the pool's manager thread did not start within {START_S:g} s") from None
        finally:
            waiting = False
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, previous)


# The worker processes of this process's pools, until they are seen to have exited.
_forked: List[Any] = []
_registered = False  # whether _kill_leftovers is registered to run at exit


def _remember_workers(pool: ProcessPoolExecutor) -> None:
    """Keep the pool's workers (its first submit forks them all) to be killed at exit should one outlive it.

    A pool is shut down, its workers waited for and then stopped, once its results are in hand (`_shut_down`);
    but a run out of memory can fail in that shutdown itself, and multiprocessing's own exit handler then joins
    every child still running: a worker waiting on a queue nothing feeds, whose manager thread died, hung the
    run there (once in CI, `check` under `ulimit -v`)."""
    global _forked, _registered
    import atexit
    import threading

    processes = list((getattr(pool, "_processes", None) or {}).values())
    if not processes:
        return
    if not _registered:
        _registered = True
        # Where concurrent.futures registers its own exit call, which wakes each pool's manager thread and joins
        # it (a manager joins its workers): registered after it, this runs before it, as before multiprocessing's
        # atexit handler that joins every child still running.
        getattr(threading, "_register_atexit", atexit.register)(_kill_leftovers)
    _forked = [process for process in _forked if process.exitcode is None] + processes


def _kill_leftovers() -> None:
    """At exit: SIGKILL every worker still running. Their results were all taken, or given up on."""
    for process in _forked:
        try:
            if process.exitcode is None:
                os.kill(process.pid, signal.SIGKILL)
        except BaseException:  # (an exit handler: nothing it meets may stop the next one)
            pass


# The pools (by id, until they are shut down) whose start did not end: their manager thread never began, so it
# cannot be joined, and nothing more is given to them.
_abandoned: Set[int] = set()


def _submit(pool: ProcessPoolExecutor, chunk: List[Any]) -> "Future[List[Any]]":
    """The chunk's future; one failed already when the pool refuses it, so the chunk stays in line with the others
    and is run again with them."""
    failed: "Future[List[Any]]" = Future()
    try:
        if id(pool) in _abandoned:
            raise _NoWorkers(f"the pool's manager thread did not start within {START_S:g} s")
        if getattr(pool, "_executor_manager_thread", None) is None:  # (the first submit makes it)
            return _submit_first(pool, _run_chunk, chunk)
        return pool.submit(_run_chunk, chunk)
    except _NoWorkers as error:
        failed.set_exception(error)
    except _START_ERRORS as error:
        # Its workers or its manager thread could not start (the first submit starts them).
        failed.set_exception(_NoWorkers(_why(error)))
    except BrokenProcessPool as error:
        # A worker died while chunks were still going out: the pool refuses new ones at once. The chunk then
        # fails as those in flight do, and is run again with them (this raised out of the run before).
        failed.set_exception(error)
    return failed


def _result(pool: ProcessPoolExecutor, future: "Future[Result]", budget: Optional[float] = None) -> Result:
    """The future's result, waited for in rounds of POLL_S: a pool whose manager thread has died never completes
    its futures (a wait without a timeout hung `fix --diff` under `ulimit -v`), so that raises _NoWorkers.
    `budget`: a time after which that is raised too (a probe's; the work itself may take as long as it takes)."""
    import time

    deadline = None if budget is None else time.monotonic() + budget
    activity = _activities.get(id(pool))
    while True:
        try:
            return future.result(timeout=POLL_S)
        except FutureTimeout:
            pass
        manager = getattr(pool, "_executor_manager_thread", None)
        if manager is None or not manager.is_alive():
            if future.done():
                continue  # completed just before the manager ended
            raise _NoWorkers("the pool's manager thread has died")
        now = time.monotonic()
        if activity is not None and activity.stalled(now) and not future.done():
            raise _NoWorkers(f"the pool lost work: no worker ran a task for {IDLE_S:g} s")
        if deadline is not None and now > deadline:
            raise _NoWorkers(f"no worker answered within {budget:g} s")


def _why(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


_told = False
_hooked = False


# What a pool's own threads die of when memory runs out: a start error, a failed allocation, or one CPython
# reports as `SystemError: error return without exception set` (met in the manager thread under `ulimit -v`).
_THREAD_DEATHS = (*_START_ERRORS, SystemError)


def pool_thread(thread: Any) -> bool:
    """Whether `thread` is one of a process pool's own threads: its manager, or the thread feeding its workers."""
    return type(thread).__name__ == "_ExecutorManagerThread" or getattr(thread, "name", None) == "QueueFeederThread"


def _quiet_manager_deaths() -> None:
    """Keep threading's hook from printing a traceback for a pool's own thread (its manager, the thread that
    feeds its workers) that died out of memory or of a start error (it could not start the feeder): `_result`
    finds the pool dead or stalled, and the run goes on in this process with one line said. Any other thread's
    exception goes to the hook there was."""
    global _hooked
    if _hooked:
        return
    _hooked = True
    import threading

    previous = threading.excepthook

    def hook(args: Any) -> None:
        if pool_thread(args.thread) and isinstance(args.exc_value, _THREAD_DEATHS):
            return
        previous(args)

    threading.excepthook = hook


def _tell_once(why: str) -> None:
    """Say once per process that the work goes on here: it is slower, and the user may want to know why."""
    global _told
    if not _told:
        _told = True
        try:
            sys.stderr.write(f"flake8-http-pool: worker processes cannot be used ({why}); working in this process\n")
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass


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

    def _new_pool(self, workers: Optional[int] = None) -> ProcessPoolExecutor:
        import multiprocessing

        _load_libc()
        _quiet_manager_deaths()
        try:
            tally = multiprocessing.Array("q", 3)
            pool = ProcessPoolExecutor(max_workers=workers or self.jobs, initializer=_init_worker,
                                       initargs=(self.job, self.shared, os.getpid(), tally))
        except _START_ERRORS as error:
            raise _NoWorkers(_why(error)) from None
        _activities[id(pool)] = _Activity(tally)
        _quiet_wakeup(pool)
        return pool

    def _here(self, items: Iterable[Item]) -> Iterator[Result]:
        """The items' results computed in this process: what is left when workers cannot start."""
        for item in items:
            yield self.job(self.shared, item)

    def _run_in_pool(self, items: Iterator[Item]) -> Iterator[Result]:
        pool: Optional[ProcessPoolExecutor] = None
        # The chunks sent, in order; each leaves only once its results are in hand, so that the work left when
        # workers turn out not to start is these chunks and the items not yet taken.
        pending: Deque[Tuple[List[Item], "Future[List[Result]]"]] = deque()
        limit = self.jobs * CHUNKS_IN_FLIGHT_PER_WORKER
        submitted = 0  # items given to this pool
        answered = False  # whether this pool has given a result (one that breaks before may never have started)
        try:
            try:
                pool = self._new_pool()
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
                        pool, submitted, answered = self._new_pool(), 0, False  # (it starts at its first task)
                        continue
                    try:
                        results = _result(pool, pending[0][1])
                    except BrokenProcessPool:
                        pool.shutdown(wait=False, cancel_futures=True)
                        if not answered and not self._workers_start():
                            raise _NoWorkers("a new worker cannot run a task") from None
                        retry = [c for c, _ in pending]
                        pending.clear()
                        yield from self._isolate(chain.from_iterable(retry))
                        pool, submitted, answered = self._new_pool(), 0, False
                        continue
                    pending.popleft()
                    answered = True
                    yield from results
                return
            except _NoWorkers as error:
                why = str(error)
            if pool is not None:
                _stop_workers(pool)  # any that did start wait on a queue that nothing feeds any more
            _tell_once(why)
            yield from self._here(chain(chain.from_iterable(c for c, _ in pending), items))
        except BaseException:
            if pool is not None:
                _stop_workers(pool)
            raise
        finally:
            if pool is not None:
                _shut_down(pool)

    def _isolate(self, items: Iterable[Item]) -> Iterator[Result]:
        """After a crash, run the unfinished items one per task, so only the culprit is lost."""
        items = iter(items)
        pool: Optional[ProcessPoolExecutor] = None
        current: List[Item] = []  # the item sent and not yet answered
        try:
            try:
                pool = self._new_pool()
                for item in items:
                    current = [item]
                    try:
                        result = _result(pool, _submit(pool, current))[0]
                    except BrokenProcessPool:
                        pool.shutdown(wait=False, cancel_futures=True)
                        if not self._workers_start():
                            raise _NoWorkers("a new worker cannot run a task") from None
                        result = self.crashed(item)
                        pool = self._new_pool()
                    current = []
                    yield result
                return
            except _NoWorkers as error:
                why = str(error)
            if pool is not None:
                _stop_workers(pool)
            _tell_once(why)
            yield from self._here(chain(current, items))
        except BaseException:
            if pool is not None:
                _stop_workers(pool)
            raise
        finally:
            if pool is not None:
                _shut_down(pool)

    def _workers_start(self) -> bool:
        """Whether a new worker can start and run a task that does nothing, within PROBE_S: asked when a pool
        broke before it gave any result, where a crash on a file and workers that cannot start (no memory left
        for one) look alike."""
        try:
            pool = self._new_pool(1)
        except _NoWorkers:
            return False
        try:
            return bool(_result(pool, _submit_first(pool, _probe), PROBE_S))
        except (_NoWorkers, BrokenProcessPool, *_START_ERRORS):
            return False
        finally:
            _stop_workers(pool)
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
    abandoned = id(pool) in _abandoned
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
    manager = None if abandoned else getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(SHUTDOWN_GRACE_S)
        # At exit, concurrent.futures wakes every pool's manager thread it still knows; one closing its wakeup
        # pipe at that moment made the interpreter print a traceback (EBADF: a race between the two threads,
        # met after a stopping signal once a run starts several pools). This one was woken by the shutdown
        # above and needs nothing more.
        wakeups = getattr(sys.modules.get("concurrent.futures.process"), "_threads_wakeups", None)
        if wakeups is not None:
            wakeups.pop(manager, None)
    _abandoned.discard(id(pool))
    _activities.pop(id(pool), None)


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
