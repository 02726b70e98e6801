"""A per-file time budget: SIGALRM stops work on one file that runs past it, so one file never stalls a run.

A 318 KB single-line file once took minutes to fix. The budget is wall-clock time measured with
`setitimer(ITIMER_REAL)`; when it runs out, the handler raises OverBudget in the thread doing the work, which
unwinds it (a BaseException, so no `except Exception` on the way swallows it). Where SIGALRM is unavailable
(Windows) or the work runs outside the main thread (signals reach only the main thread), there is no budget.
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


@contextmanager
def time_budget(seconds: Optional[float]) -> Iterator[None]:
    """Raise OverBudget in the block once `seconds` have passed (no limit for None or 0)."""
    if (
        not seconds
        or seconds <= 0
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:  # the alarm may fire on the way out; the handler is put back all the same
            signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
