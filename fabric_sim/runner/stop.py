"""Stopping a command of many runs (mrc-sim, python -m mrc_paper):
SIGINT (Ctrl-C) and SIGTERM are handled the same way, with Ray and
without. Each becomes a KeyboardInterrupt in the main thread (SIGTERM as
`Terminated`); the runner stops what is running and raises `Interrupted`
with what finished; the command writes what it has, marked, and prints
one `interrupted by ...:` line. Ray's driver sets handlers of its own when
it starts (SIGTERM: a Python exit; its C++ core: a stack dump, then an
abort), so ours are set again after it (`reinstate`)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is."""


class Interrupted(KeyboardInterrupt):
    """Runs stopped by a signal: `signal` names it, `finished` runs were
    executed before it (besides those from the cache), kept in `cache`
    (None: --no-cache)."""

    def __init__(self, cause: KeyboardInterrupt, finished: int, cache: Path | None):
        super().__init__(why(cause))
        self.cause, self.finished, self.cache = cause, finished, cache


def _signal(exc: BaseException) -> int:
    """The signal an interrupt stands for: its type's, or the one our
    handler last took (Ray's wait raises a KeyboardInterrupt of its own
    for whatever exception a handler raised in it)."""
    if isinstance(exc, Interrupted):
        exc = exc.cause
    if isinstance(exc, Terminated) or _received[-1:] == [signal.SIGTERM]:
        return signal.SIGTERM
    return signal.SIGINT


def why(exc: BaseException) -> str:
    """The signal an interrupt stands for, as the `interrupted by` line names it."""
    return "SIGTERM" if _signal(exc) == signal.SIGTERM else "SIGINT (Ctrl-C)"


def status(exc: BaseException) -> int:
    """The exit status of a command so stopped (128 + the signal, as a shell reports it)."""
    return 128 + _signal(exc)


def kept(exc: BaseException) -> str:
    """What the run cache keeps of an interrupted command, for its one line."""
    if not isinstance(exc, Interrupted):
        return ""
    if exc.cache is None:
        return "; --no-cache: nothing of what was cut off is kept"
    return f"; every finished run is in the run cache ({exc.cache}): the same command resumes"


def _terminate(signum: int, frame: Any) -> None:
    _received.append(signum)
    raise Terminated


def _interrupt(signum: int, frame: Any) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


_active = 0  # how many `handled` blocks are open (a command inside a test's command)
_received: list[int] = []  # the signals our handlers took, in order


@contextlib.contextmanager
def handled() -> Iterator[None]:
    """SIGTERM raised as Terminated, SIGINT as KeyboardInterrupt, while the
    block runs (in the main thread: signals are its alone), each noted."""
    global _active
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, h) for s, h in ((signal.SIGTERM, _terminate), (signal.SIGINT, _interrupt))}
    _active += 1
    _received.clear()
    try:
        yield
    finally:
        _active -= 1
        for s, h in old.items():
            signal.signal(s, signal.SIG_DFL if h is None else h)


def reinstate() -> None:
    """Our handlers again, after ray.init set its own (see the module)."""
    if _active and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
        signal.signal(signal.SIGINT, _interrupt)
