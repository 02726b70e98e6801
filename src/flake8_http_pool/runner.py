"""Runs a per-file job over many files, in worker processes when there are several, results in input order.

Work goes out in small chunks of paths as they are discovered, with a bounded number of chunks in flight, so
neither the path list nor the results of a big tree are ever held whole, and no task carries more than its
own chunk (libcst's runner pickles the whole path list into every task, which is quadratic).

The pool is the standard library's processes and pipes (multiprocessing.Process, Pipe, connection.wait), driven
from this process's main thread alone: no thread of its own. concurrent.futures' pool moves work and results
through a manager thread and a feeder thread; under a memory limit (`ulimit -v`) either could die, or drop a
chunk, without a sign the main thread could see, and runs hung (CI, four shapes of it). Here a failed send, a
failed receive and a failed start are exceptions where the work is driven, and a worker that dies is seen by its
process sentinel.

Stopping: a worker that gets SIGINT, SIGTERM or SIGHUP exits at once (a write in progress completes first, as
every write of a worker holds those signals back, so no temporary file is left). The main process, stopped by
an exception, sends its workers SIGTERM before waiting for them. A worker dies with the main process even
when that is killed outright (SIGKILL): on Linux the kernel kills it (PR_SET_PDEATHSIG), elsewhere it notices
its parent is gone before the next file and before each write; it also ends when its pipe to the parent closes.

Workers that cannot start (no memory for a process, `ulimit -v`, a process limit) never stop a run: the work
left is done in this process, said once.
"""

from __future__ import annotations

import os
import signal
import sys
from collections import deque
from itertools import chain, islice
from types import FrameType
from typing import (Any, Callable, Deque, Dict, Generic, Iterable, Iterator, List, NoReturn, Optional, Tuple,
                    TypeVar)

Item = TypeVar("Item")
Result = TypeVar("Result")

CHUNK_SIZE = 16
CHUNKS_IN_FLIGHT_PER_WORKER = 4
# The chunks a worker is given at once: the one it runs and one waiting in its pipe, so that it starts the next
# while this process is busy with results.
TASKS_PER_WORKER = 2
# The files a pool of a job that parses files parses before it is replaced (Runner's `renew_after`).
RENEW_AFTER = 1024

# Set in each worker as it starts, so the job and its settings are handed over once per worker.
_job: Optional[Callable[..., Any]] = None
_shared: Any = None
# In a worker: the process that started it (None in the main process).
_parent_pid: Optional[int] = None

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

# What starting a worker raises when the system has none to give: fork's ENOMEM or EAGAIN (OSError), or no memory
# for the pool's own structures.
_START_ERRORS = (OSError, MemoryError, RuntimeError)
# How long a worker of a new pool gets to start and run an empty chunk, when asked whether workers can start at
# all (after a pool broke before it gave a result).
PROBE_S = 30.0
# How long the workers of a finished pool get to exit before they are stopped (their results are all in hand).
SHUTDOWN_GRACE_S = 2.0


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


def _init_worker(job: Callable[..., Any], shared: Any, parent: int) -> None:
    global _job, _shared, _parent_pid
    _job, _shared = job, shared
    # The handlers first: a stop sent while the rest starts up (importing ctypes takes a while) must end the
    # worker quietly, not run a handler inherited from the parent and print its traceback.
    for signum in STOP_SIGNALS:
        signal.signal(signum, _worker_stop)
    # `parent` is the pid of the process that forked this one, passed in: one read here with getppid() is
    # already init's when the parent died first, and neither the kernel's signal (asked for below, too late) nor
    # the orphan check would then ever stop this worker.
    _parent_pid = parent
    _die_with_parent()
    stop_if_orphaned()  # (after the prctl: a parent that dies from here on is the kernel's to report)


