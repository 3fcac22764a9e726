"""Nuisance inputs set by the repository's data, not by a wide prior: one place for each.

A price's interval is only as narrow as its widest nuisance input. ``other_cycles``, the
work outside memcg per netperf message, has a hardware prior spanning 3,000-80,000
cycles, and that span decided several verdicts. The repository holds data that
constrain it:

* **the published absolute throughput**: in "memcg: multi-memcg percpu charge cache"
  (Shakeel Butt, April 2025) one flow moves 48,603 Mbit/s of 10 KiB messages without the
  multi stock at 6 clients, where no shared line is busy and every flow has cores of its
  own. A message then takes ``T = 10240 * 8 / (Mbps * 1e6)`` seconds on the flow's
  busiest CPU, so ``other_cycles = T * cpu_ghz * 1e9 / busiest_cpu_share`` (less the
  charge path's few hundred cycles, which :func:`netperf_other_cycles` leaves in: they are
  below 3% of it). The clock is the profile's prior and the busiest CPU's share study 1's
  registered alternatives (``data/preregistration/study01.toml``: one to three CPUs per
  flow, evenly or two-thirds on one); the 5%, 50% and 95% points of that spread become a
  triangular prior. Study 1 fits the same quantity on the whole "without" column.
* **the development-set calibration** (``data/calibration/default.json``, read through
  :func:`memcglab.calibration.files.load_calibration`): the posterior of the work outside
  memcg per cost family, fitted on the development set's absolute throughputs, gives
  ``other_cycles`` of a 10 KiB TCP message (:func:`calibrated`); where it has the workload
  it comes first, on any machine. A study that judges a measurement passes that
  measurement's source in ``avoid``, and a calibration fitted on it is not used.

Without the calibration, only the machine the published throughput was measured on is
constrained: a profile other than ``butt-netperf-72cpu`` keeps its prior
(:func:`other_cycles_for`).

>>> from memcglab.hardware import load_profile
>>> p = netperf_other_cycles(load_profile("butt-netperf-72cpu"))
>>> p.name, p.shape, 3000 < p.low < p.typical < p.high < 30000
('other_cycles', 'triangular', True)
"""

from __future__ import annotations

import itertools
import tomllib
from functools import cache

import numpy as np

from memcglab.hardware import MachineProfile
from memcglab.published import load
from memcglab.resources import data_dir
from memcglab.uncertainty import Prior, Space

__all__ = ["CALIBRATED_WORK", "CONSTRAINED_PROFILE", "calibrated", "constrained", "describe",
           "netperf_other_cycles", "other_cycles_for"]

#: the machine the published throughputs were measured on
CONSTRAINED_PROFILE = "butt-netperf-72cpu"
_BITS = 10240 * 8


def _variants() -> tuple[tuple[float, ...], tuple[str, ...]]:
    doc = tomllib.loads((data_dir() / "preregistration" / "study01.toml").read_text())
    v = doc["variants"]
    return tuple(float(x) for x in v["cpus_per_flow"]), tuple(v["busiest_cpu_share"])


def _share(cpf: float, how: str) -> float:
    return 1.0 / cpf if how == "even" else max(1.0 / cpf, 2.0 / 3.0)


@cache
def _implied(ghz_prior: Prior) -> tuple[float, float, float]:
    table = load("seed000_netperf").frame.sort_values("clients")
    mbps = float(table["without_mbps"].iloc[0])
    seconds = _BITS / (mbps * 1e6)
    ghz = ghz_prior.ppf((np.arange(512) + 0.5) / 512)
    cpfs, hows = _variants()
    values = np.concatenate([seconds * ghz * 1e9 / _share(c, h)
                             for c, h in itertools.product(cpfs, hows)])
    lo, mid, hi = np.quantile(values, [0.05, 0.5, 0.95])
    return float(lo), float(mid), float(hi)


