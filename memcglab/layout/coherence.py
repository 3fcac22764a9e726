"""A MESI cache-coherence simulator with perf-c2c-style false-sharing attribution.

Input: a time-ordered stream of accesses ``(cpu, address, size, write, field)``.
Each CPU has a private cache of unbounded size, so the only misses are cold misses
and coherence misses; an access that crosses a line boundary touches both lines.
Per line and CPU the state is Modified, Exclusive, Shared or Invalid:

* a read of an Invalid line misses. If another CPU holds it Modified, that cache
  supplies the data (a *HITM*, a cache-to-cache transfer of a dirty line) and drops
  to Shared; an Exclusive holder drops to Shared too (a clean forward). The reader
  gets Exclusive if nobody else holds the line, Shared otherwise;
* a write to a Modified line hits; to an Exclusive line it upgrades silently; to a
  Shared line it upgrades and invalidates the other copies; to an Invalid line it
  is a write miss (read-for-ownership), a HITM if another CPU held it Modified, and
  invalidates every other copy. Each copy dropped counts as one *invalidation*.

Attribution, as ``perf c2c`` does it: every copy a write invalidates remembers the
field that write stored to. When that CPU next misses on the line (a *coherence
miss*), the miss is charged to the pair (field written, field accessed); a cold
miss that hits a remote Modified line is charged to the line's last written field.
Different fields make a false-sharing pair, the same field true sharing.

The kernel loop is compiled with numba and runs the stream in chunks, so memory
stays bounded for streams of many millions of accesses.

>>> r = simulate(cpu=[0, 1, 0, 1], addr=[0, 8, 0, 8], size=8, write=[1, 0, 1, 0],
...              field=[0, 1, 0, 1], field_names=["counter", "pointer"])
>>> r.totals()["hitm"], r.totals()["invalidations"]
(2, 1)
>>> r.sharing[["writer", "victim", "op", "misses", "kind"]].to_dict("records")
[{'writer': 'counter', 'victim': 'pointer', 'op': 'read', 'misses': 2, 'kind': 'false'}]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd

__all__ = ["COUNTERS", "CoherenceResult", "simulate", "split_lines"]

_I, _S, _E, _M = 0, 1, 2, 3
#: Per-line counters, in the column order of :attr:`CoherenceResult.lines`.
COUNTERS = ("reads", "writes", "read_misses", "write_misses", "upgrades", "hitm",
            "clean_forwards", "invalidations", "coherence_misses")
(_READS, _WRITES, _RMISS, _WMISS, _UPGRADE, _HITM, _CLEAN, _INVAL, _COH) = range(len(COUNTERS))
_CHUNK = 1 << 20


@numba.njit(cache=True, nogil=True)
def _run(line, cpu, write, field, state, owner, nvalid, inval_field, last_wfield, counters,
         ev_line, ev_writer, ev_victim, ev_write, ev_hitm):  # pragma: no cover - compiled
    n_cpus = state.shape[1]
    nev = 0
    for i in range(line.shape[0]):
        ln = line[i]
        c = cpu[i]
        f = field[i]
        st = state[ln, c]
        if not write[i]:
            counters[ln, _READS] += 1
            if st != _I:
                continue
            counters[ln, _RMISS] += 1
            hitm = False
            o = owner[ln]
            if o >= 0:
                if state[ln, o] == _M:
                    hitm = True
                    counters[ln, _HITM] += 1
                else:
                    counters[ln, _CLEAN] += 1
                state[ln, o] = _S
                owner[ln] = -1
            culprit = inval_field[ln, c]
            if culprit >= 0:
                counters[ln, _COH] += 1
            elif hitm:
                culprit = last_wfield[ln]
            if culprit >= 0:
                ev_line[nev] = ln
                ev_writer[nev] = culprit
                ev_victim[nev] = f
                ev_write[nev] = False
                ev_hitm[nev] = hitm
                nev += 1
            inval_field[ln, c] = -1
            if nvalid[ln] == 0:
                state[ln, c] = _E
                owner[ln] = c
            else:
                state[ln, c] = _S
            nvalid[ln] += 1
            continue
        counters[ln, _WRITES] += 1
        last_wfield[ln] = f
        if st == _M:
            continue
        if st == _E:
            state[ln, c] = _M
            continue
        others = nvalid[ln]
        if st == _S:
            counters[ln, _UPGRADE] += 1
            others -= 1
        else:
            counters[ln, _WMISS] += 1
            hitm = False
            o = owner[ln]
            if o >= 0 and state[ln, o] == _M:
                hitm = True
                counters[ln, _HITM] += 1
            culprit = inval_field[ln, c]
            if culprit >= 0:
                counters[ln, _COH] += 1
            elif hitm:
                culprit = last_wfield[ln]  # already f: a write miss on a dirty line
            if culprit >= 0:
                ev_line[nev] = ln
                ev_writer[nev] = culprit
                ev_victim[nev] = f
                ev_write[nev] = True
                ev_hitm[nev] = hitm
                nev += 1
        if others > 0:
            for k in range(n_cpus):
                if k != c and state[ln, k] != _I:
                    state[ln, k] = _I
                    inval_field[ln, k] = f
                    counters[ln, _INVAL] += 1
        state[ln, c] = _M
        owner[ln] = c
        nvalid[ln] = 1
        inval_field[ln, c] = -1
    return nev


def split_lines(addr: np.ndarray, size: np.ndarray, line: int = 64
                ) -> tuple[np.ndarray, np.ndarray]:
    """(line index, access index) for every line each access touches, in stream order."""
    addr = np.asarray(addr, dtype=np.int64)
    size = np.maximum(np.asarray(size, dtype=np.int64), 1)
    first = addr // line
    last = (addr + size - 1) // line
    count = last - first + 1
    idx = np.repeat(np.arange(len(addr)), count)
    starts = np.cumsum(count) - count
    lines = first[idx] + (np.arange(len(idx)) - starts[idx])
    return lines, idx


@dataclass(frozen=True)
class CoherenceResult:
    """Per-line counters and the false/true-sharing attribution of a run.

    ``lines``: one row per cache line touched, indexed by the line's start address,
    with the :data:`COUNTERS`. ``sharing``: one row per (line, writer field, victim
    field, op) with ``misses`` (coherence misses and HITM misses charged to that
    pair), ``hitm`` (those that were HITMs) and ``kind`` (``false``/``true``).
    """

    lines: pd.DataFrame
    sharing: pd.DataFrame
    line_size: int

    def totals(self) -> dict[str, int]:
        """Each counter of :data:`COUNTERS` summed over all lines."""
        return {k: int(self.lines[k].sum()) for k in COUNTERS}

    def false_sharing(self) -> pd.DataFrame:
        """The rows of ``sharing`` whose kind is ``false``."""
        return self.sharing[self.sharing["kind"] == "false"].reset_index(drop=True)


def simulate(cpu: Sequence[int] | np.ndarray, addr: Sequence[int] | np.ndarray,
             size: int | Sequence[int] | np.ndarray, write: Sequence[bool] | np.ndarray,
             field: Sequence[int] | np.ndarray | None = None,
             field_names: Sequence[str] | None = None, line: int = 64) -> CoherenceResult:
    """Run the access stream through the MESI model (see the module docstring)."""
    cpu = np.asarray(cpu, dtype=np.int32)
    n = len(cpu)
    addr = np.asarray(addr, dtype=np.int64)
    write = np.asarray(write, dtype=np.bool_)
    size = np.broadcast_to(np.asarray(size, dtype=np.int64), (n,))
    field = (np.zeros(n, np.int32) if field is None else np.asarray(field, dtype=np.int32))
    if not (len(addr) == len(write) == len(field) == n):
        raise ValueError(f"cpu, addr, write and field must have one entry per access "
                         f"(got {n}, {len(addr)}, {len(write)}, {len(field)})")
    if n and (cpu.min() < 0 or field.min() < 0):
        raise ValueError("cpu and field indices must be >= 0")
    if line <= 0 or line & (line - 1):
        raise ValueError(f"line={line}: must be a power of two")
    names = list(field_names) if field_names is not None else [
        str(i) for i in range(int(field.max()) + 1 if n else 0)]
    if n and int(field.max()) >= len(names):
        raise ValueError(f"field index {int(field.max())} has no name "
                         f"({len(names)} field_names)")
    lines_abs, idx = split_lines(addr, size, line)
    uniq, line_idx = np.unique(lines_abs, return_inverse=True)
    line_idx = line_idx.astype(np.int64)
    c = cpu[idx]
    w = write[idx]
    f = field[idx]
    n_lines, n_cpus = len(uniq), (int(cpu.max()) + 1 if n else 1)
    state = np.zeros((n_lines, n_cpus), np.int8)
    owner = np.full(n_lines, -1, np.int32)
    nvalid = np.zeros(n_lines, np.int32)
    inval_field = np.full((n_lines, n_cpus), -1, np.int32)
    last_wfield = np.full(n_lines, -1, np.int32)
    counters = np.zeros((n_lines, len(COUNTERS)), np.int64)
    chunk = min(_CHUNK, max(len(line_idx), 1))
    ev = [np.empty(chunk, np.int64), np.empty(chunk, np.int32), np.empty(chunk, np.int32),
          np.empty(chunk, np.bool_), np.empty(chunk, np.bool_)]
    parts = []
    for s in range(0, len(line_idx), chunk):
        e = s + chunk
        k = _run(line_idx[s:e], c[s:e], w[s:e], f[s:e], state, owner, nvalid, inval_field,
                 last_wfield, counters, *ev)
        if k:
            parts.append(_count_events(*(a[:k] for a in ev)))
    lines_df = pd.DataFrame(counters, columns=list(COUNTERS))
    lines_df.insert(0, "line", uniq * line)
    sharing = _sharing_frame(parts, uniq * line, names)
    return CoherenceResult(lines_df.set_index("line"), sharing, line)


def _count_events(ln, writer, victim, is_write, hitm) -> pd.DataFrame:
    df = pd.DataFrame({"line": ln, "writer": writer, "victim": victim, "write": is_write,
                       "hitm": hitm.astype(np.int64)})
    return df.groupby(["line", "writer", "victim", "write"], as_index=False).agg(
        misses=("hitm", "size"), hitm=("hitm", "sum"))


def _sharing_frame(parts: list[pd.DataFrame], line_addr: np.ndarray,
                   names: list[str]) -> pd.DataFrame:
    cols = ["line", "writer", "victim", "op", "misses", "hitm", "kind"]
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    df = pd.concat(parts).groupby(["line", "writer", "victim", "write"], as_index=False).sum()
    out = pd.DataFrame({
        "line": line_addr[df["line"].to_numpy()],
        "writer": [names[i] for i in df["writer"]],
        "victim": [names[i] for i in df["victim"]],
        "op": np.where(df["write"], "write", "read"),
        "misses": df["misses"].astype(np.int64),
        "hitm": df["hitm"].astype(np.int64),
    })
    out["kind"] = np.where(out["writer"] == out["victim"], "true", "false")
    return out.sort_values(["line", "misses"], ascending=[True, False],
                           kind="stable").reset_index(drop=True)[cols]
