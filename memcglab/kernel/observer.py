"""What the simulation watches: counters and an optional exact event log.

Not a kernel file. The ports call these hooks where the replay contract counts
something (a page_counter walk, a stock hit, an eviction, an underflow warning) so
that counting never changes the ported control flow. Tests pass ``log=[]`` to get
an exact event log of a hand-worked scenario.

>>> obs = Observer(log=[])
>>> obs.stock_hit(cpu=0, memcg_id=2, nr_pages=1)
>>> obs.stock_hits, obs.log
(1, [('hit', 0, 2, 1)])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Observer"]


#: the kernel function of each walk kind (page_counter_cancel_hierarchy is the RFC's
#: uncharge walk, page_counter_cancel included)
_WALK_FUNCTION = {"try_charge": "page_counter_try_charge", "uncharge": "page_counter_uncharge",
                  "cancel": "page_counter_uncharge", "charge": "page_counter_charge"}


def _owner_id(counter: Any) -> Any:
    owner = counter.owner
    return getattr(owner, "id", owner)


@dataclass(slots=True)
class Observer:
    """Counts the contract's ``walks``, ``stock_hits``, ``evictions`` and ``warnings``."""

    walks: int = 0
    stock_hits: int = 0
    evictions: int = 0
    warnings: int = 0
    log: list[tuple] | None = None
    #: obj-stock events and charge-path function calls, by name
    calls: dict[str, int] = field(default_factory=dict)

    # page_counter hooks (see memcglab.kernel.page_counter.WalkObserver)
    def walk(self, counter: Any, nr_pages: int, kind: str) -> None:
        self.walks += 1
        self.call(_WALK_FUNCTION.get(kind, kind))
        if self.log is not None:
            self.log.append(("walk", _owner_id(counter), nr_pages, kind))

    def warn(self, counter: Any, new: int, nr_pages: int) -> None:
        self.warnings += 1
        if self.log is not None:
            self.log.append(("warn", _owner_id(counter), new, nr_pages))

    # memcontrol hooks
    def stock_hit(self, cpu: int, memcg_id: int, nr_pages: int) -> None:
        self.stock_hits += 1
        if self.log is not None:
            self.log.append(("hit", cpu, memcg_id, nr_pages))

    def eviction(self, cpu: int, slot: int, memcg_id: int, nr_pages: int) -> None:
        self.evictions += 1
        if self.log is not None:
            self.log.append(("evict", cpu, slot, memcg_id, nr_pages))

    # obj stock and per-function hooks (docs/trace-extensions.md; memcglab.events)
    def obj_event(self, name: str, cpu: int, memcg_id: int, n: int = 1) -> None:
        """An event of the obj stock or a call of a charge-path function: counted by name
        (``calls``) and logged as ``(name, cpu, memcg, n)``."""
        self.calls[name] = self.calls.get(name, 0) + 1
        if self.log is not None:
            self.log.append((name, cpu, memcg_id, n))

    def call(self, name: str) -> None:
        """A call of a charge-path function that the event log does not show: counted."""
        self.calls[name] = self.calls.get(name, 0) + 1

    def note(self, *event: Any) -> None:
        """A log-only event (refills, drains, memory events): no contract counter."""
        if self.log is not None:
            self.log.append(event)