def _serve(conn: Any, job: Callable[..., Any], shared: Any, parent: int) -> None:
    """A worker's life: chunks in from its pipe, each one's results (or the exception it raised) out, until
    the pipe says stop (None) or closes. Out of memory outside the job (starting, reading a chunk, sending what
    its job gave), the worker ends without a word, with an exit code that tells the parent so: the parent then
    runs out of memory in turn (`_Pool.result`), as it did when the pool's future raised the worker's
    MemoryError."""
    try:
        _init_worker(job, shared, parent)
        _answer(conn)
    except MemoryError:
        os._exit(_OUT_OF_MEMORY_EXIT)


def _portable(error: Exception) -> Exception:
    """The job's exception as it can cross the pipe: itself when it pickles and unpickles (an exception class
    whose constructor wants other arguments does not), else a RuntimeError naming it: one the parent cannot
    read stopped the run on a TypeError that named neither."""
    import pickle

    try:
        pickle.loads(pickle.dumps(error))
        return error
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 - whatever pickling meets
        return RuntimeError(f"{type(error).__name__}: {error}")


# A worker's exit code when it ran out of memory outside its job.
_OUT_OF_MEMORY_EXIT = 86


def _answer(conn: Any) -> None:
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if message is None:
            return
        number, chunk = message
        try:
            reply: Tuple[int, bool, Any] = (number, True, _run_chunk(chunk))
        except Exception as error:  # the job's own: raised again in the parent, as a pool's future raises it
            reply = (number, False, _portable(error))
        try:
            conn.send(reply)
        except (EOFError, OSError):
            return
        except MemoryError:
            raise
        except Exception as error:  # a result or an exception that does not pickle
            conn.send((number, False, RuntimeError(f"{type(error).__name__}: {error}")))


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


class _NoWorkers(Exception):
    """The pool's processes could not be started, or none answers: the work goes on in this process."""


class _Broken(Exception):
    """A worker died with chunks in hand (a crash in C code, the OOM killer, a stop from outside)."""


class _Pool:
    """Worker processes, each with a pipe, fed and read from this process's main thread.

    A chunk is given to a worker with fewer than TASKS_PER_WORKER in hand, else waits here; `result(number)`
    waits on the workers' pipes and process sentinels until that chunk's results are in."""

    def __init__(self, workers: int, job: Callable[..., Any], shared: Any) -> None:
        import multiprocessing

        _load_libc()
        self.context = multiprocessing.get_context()
        self.workers: List[Tuple[Any, Any]] = []  # (process, the parent's end of its pipe)
        self.given: Dict[int, List[int]] = {}  # worker index -> the chunks it holds, in the order given
        self.waiting: Deque[Tuple[int, Any]] = deque()  # chunks no worker has room for yet
        self.done: Dict[int, Tuple[bool, Any]] = {}  # chunk number -> (whether it ran, results or exception)
        self.answered = False  # whether any worker has sent back a chunk
        try:
            for _ in range(workers):
                self._start(job, shared)
        except _START_ERRORS as error:
            self.stop()
            raise _NoWorkers(_why(error)) from None

    def _start(self, job: Callable[..., Any], shared: Any) -> None:
        ours, theirs = self.context.Pipe(duplex=True)
        try:
            process = self.context.Process(target=_serve, args=(theirs, job, shared, os.getpid()), daemon=True)
            process.start()
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()  # the worker's end is the worker's: its exit then closes the pipe
        self.given[len(self.workers)] = []
        self.workers.append((process, ours))

    def submit(self, number: int, chunk: List[Any]) -> None:
        self.waiting.append((number, chunk))
        self._hand_out()

    def _hand_out(self) -> None:
        while self.waiting:
            free = [index for index, held in self.given.items() if len(held) < TASKS_PER_WORKER]
            if not free:
                return
            index = min(free, key=lambda i: len(self.given[i]))
            number, chunk = self.waiting[0]
            try:
                self.workers[index][1].send((number, chunk))
            except (BrokenPipeError, ConnectionResetError, EOFError):
                _died(self.workers[index][0])  # (gone since its last answer)
            self.waiting.popleft()
            self.given[index].append(number)

    def result(self, number: int, budget: Optional[float] = None) -> Any:
        """The chunk's results; raises what its job raised, _Broken when a worker died holding chunks, and
        _NoWorkers after `budget` seconds without them."""
        import time
        from multiprocessing.connection import wait

        deadline = None if budget is None else time.monotonic() + budget
        while number not in self.done:
            busy = [index for index, held in self.given.items() if held]
            if not busy:
                raise _NoWorkers("no worker holds the chunk")  # (never: every chunk given is held until answered)
            by_handle: Dict[Any, int] = {}
            for index in busy:
                process, conn = self.workers[index]
                by_handle[conn] = index
                by_handle[process.sentinel] = index
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready = wait(list(by_handle), left)
            if not ready and deadline is not None and time.monotonic() >= deadline:
                raise _NoWorkers(f"no worker answered within {budget:g} s")
            for handle in ready:
                index = by_handle[handle]
                process, conn = self.workers[index]
                if handle is conn:
                    try:
                        answer, ran, value = conn.recv()
                    except (EOFError, OSError):
                        _died(process)
                    self.given[index].remove(answer)
                    self.done[answer] = (ran, value)
                    self.answered = True
                elif not conn.poll():  # died, and nothing it sent before is left to read
                    _died(process)
            self._hand_out()
        ran, value = self.done.pop(number)
        if not ran:
            raise value
        return value

    def close(self) -> None:
        """Every result is in hand: each worker is told to stop, given SHUTDOWN_GRACE_S, then stopped."""
        import time
        from multiprocessing.connection import wait

        for process, conn in self.workers:
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + SHUTDOWN_GRACE_S
        waiting = {process.sentinel: process for process, _ in self.workers}
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            for sentinel in wait(list(waiting), left):
                del waiting[sentinel]
        self.stop()

    def stop(self) -> None:
        """Stop every worker now (SIGTERM, then SIGKILL after a second), wait for each, close the pipes."""
        from multiprocessing.connection import wait

        for process, _ in self.workers:
            _ask(process.terminate)
        for process, conn in self.workers:
            if process.pid is not None and process.exitcode is None and not wait([process.sentinel], 1.0):
                _ask(process.kill)
            _ask(lambda: process.join(1.0))
            _ask(process.close)  # (its sentinel's descriptor; refused while it still runs)
            _ask(conn.close)
        self.workers, self.given = [], {}


