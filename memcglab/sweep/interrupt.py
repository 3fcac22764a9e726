"""Ctrl-C and SIGTERM during a sweep: stop scheduling, stop what runs, keep what finished.

While a sweep runs, :class:`Interruption` turns the first SIGINT or SIGTERM into a
request instead of an exception at an arbitrary line: the executors poll it
(:func:`memcglab.sweep.executors.iter_completed`), start nothing more, and stop the
runs in flight with their kernels (:mod:`memcglab.sweep.stopping`); the sweep then
collects every run that committed its ``run.json``, writes the table of those, and
returns. A second signal does not wait: the pool's workers are killed at once, with
their kernels (whose connection files then stay in the temporary directory).

The command's exit status is then ``128 + signal`` as a shell reports a process ended
by the signal: 130 for SIGINT (Ctrl-C), 143 for SIGTERM.

Handlers can only be installed from the main thread; elsewhere (a sweep started in a
notebook's thread) the block changes nothing and a KeyboardInterrupt behaves as usual,
the executors still stopping their workers on the way out.
"""

from __future__ import annotations

import logging
import signal
import threading
from types import TracebackType
from typing import Any

from memcglab.sweep import stopping

__all__ = ["SIGNALS", "Interruption", "exit_status", "signal_name"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)


def signal_name(signum: int) -> str:
    """``SIGINT`` for 2, and so on.

    >>> signal_name(2), signal_name(15)
    ('SIGINT', 'SIGTERM')
    """
    return signal.Signals(signum).name


def exit_status(signum: int) -> int:
    """The exit status of a command that stopped on ``signum``: 128 + its number.

    >>> exit_status(signal.SIGINT), exit_status(signal.SIGTERM)
    (130, 143)
    """
    return 128 + int(signum)


class Interruption:
    """A ``with`` block during which SIGINT and SIGTERM ask the sweep ``token`` to stop."""

    def __init__(self, token: str) -> None:
        self.token = token
        #: the first signal received, or None
        self.signum: int | None = None
        self.count = 0
        self._saved: dict[int, Any] = {}
        self._quiet = False

    def __enter__(self) -> Interruption:
        if threading.current_thread() is threading.main_thread():
            self._saved = {s: signal.signal(s, self._handle) for s in SIGNALS}
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for signum, handler in self._saved.items():
            signal.signal(signum, handler)
        if self._quiet:
            logging.disable(logging.NOTSET)

    def requested(self) -> int:
        """How many signals asked the sweep to stop (the executors' ``stop()``)."""
        return self.count

    def _handle(self, signum: int, frame: Any) -> None:
        self.count += 1
        if self.signum is None:
            self.signum = signum
            # a kernel killed on purpose makes nbclient log "Kernel died" for its run
            logging.disable(logging.CRITICAL)
            self._quiet = True
        stopping.stop(self.token)  # the runs executing in this process (a serial sweep)
