"""Per-CPU local locks as the charge path sees them: ``local_trylock_t``.

Port of the non-RT, non-debug ``local_trylock_t`` semantics of
include/linux/local_lock_internal.h (v6.15+ form): a ``u8 acquired`` flag that a
trylock sets only when it is clear. The simulation is sequential, so preemption and
interrupt disabling have nothing to protect against; the one way a trylock can fail
is an operation that runs while the same CPU is already inside the lock (the trace's
``nested`` word: an interrupt arriving mid-operation).

>>> lock = LocalTrylock()
>>> local_trylock(lock), local_trylock(lock)
(True, False)
>>> local_unlock(lock); lock.acquired
0
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LocalTrylock", "local_trylock", "local_lock", "local_unlock"]


@dataclass(slots=True)
class LocalTrylock:
    """``local_trylock_t``: ``acquired`` is the kernel's ``u8 acquired``.

    The kernel's value is 0 or 1. Here it counts holders, because the replay
    contract lets the blocking ``local_lock`` of a drain path run inside a nested
    operation ("taken normally and drains as usual"), which the kernel would avoid
    with its ``!in_task()`` early return; counting keeps the outer holder's state
    intact when the inner one unlocks.
    """

    acquired: int = 0


def local_trylock(lock: LocalTrylock) -> bool:
    """``__local_trylock``: take the lock only if nobody on this CPU holds it."""
    if lock.acquired:
        return False
    lock.acquired = 1
    return True


def local_lock(lock: LocalTrylock) -> None:
    """``__local_lock`` on a trylock type: always succeeds (see the class note)."""
    lock.acquired += 1


def local_unlock(lock: LocalTrylock) -> None:
    """``__local_unlock``: the kernel asserts ``acquired == 1`` and clears it."""
    if lock.acquired <= 0:
        raise AssertionError("local_unlock of a lock that is not held")
    lock.acquired -= 1