def _died(process: Any) -> NoReturn:
    """A worker is gone: MemoryError when it said it ran out of memory (`_serve`), else _Broken."""
    _ask(lambda: process.join(1.0))
    if process.exitcode == _OUT_OF_MEMORY_EXIT:
        raise MemoryError("a worker process ran out of memory")
    raise _Broken(f"worker {process.pid} died")


def _ask(action: Callable[[], Any]) -> None:
    """Do `action`, whatever it meets: a process already gone, a pipe already closed, no memory left to say so."""
    try:
        action()
    except (OSError, ValueError, AttributeError, AssertionError, MemoryError):
        pass


def _why(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


_told = False


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
    """Applies `job(shared, item)` to every item. `job` must be a module-level function (it is pickled where
    workers are spawned rather than forked).

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
        weight: Optional[Callable[[Result], int]] = None,
    ) -> None:
        self.job = job
        self.shared = shared
        self.crashed = crashed
        self.jobs = max(1, jobs)
        self.chunk_size = chunk_size
        # A job that parses and walks files leaves each worker's heap a little more fragmented with every file:
        # its peak memory grew with the tree (by a quarter from 1,000 files to 100,000). Its pool is then
        # replaced by a new one after this many items, as multiprocessing's `maxtasksperchild` does; a
        # worker's peak is then that of a run of this many files. `weight(result)`: what one item counts
        # towards that, known from its result (a file the gate passed over was read, not parsed: 0); by
        # default each item counts 1. A pool is replaced only once its results are all in hand, a stall of
        # every worker: replaced after 1,024 files read, it cost a shard a sixth of its phase 1.
        self.renew_after = renew_after
        self.weight = weight

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

    def _new_pool(self, workers: Optional[int] = None) -> _Pool:
        return _Pool(workers or self.jobs, self.job, self.shared)

    def _here(self, items: Iterable[Item]) -> Iterator[Result]:
        """The items' results computed in this process: what is left when workers cannot start."""
        for item in items:
            yield self.job(self.shared, item)

    def _run_in_pool(self, items: Iterator[Item]) -> Iterator[Result]:
        pool: Optional[_Pool] = None
        # The chunks sent, in order; each leaves only once its results are in hand, so that the work left when
        # workers turn out not to start is these chunks and the items not yet taken.
        pending: Deque[Tuple[List[Item], int]] = deque()
        limit = self.jobs * CHUNKS_IN_FLIGHT_PER_WORKER
        used = 0  # towards its renewal: the items given it, or with `weight`, the weight of its results back
        numbers = iter(range(sys.maxsize))
        finished = False
        try:
            try:
                pool = self._new_pool()
                while True:
                    try:
                        spent = self.renew_after is not None and used >= self.renew_after
                        chunk = [] if spent else list(islice(items, self.chunk_size))
                        if chunk:
                            number = next(numbers)
                            pending.append((chunk, number))
                            if self.weight is None:
                                used += len(chunk)
                            pool.submit(number, chunk)
                            if len(pending) < limit:
                                continue
                        if not pending:
                            if not spent:
                                break
                            ahead = list(islice(items, self.chunk_size))
                            if not ahead:
                                break  # no work left for a new pool
                            items = chain(ahead, items)
                            pool.close()  # its results are all in hand
                            pool, used = None, 0
                            pool = self._new_pool()
                            continue
                        results = pool.result(pending[0][1])
                    except _Broken:
                        answered = pool.answered
                        pool.stop()
                        pool = None
                        if not answered and not self._workers_start():
                            raise _NoWorkers("a new worker cannot run a task") from None
                        retry = [c for c, _ in pending]
                        pending.clear()
                        yield from self._isolate(chain.from_iterable(retry))
                        pool, used = self._new_pool(), 0
                        continue
                    pending.popleft()
                    if self.weight is not None:
                        used += sum(self.weight(result) for result in results)
                    yield from results
                finished = True
                return
            except _NoWorkers as error:
                why = str(error)
            if pool is not None:
                pool.stop()  # any that did start are of no more use
                pool = None
            _tell_once(why)
            yield from self._here(chain(chain.from_iterable(c for c, _ in pending), items))
        finally:
            if pool is not None and finished:
                pool.close()
            elif pool is not None:
                pool.stop()

    def _isolate(self, items: Iterable[Item]) -> Iterator[Result]:
        """After a crash, run the unfinished items one per task, so only the culprit is lost."""
        items = iter(items)
        pool: Optional[_Pool] = None
        current: List[Item] = []  # the item sent and not yet answered
        numbers = iter(range(sys.maxsize))
        finished = False
        try:
            try:
                pool = self._new_pool()
                for item in items:
                    current = [item]
                    number = next(numbers)
                    try:
                        pool.submit(number, current)
                        result = pool.result(number)[0]
                    except _Broken:
                        pool.stop()
                        pool = None
                        if not self._workers_start():
                            raise _NoWorkers("a new worker cannot run a task") from None
                        result = self.crashed(item)
                        pool = self._new_pool()
                    current = []
                    yield result
                finished = True
                return
            except _NoWorkers as error:
                why = str(error)
            if pool is not None:
                pool.stop()
                pool = None
            _tell_once(why)
            yield from self._here(chain(current, items))
        finally:
            if pool is not None and finished:
                pool.close()
            elif pool is not None:
                pool.stop()

    def _workers_start(self) -> bool:
        """Whether a new worker can start and run an empty chunk, within PROBE_S: asked when a pool broke before
        it gave any result, where a crash on a file and workers that cannot start (no memory left for one) look
        alike."""
        try:
            pool = self._new_pool(1)
        except _NoWorkers:
            return False
        try:
            pool.submit(0, [])
            return pool.result(0, PROBE_S) == []
        except (_NoWorkers, _Broken, OSError, RuntimeError):  # not MemoryError: a worker out of memory is the run's
            return False
        finally:
            pool.stop()