def netperf_other_cycles(profile: MachineProfile) -> Prior:
    """``other_cycles`` per 10 KiB netperf message implied by the published "without"
    throughput at the fewest clients (module doc), with ``profile``'s clock prior."""
    lo, mid, hi = _implied(profile.priors["cpu_ghz"])
    return Prior("other_cycles", "cycles", lo, mid, hi, "triangular",
                 "memcg: multi-memcg percpu charge cache (Shakeel Butt, April 2025): 'without' "
                 "per-flow Mbit/s at 6 clients, converted with the clock prior and study 1's "
                 "registered CPUs per flow and busiest-CPU shares",
                 "the 5%, 50% and 95% points of the implied cycles per message")


#: the calibration's cost family, its unit and the units per operation of each workload a
#: study prices (memcglab.scenario.work: cycles = fixed + per unit x units)
CALIBRATED_WORK: dict[str, tuple[str, str, float]] = {
    "netperf_rx": ("tcp_stream", "byte", 10240.0),  # netperf TCP_SENDFILE -m 10K
}


def calibrated(workload: str, avoid: tuple[str, ...] = ()) -> Prior | None:
    """``other_cycles`` of ``workload`` from the development-set calibration
    (``memcglab.calibration.files.load_calibration("default")``): the 5%, 50% and 95%
    points of ``fixed + per unit x units`` over the posterior, as a triangular prior.
    None when the workload has no cost family there, when no default calibration ships,
    or when the calibration was fitted on a case of a source in ``avoid`` (case names
    start with it): a measurement is never judged by inputs fitted to it."""
    if workload not in CALIBRATED_WORK:
        return None
    from memcglab.calibration.files import CalibrationFileError, load_calibration

    try:
        cf, label = load_calibration("default")
    except CalibrationFileError:
        return None
    cal = cf.calibration
    if any(case.startswith(a) for case in cal.cases for a in avoid):
        return None
    family, unit, units = CALIBRATED_WORK[workload]
    fixed, per = f"fixed_cycles:{family}", f"unit_cycles:{unit}"
    if fixed not in cal.names or per not in cal.names:
        return None
    draws = cal.sample(4096, seed=0)
    lo, mid, hi = np.quantile(draws[fixed] + draws[per] * units, [0.05, 0.5, 0.95])
    return Prior("other_cycles", "cycles", float(lo), float(mid), float(hi), "triangular",
                 f"development-set calibration ({label}): {fixed} + {per} x {units:g}",
                 "the 5%, 50% and 95% points over the posterior")


def other_cycles_for(profile: MachineProfile, workload: str, prior: Prior,
                     avoid: tuple[str, ...] = ()) -> Prior:
    """The ``other_cycles`` a price of ``workload`` on ``profile`` draws: the calibration's
    when it has the workload (and was not fitted on a source in ``avoid``), else the
    published throughput's for netperf on the machine it was measured on, else ``prior``."""
    cal = calibrated(workload, avoid)
    if cal is not None:
        return cal
    if workload == "netperf_rx" and profile.name == CONSTRAINED_PROFILE:
        return netperf_other_cycles(profile)
    return prior


def constrained(space: Space, profile: MachineProfile, workload: str,
                avoid: tuple[str, ...] = ()) -> Space:
    """``space`` with its ``other_cycles`` prior replaced by :func:`other_cycles_for`'s."""
    priors = [other_cycles_for(profile, workload, p, avoid) if p.name == "other_cycles"
              else p for p in space.priors]
    return Space(priors, list(space.alternatives),
                 seeds=[] if not space.seeds else list(space.seeds))


def describe(prior: Prior) -> str:
    """Where an ``other_cycles`` prior comes from, in a few words for a sentence."""
    if prior.source.startswith("development-set calibration"):
        return "the development-set calibration"
    if prior.source.startswith("memcg: multi-memcg percpu charge cache"):
        return "the published netperf throughput"
    return "the machine profile's prior"
