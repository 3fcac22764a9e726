"""Where the scheduler puts a benchmark's tasks, on a machine of sockets, cores and threads.

CPU numbering: socket ``s`` holds CPUs ``s * per_socket`` to ``(s + 1) * per_socket - 1``
(contiguous, as the trace's ``nodes`` header splits them); inside a socket the first
thread of each core comes first, then the second threads. So CPU ``c`` and
``c + cores_per_socket`` are SMT siblings.

Placement (:func:`spread_order`): tasks take CPUs in the order an idle machine's
scheduler gives them out when each task of a pair wakes the other. The task created
``k``-th goes to slot ``k``: the idle cores of one socket first
(``select_idle_sibling`` prefers an idle core, then an idle SMT sibling), pairs
kept inside one socket's LLC (``wake_affine`` pulls a synchronously woken peer to
the waker's LLC), sockets filled in turn, second threads after every core's first;
past the last CPU the order wraps (more tasks than CPUs share them evenly). A
benchmark's softirq work runs on the CPU of the task that transmits (loopback).

>>> spread_order(8, sockets=2, threads_per_core=2).tolist()
[0, 1, 4, 5, 2, 3, 6, 7]
>>> topology(8, 2, 2)["core"].tolist(), topology(8, 2, 2)["thread"].tolist()
([0, 1, 0, 1, 2, 3, 2, 3], [0, 0, 1, 1, 0, 0, 1, 1])
"""

from __future__ import annotations

import numpy as np

__all__ = ["spread_order", "topology", "place", "place_random"]


def spread_order(cpus: int, sockets: int, threads_per_core: int) -> np.ndarray:
    """CPU of each placement slot: threads outermost, then sockets, then cores."""
    cores = cpus // (sockets * threads_per_core)
    per_socket = cores * threads_per_core
    t, s, c = np.meshgrid(np.arange(threads_per_core), np.arange(sockets), np.arange(cores),
                          indexing="ij")
    return (s * per_socket + t * cores + c).ravel().astype(np.int64)


def topology(cpus: int, sockets: int, threads_per_core: int) -> dict[str, np.ndarray]:
    """Per CPU: its socket (NUMA node), its core (numbered across the machine) and thread."""
    cores = cpus // (sockets * threads_per_core)
    per_socket = cores * threads_per_core
    cpu = np.arange(cpus)
    socket = cpu // per_socket
    thread = (cpu % per_socket) // cores
    core = socket * cores + cpu % cores
    return {"socket": socket, "core": core, "thread": thread}


def place(tasks: int, cpus: int, sockets: int, threads_per_core: int) -> np.ndarray:
    """CPU of each of ``tasks`` tasks, in creation order."""
    order = spread_order(cpus, sockets, threads_per_core)
    return order[np.arange(tasks) % cpus]


def place_random(instances: int, per_instance: int, cpus: int,
                 rng: np.random.Generator) -> np.ndarray:
    """The ``random`` placement: shape (instances, per_instance), each task on a uniformly
    random CPU, the tasks of one instance on distinct CPUs while ``per_instance <= cpus``.

    >>> p = place_random(3, 2, 4, np.random.default_rng(0))
    >>> p.shape, bool((p[:, 0] != p[:, 1]).all())
    ((3, 2), True)
    """
    if per_instance <= cpus:
        draws = np.argsort(rng.random((instances, cpus)), axis=1)[:, :per_instance]
        return draws.astype(np.int64)
    return rng.integers(0, cpus, (instances, per_instance)).astype(np.int64)
