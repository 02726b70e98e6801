"""Runs a per-file job over many files, in worker processes when there are several, results in input order.

Work goes out in small chunks of paths as they are discovered, with a bounded number of chunks in flight, so
neither the path list nor the results of a big tree are ever held whole, and no task carries more than its
own chunk (libcst's runner pickles the whole path list into every task, which is quadratic).
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from itertools import chain, islice
from typing import Any, Callable, Deque, Generic, Iterable, Iterator, List, Optional, Tuple, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

CHUNK_SIZE = 16
CHUNKS_IN_FLIGHT_PER_WORKER = 4

# Set in each worker by the pool initializer, so the job and its settings are pickled once per worker.
_job: Optional[Callable[..., Any]] = None
_shared: Any = None


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _init_worker(job: Callable[..., Any], shared: Any) -> None:
    global _job, _shared
    _job, _shared = job, shared


def _run_chunk(chunk: List[Any]) -> List[Any]:
    assert _job is not None
    return [_job(_shared, item) for item in chunk]


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
    ) -> None:
        self.job = job
        self.shared = shared
        self.crashed = crashed
        self.jobs = max(1, jobs)
        self.chunk_size = chunk_size

    def run(self, items: Iterable[Item]) -> Iterator[Result]:
        """Results in the order of `items`."""
        iterator = iter(items)
        head = list(islice(iterator, 2))
        if self.jobs == 1 or len(head) < 2:
            # One file, or --jobs 1: starting processes would cost more than the work.
            for item in chain(head, iterator):
                yield self.job(self.shared, item)
            return
        yield from self._run_in_pool(chain(head, iterator))

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=self.jobs, initializer=_init_worker, initargs=(self.job, self.shared))

    def _run_in_pool(self, items: Iterator[Item]) -> Iterator[Result]:
        pool = self._new_pool()
        pending: Deque[Tuple[List[Item], "Future[List[Result]]"]] = deque()
        limit = self.jobs * CHUNKS_IN_FLIGHT_PER_WORKER
        try:
            while True:
                chunk = list(islice(items, self.chunk_size))
                if chunk:
                    pending.append((chunk, pool.submit(_run_chunk, chunk)))
                    if len(pending) < limit:
                        continue
                if not pending:
                    break
                done_chunk, future = pending.popleft()
                try:
                    results = future.result()
                except BrokenProcessPool:
                    pool.shutdown(wait=False, cancel_futures=True)
                    retry = [done_chunk] + [c for c, _ in pending]
                    pending.clear()
                    yield from self._isolate(chain.from_iterable(retry))
                    pool = self._new_pool()
                    continue
                yield from results
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

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
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
