"""Turn a probe's measurements into a machine profile of narrow priors.

Each measured value becomes :meth:`Prior.narrowed` of the generic prior: typical =
the median in cycles, spread = the wider half of the interquartile range; the note
keeps the ns figures, the quartiles, the extremes and the clock used. What the probe
does not measure (``slot_compare``, ``stock_lock``, ``call``, ``random_u32``,
``other_cycles_per_packet``, and cross-socket transfers on a one-socket machine)
keeps its generic prior. The machine's facts come from sysfs topology. A measured
median outside the parameter's plausible range (``memcglab.hardware.PARAMETERS``) is
a :class:`memcglab.hardware.HardwareDataError`, not a profile; a plausible median whose
spread reaches past the range (a busy machine widens the runs' quartiles) has its
interval cut at the range, and the note says so.

The clock is guarded harder, because every cycle figure is a time times the clock:
its two chains (register-register adds, the one used, and 3-cycle imuls) must agree
within :data:`memcglab.probe.measure.CHAIN_TOLERANCE`, and its whole interval, not
only its median, must lie in the plausible range. Load only slows a dependent chain,
so a run far above the rest is a clock that does not count cycles (the old chain of
immediate adds read 15 GHz on Sapphire Rapids, issue 21), and cutting its interval at
8 GHz would hide it. The cpu_ghz note and the profile's note record every chain, the
TSC rate and what the OS reports, and how the clock used compares with it.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy import stats

from memcglab.hardware import Curve, HardwareDataError, MachineProfile, load_curves, load_priors
from memcglab.hardware.schema import PARAMETERS, prior_from_table, prior_to_table
from memcglab.probe.measure import ProbeResult, Stat, chains_disagree
from memcglab.uncertainty.priors import Prior

__all__ = ["Topology", "clock_note", "topology", "to_profile"]

_SYSFS = Path("/sys/devices/system/cpu")


@dataclass(frozen=True)
class Topology:
    """Which socket and which core each online CPU belongs to."""

    package: Mapping[int, int]
    core: Mapping[int, tuple[int, int]]     # cpu -> (package, core_id)

    @property
    def cpus(self) -> int:
        """Online CPUs."""
        return len(self.package)

    @property
    def sockets(self) -> int:
        """Distinct packages."""
        return len(set(self.package.values()))

    @property
    def cores(self) -> int:
        """Distinct (package, core) pairs."""
        return len(set(self.core.values()))

    @property
    def smt(self) -> int:
        """Most hardware threads on one core."""
        per = np.unique(list(self.core.values()), axis=0, return_counts=True)[1]
        return int(per.max())


def topology(sysfs: Path = _SYSFS, cpus: int | None = None) -> Topology:
    """Read the topology of the online CPUs from ``sysfs`` (one socket, one core each if absent)."""
    n = cpus or os.cpu_count() or 1
    pkg, core = {}, {}
    for c in range(n):
        t = sysfs / f"cpu{c}" / "topology"
        try:
            pkg[c] = int((t / "physical_package_id").read_text())
            core[c] = (pkg[c], int((t / "core_id").read_text()))
        except (OSError, ValueError):
            pkg[c], core[c] = 0, (0, c)
    return Topology(pkg, core)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _narrow(generic: Prior, s: Stat, ghz: float | None, what: str, source: str,
            cut: bool = True) -> Prior:
    """A narrow prior around ``s`` (ns, or already in the prior's unit when ``ghz`` is None).

    An interval past the plausible range around a plausible median is cut at the range
    when ``cut``; otherwise it is left for the range check to refuse.
    """
    c = s.scaled(ghz) if ghz else s
    ns = f"; {s.describe('ns')} at {ghz:.3f} GHz" if ghz else ""
    # With a handful of runs the quartiles can all land on one value although the runs
    # differ; a point prior would then claim an exactness the runs do not have, so the
    # spread falls back to half their min-max range.
    spread = c.half_iqr if c.half_iqr > 0 else (c.hi - c.lo) / 2
    if _sig(c.median - spread, 6) == _sig(c.median + spread, 6):
        spread = 0.0  # runs that differ below the rounding are a point, not a zero-width range
    p = generic.narrowed(_sig(c.median), spread, source)
    lo, hi = _sig(p.low, 6), _sig(p.high, 6)
    note = f"{what}: median {c.describe(generic.unit)}{ns}"
    spec = PARAMETERS.get(generic.name)
    if cut and spec is not None and spec.minimum <= p.typical <= spec.maximum \
            and not spec.minimum <= lo <= hi <= spec.maximum:
        # The median is a plausible measurement; only the spread of a noisy run leaves
        # the range, and the hardware cannot be outside it.
        lo, hi = max(lo, spec.minimum), min(hi, spec.maximum)
        note += f"; interval cut at the plausible range [{spec.minimum:g}, {spec.maximum:g}]"
    p = replace(p, low=lo, high=hi, shape=p.shape if lo < hi else "point", note=note)
    if p.shape == "point":
        p = replace(p, low=p.typical, high=p.typical)
    return p


def _sig(v: float, digits: int = 4) -> float:
    """``v`` to ``digits`` significant digits: the runs' spread is far wider than 4."""
    return float(f"{v:.{digits}g}")


def _pair_groups(r: ProbeResult, topo: Topology) -> dict[str, list[float]]:
    groups: dict[str, list[Stat]] = {"core": [], "socket": [], "cross": []}
    for (a, b), s in r.pair_ns.items():
        key = ("cross" if topo.package.get(a) != topo.package.get(b)
               else "core" if topo.core.get(a) == topo.core.get(b) else "socket")
        groups[key].append(s)
    return groups


def _over_pairs(pairs: list[Stat]) -> Stat:
    """One pair: its runs' spread; several: the spread of the pairs' medians."""
    return pairs[0] if len(pairs) == 1 else Stat.of([s.median for s in pairs])


def to_profile(r: ProbeResult, name: str = "probed", topo: Topology | None = None
               ) -> MachineProfile:
    """The profile of this machine: its topology, measured priors and generic ones."""
    topo = topo or topology()
    generic, curves = load_priors(), load_curves()
    ghz = r.core_ghz.median
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    src = (f"memcglab probe on {platform.node() or 'this machine'} ({_cpu_model()}), {when}; "
           f"CPUs {','.join(map(str, r.cpus))}")
    pri: dict[str, Prior] = {
        "cpu_ghz": _narrow(generic["cpu_ghz"], r.core_ghz, None, clock_note(r), src,
                           cut=False),
        "l1_hit": _narrow(generic["l1_hit"], r.local_ns["l1"], ghz,
                          "pointer chase in a 4 KiB ring, one load per line", src),
        "percpu_rmw": _narrow(generic["percpu_rmw"], r.local_ns["rmw"], ghz,
                              "dependent addq to one L1 line", src),
        "atomic_rmw": _narrow(generic["atomic_rmw"], r.local_ns["atomic"], ghz,
                              "dependent lock xaddq on one L1 line", src),
        "smt_per_core": Prior("smt_per_core", "threads", topo.smt, topo.smt, topo.smt,
                              "point", f"{src}; sysfs topology"),
    }
    groups = _pair_groups(r, topo)
    for key, pname in (("socket", "c2c_transfer"), ("cross", "c2c_transfer_cross_socket")):
        if groups[key]:
            what = ("one CPU pair's runs" if len(groups[key]) == 1 else
                    f"the medians of {len(groups[key])} CPU pairs")
            pri[pname] = _narrow(generic[pname], _over_pairs(groups[key]), ghz,
                                 f"ping-pong one-way latency over {what} (includes the load "
                                 "the model prices as l1_hit)", src)
    if not groups["socket"] and groups["core"]:
        s = _over_pairs(groups["core"])
        pri["c2c_transfer"] = _narrow(generic["c2c_transfer"], s, ghz,
                                      "SMT siblings only (share L1; a lower bound)", src)
    own_curves, slope = _contention(r, ghz, curves["contended_rmw"], src)
    if slope is not None:
        pri["contended_rmw_per_sharer"] = slope
    facts = {"cpus": topo.cpus, "sockets": topo.sockets, "cores": topo.cores,
             "smt": topo.smt, "ghz": pri["cpu_ghz"].typical}
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    base = MachineProfile(name=name, priors=dict(generic), curves=dict(curves),
                          model=_cpu_model(), memory_gb=round(mem, 1), inferred=(),
                          source=src, note=_note(r), **facts)
    why = chains_disagree(r)
    if why is not None:
        raise HardwareDataError("the probe's measurements", "priors.cpu_ghz", f": {why}")
    for n, p in pri.items():  # a figure outside the plausible range is not a measurement
        prior_from_table("the probe's measurements", n, prior_to_table(p))
    return base.with_priors(pri, own_curves)


def clock_note(r: ProbeResult) -> str:
    """Which chain the clock is, the other chains and the OS's figures beside it."""
    ghz = r.core_ghz.median
    parts = ["core clock from dependent register-register adds, one cycle each (the "
             "clock used)"]
    if r.imul_ghz is not None:
        parts.append(f"cross-check: dependent 3-cycle imuls read {r.imul_ghz.median:.3f} GHz "
                     f"({r.imul_ghz.median / ghz:.3f}x)")
    if r.imm_ghz is not None:
        imm = r.imm_ghz.median
        folds = imm > 1.5 * ghz
        parts.append(f"immediate adds read {imm:.3f} GHz ({imm / ghz:.3f}x"
                     + ("; this core folds them in the renamer" if folds else "") + ")")
    parts.append(f"TSC {r.tsc_ghz.median:.3f} GHz")
    if r.os_ghz:
        top = max(r.os_ghz.values())
        parts.append("OS: " + ", ".join(f"{k} {v:.3f} GHz" for k, v in r.os_ghz.items())
                     + f"; the clock used is {ghz / top:.3f}x the highest of them"
                     + (" (a VM's cpu MHz is often the nominal or TSC rate; turbo runs "
                        "above it)" if ghz > top else ""))
    else:
        parts.append("the OS reports no clock")
    return "; ".join(parts)


def _contention(r: ProbeResult, ghz: float, generic: Curve, src: str
                ) -> tuple[dict[str, Curve], Prior | None]:
    xs = sorted(r.contend_ns)
    st = [r.contend_ns[x] for x in xs]
    curve = Curve("contended_rmw", "ns", tuple(xs),
                  tuple(_sig(max(s.median - s.half_iqr, 0.0)) for s in st),
                  tuple(_sig(s.median) for s in st), tuple(_sig(s.median + s.half_iqr)
                                                            for s in st),
                  generic.shape, src,
                  "wall time over all threads' lock xaddq on one line, median of "
                  f"{st[0].n} runs per point, +- the wider half of the IQR; least share of "
                  "the window a thread was on its CPU: " + ", ".join(
                      f"{x}: {r.contend_oncpu.get(x, 1.0):.2f}" for x in xs)
                  + ("" if min(r.contend_oncpu.values(), default=1.0) >= 0.9 else
                     " (below 0.9: the machine was busy and those points overstate the "
                     "hardware's cost)"))
    many = [x for x in xs if x >= 2]
    if len(many) < 3:
        return {"contended_rmw": curve}, None
    fit = stats.linregress(many, [r.contend_ns[x].median * ghz for x in many])
    slope = max(float(fit.slope), 0.0)
    base = load_priors()["contended_rmw_per_sharer"]
    p = base.narrowed(slope, float(fit.stderr), src)
    return {"contended_rmw": curve}, replace(
        p, note=f"slope of cycles per op vs sharers {many[0]}..{many[-1]}, least squares "
                f"(standard error {fit.stderr:.3g}); clamped at 0")


def _note(r: ProbeResult) -> str:
    try:
        load = Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        load = "unknown"
    return (f"Load average {load} when written. Measured by memcglab probe with "
            f"{r.plan.reps} runs per value "
            f"({r.plan.pingpong_iters} round trips per ping-pong run); "
            f"ns -> cycles at the core clock {r.core_ghz.describe('GHz')} ({clock_note(r)}). "
            "Unmeasured priors (slot_compare, stock_lock, call, random_u32, "
            "other_cycles_per_packet) are the generic ones.")
