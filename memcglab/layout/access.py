"""Memory-access streams: what a workload does to a struct's fields, over time.

The interface between the workload generators (``memcglab.workloads``, which
produce streams) and the coherence simulator (``memcglab.layout``, which maps each
field to an address through a struct layout and tracks cache lines). A stream names
fields, not addresses, so the same stream can be replayed over the layouts before
and after a patch.

>>> s = AccessStream.from_records(
...     ["vmstats_percpu", "memory_events_local[8]"],
...     [(0.0, 3, 1, False), (1e-6, 5, 0, True)])
>>> s.field_names[s.accesses["field"][1]], bool(s.accesses["write"][1])
('vmstats_percpu', True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ACCESS_DTYPE", "AccessStream"]

#: time in seconds since the start of the run; the CPU doing the access; an index
#: into ``field_names``; whether it is a write (a read otherwise). ``size`` is the
#: access width in bytes (8 for a pointer or counter), ``instance`` selects which
#: struct instance (e.g. which memcg) when a stream covers several.
ACCESS_DTYPE = np.dtype([
    ("time", "<f8"),
    ("cpu", "<i4"),
    ("field", "<i4"),
    ("write", "?"),
    ("size", "<u2"),
    ("instance", "<i4"),
])


@dataclass(slots=True)
class AccessStream:
    """Accesses to named fields of one struct type, in time order.

    ``field_names`` use the C member name, with ``[i]`` for an array element
    (``memory_events_local[8]`` is ``MEMCG_SWAP_FAIL``).
    """

    field_names: tuple[str, ...]
    accesses: np.ndarray
    struct: str = "mem_cgroup"
    duration: float = 0.0  # seconds of simulated time the stream covers

    @classmethod
    def from_records(cls, field_names: Sequence[str],
                     records: Iterable[tuple[float, int, int, bool]],
                     struct: str = "mem_cgroup", size: int = 8) -> AccessStream:
        """A stream from ``(time, cpu, field index, is_write)`` records, of ``size`` bytes each."""
        rows = [(t, cpu, f, w, size, 0) for t, cpu, f, w in records]
        acc = np.array(rows, dtype=ACCESS_DTYPE)
        duration = float(acc["time"].max()) if len(acc) else 0.0
        return cls(tuple(field_names), acc, struct, duration)
