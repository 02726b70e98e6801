"""A per-file CPU-time budget: a file whose fix uses more CPU than its budget is stopped, so one never stalls a run.

A 318 KB single-line file once took minutes to fix. The budget counts the CPU time the process spends (user and
system, `setitimer(ITIMER_PROF)`), not the time on the clock: a fix costs the same CPU on a quiet machine and on a
loaded one, where the clock ran two and three times as long, so which files get fixed no longer depends on the
machine's load (issue 33: the 20 s of a wall-clock budget dropped a 5,000-line module's fixes on a loaded machine
and kept them on a quiet one). When it runs out, SIGPROF's handler raises OverBudget in the thread doing the
work, which unwinds it (a BaseException, so no `except Exception` on the way swallows it). SIGALRM is left to
whoever else uses it. Where there is no ITIMER_PROF (Windows) or the work runs outside the main thread (signals
reach only the main thread), there is no budget.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Iterator, Optional


class OverBudget(BaseException):
    """The file's time budget ran out."""


def over_budget_in(error: BaseException) -> Optional[OverBudget]:
    """The OverBudget that `error` replaced, if one did: code unwinding from the budget's end (a `finally`, an
    `__exit__`, libcst's visitor bookkeeping) can fail in turn, and its error (a KeyError) then stood for the
    file's time running out. Found along the chain of contexts."""
    seen = set()
    context: Optional[BaseException] = error
    while context is not None and id(context) not in seen:
        if isinstance(context, OverBudget):
            return context
        seen.add(id(context))
        context = context.__context__
    return None


def _expire(signum: int, frame: Optional[FrameType]) -> None:
    raise OverBudget()


def _can_budget() -> bool:
    """Whether a budget can be kept here: a CPU-time timer exists and this is the main thread."""
    return hasattr(signal, "setitimer") and hasattr(signal, "ITIMER_PROF") and hasattr(signal, "SIGPROF") \
        and threading.current_thread() is threading.main_thread()


@contextmanager
def time_budget(seconds: Optional[float]) -> Iterator[None]:
    """Raise OverBudget in the block once the process has spent `seconds` of CPU time in it (no limit for None
    or 0). A CPU-time timer set before is put back as it was when the block ends."""
    if not seconds or seconds <= 0 or not _can_budget():
        yield
        return
    previous = signal.signal(signal.SIGPROF, _expire)
    outer = signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        try:
            signal.setitimer(signal.ITIMER_PROF, 0)
        finally:  # the timer may fire on the way out; the handler and any outer timer are put back all the same
            signal.signal(signal.SIGPROF, previous if previous is not None else signal.SIG_DFL)
            if outer[0] > 0:
                signal.setitimer(signal.ITIMER_PROF, *outer)
