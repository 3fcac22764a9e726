"""From accounting rows to a trace: :class:`Events` gathers what each instance does, when.

A generator adds batches of events, each batch one :class:`AccountingRow` at an array
of times, for an array of instances (and members: the sender or receiver number of a
hackbench group). The row decides everything else: the operation, which role's memcg
pays, which role's CPU runs it, the ``irq`` word. Socket rows go through
``sk_forward_alloc`` (:func:`memcglab.workloads.sockmem.socket_calls`, in time order,
per socket) and become the memcg calls it makes; the others are trace operations
as they are. A role whose memcg is 0 (the root) charges nothing, so its rows vanish.

>>> import numpy as np
>>> from memcglab.workloads.catalogue.rows import AccountingRow
>>> rows = {"w": AccountingRow("w", "obj_charge", "c", "GFP_KERNEL_ACCOUNT", "obj stock",
...                            "writer", "writer", "task", "520 B", ())}
>>> roles = Roles({"writer": np.array([[3]])}, {"writer": np.array([7])})
>>> ev = Events(roles, rows)
>>> ev.add("w", np.array([0.5, 1.5]), np.array([0, 0]), arg=520)
>>> body, origin, warm = ev.build("eager", warmup_time=1.0)
>>> body[["op", "cpu", "memcg", "arg"]].tolist(), origin.tolist(), warm
([(8, 3, 7, 520), (8, 3, 7, 520)], [0, 0], 1)
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from memcglab.trace import (
    OP_CHARGE,
    OP_DTYPE,
    OP_OBJ_CHARGE,
    OP_OBJ_UNCHARGE,
    OP_UNCHARGE,
    OP_UNCHARGE_DIRECT,
)
from memcglab.workloads.catalogue.rows import AccountingRow
from memcglab.workloads.sockmem import (
    FORCED,
    RECLAIM,
    SCHEDULE,
    TCP_RCV,
    UDP_ENQUEUE,
    UDP_RELEASE,
    socket_calls,
)

__all__ = ["Roles", "Events", "fifo"]

_DIRECT = {"page_charge": OP_CHARGE, "folio_uncharge": OP_UNCHARGE_DIRECT,
           "kmem_uncharge": OP_UNCHARGE, "obj_charge": OP_OBJ_CHARGE,
           "obj_uncharge": OP_OBJ_UNCHARGE}
_SOCKET = {"sk_schedule": SCHEDULE, "sk_forced": FORCED, "sk_rcv": TCP_RCV,
           "sk_uncharge": RECLAIM, "udp_enqueue": UDP_ENQUEUE, "udp_release": UDP_RELEASE}


@numba.njit(cache=True)
def _cummax_by(stream, time):  # pragma: no cover - jitted
    out = time.copy()
    for k in range(1, len(out)):
        if stream[k] == stream[k - 1] and out[k] < out[k - 1]:
            out[k] = out[k - 1]
    return out


def fifo(stream: np.ndarray, time: np.ndarray) -> np.ndarray:
    """``time`` made non-decreasing within each stream, the array's order being each
    stream's FIFO order: a reader consumes its queue in order, so a message drawn to
    be read before an earlier one is read with it.

    >>> fifo(np.array([0, 1, 0, 1]), np.array([5.0, 1.0, 3.0, 2.0])).tolist()
    [5.0, 1.0, 5.0, 2.0]
    """
    order = np.argsort(stream, kind="stable")
    out = np.empty(len(time), dtype=np.float64)
    out[order] = _cummax_by(np.asarray(stream)[order], np.asarray(time, dtype=np.float64)[order])
    return out


@dataclass(frozen=True, slots=True)
class Roles:
    """Per role: the CPUs of its tasks, shape (instances, members), and its memcg per instance."""

    cpu: dict[str, np.ndarray]
    memcg: dict[str, np.ndarray]


class Events:
    """Batches of accounting rows at times; :meth:`build` turns them into trace rows."""

    def __init__(self, roles: Roles, rows: dict[str, AccountingRow]) -> None:
        self.roles = roles
        self.rows = rows
        self._index = {key: i for i, key in enumerate(rows)}
        self._batches: list[tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                  np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, key: str, time: np.ndarray, inst: np.ndarray, *, arg: np.ndarray | int = 0,
            member: np.ndarray | int = 0, cpu_member: np.ndarray | int | None = None,
            sched: np.ndarray | int | None = None, freed: np.ndarray | int = 0) -> None:
        """Row ``key`` at each ``time`` for instance ``inst``.

        ``arg`` is the pages or bytes of a direct row and the bytes a socket row
        charges or frees (``sk_mem_charge``/``sk_mem_uncharge``); ``sched`` the bytes
        a socket row schedules (default ``arg``); ``freed`` a receive's acked bytes.
        ``member`` picks the target role's socket or task, ``cpu_member`` the CPU
        role's task (default ``member``).
        """
        time = np.asarray(time, dtype=np.float64)
        n = len(time)

        def col(v: np.ndarray | int) -> np.ndarray:
            return np.broadcast_to(np.asarray(v, dtype=np.int64), (n,))

        amount = col(arg)
        self._batches.append((self._index[key], time, col(inst), col(member),
                              col(member if cpu_member is None else cpu_member), amount,
                              amount if sched is None else col(sched), col(freed)))

    def build(self, era: str, warmup_time: float) -> tuple[np.ndarray, np.ndarray, int]:
        """Trace rows (``OP_DTYPE``) in time order, each row's accounting-row index, and
        how many rows fall before ``warmup_time``."""
        rows = list(self.rows.values())
        cols = [np.concatenate([b[k] for b in self._batches]) if self._batches
                else np.zeros(0) for k in range(1, 8)]
        row_of = np.concatenate([np.full(len(b[1]), b[0], dtype=np.int64)
                                 for b in self._batches]) if self._batches else \
            np.zeros(0, dtype=np.int64)
        time, inst, member, cpu_member, amount, sched, freed = cols
        is_sock = np.array([r.socket for r in rows], dtype=bool)[row_of]
        out: list[tuple[np.ndarray, ...]] = []  # (time, order, row, inst, cpu, memcg, op, arg)
        if is_sock.any():
            out.extend(self._socket(era, is_sock, row_of, time, inst, member, cpu_member,
                                    amount, sched, freed, rows))
        direct = ~is_sock
        if direct.any():
            op = np.array([_DIRECT.get(r.kind, 0) for r in rows], dtype=np.uint8)[row_of[direct]]
            out.append(self._resolve(rows, row_of[direct], time[direct],
                                     np.zeros(direct.sum()), inst[direct], member[direct],
                                     cpu_member[direct], op, amount[direct]))
        if not out:  # a test that charges nothing (will-it-scale lock1)
            return np.zeros(0, dtype=OP_DTYPE), np.zeros(0, dtype=np.int64), 0
        t, order, r, cpu, memcg, op, arg = (np.concatenate([o[k] for o in out]) for k in range(7))
        keep = (memcg != 0) & (arg > 0)
        t, order, r, cpu, memcg, op, arg = (a[keep] for a in (t, order, r, cpu, memcg, op, arg))
        idx = np.lexsort((order, t))
        body = np.zeros(len(idx), dtype=OP_DTYPE)
        body["op"] = op[idx]
        body["cpu"] = cpu[idx]
        body["memcg"] = memcg[idx]
        body["parent"] = -1
        body["arg"] = arg[idx]
        irq = np.array([row.irq for row in rows], dtype=bool)
        body["irq"] = irq[r[idx]]
        return body, r[idx], int(np.count_nonzero(t < warmup_time))

    def _resolve(self, rows: list[AccountingRow], row_of: np.ndarray, time: np.ndarray,
                 order: np.ndarray, inst: np.ndarray, member: np.ndarray,
                 cpu_member: np.ndarray, op: np.ndarray,
                 arg: np.ndarray) -> tuple[np.ndarray, ...]:
        """CPU and memcg of each event from its row's roles."""
        cpu = np.zeros(len(row_of), dtype=np.int64)
        memcg = np.zeros(len(row_of), dtype=np.int64)
        for i in np.unique(row_of).tolist():
            sel = row_of == i
            row = rows[i]
            cpus = self.roles.cpu[row.cpu]
            cpu[sel] = cpus[inst[sel], cpu_member[sel] % cpus.shape[1]]
            memcg[sel] = self.roles.memcg[row.target][inst[sel]]
        return time, order, row_of, cpu, memcg, op, arg

    def _socket(self, era: str, is_sock: np.ndarray, row_of: np.ndarray, time: np.ndarray,
                inst: np.ndarray, member: np.ndarray, cpu_member: np.ndarray,
                amount: np.ndarray, sched: np.ndarray, freed: np.ndarray,
                rows: list[AccountingRow]) -> list[tuple[np.ndarray, ...]]:
        """The memcg calls the socket rows make, each at its event's time."""
        sel = np.flatnonzero(is_sock)
        sel = sel[np.argsort(time[sel], kind="stable")]
        r = row_of[sel]
        targets = sorted({rows[i].target for i in np.unique(r).tolist()})
        t_index = np.array([targets.index(rows[i].target) if rows[i].socket else 0
                            for i in range(len(rows))], dtype=np.int64)[r]
        width = int(member[sel].max()) + 1
        ninst = int(inst[sel].max()) + 1
        sock = (t_index * ninst + inst[sel]) * width + member[sel]
        event = np.array([_SOCKET.get(row.kind, 0) for row in rows], dtype=np.int8)[r]
        calls = socket_calls(sock, event, sched[sel], amount[sel], freed[sel], era=era)
        out = []
        for k in (0, 1):
            pages = calls[:, k]
            hit = pages != 0
            op = np.where(pages[hit] > 0, OP_CHARGE, OP_UNCHARGE).astype(np.uint8)
            out.append(self._resolve(rows, r[hit], time[sel][hit], np.full(hit.sum(), k),
                                     inst[sel][hit], member[sel][hit], cpu_member[sel][hit],
                                     op, np.abs(pages[hit])))
        return out
