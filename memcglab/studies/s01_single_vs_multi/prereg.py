"""Study 1's pre-registration, read from ``data/preregistration/study01.toml``.

The registration (``study01.md`` in words, ``study01.toml`` for the code, both pinned by
SHA-256 in ``tests/studies/test_study01_prereg.py``) fixes, before the "with" column is
read: the trace, what is fitted on "without" and within which bounds, the priors
propagated (values as registered; the hardware ones checked against ``data/hardware``),
the modelling variants and the scoring. This module turns it into Python values and
the :class:`~memcglab.uncertainty.Space` the prediction is propagated over.

>>> r = load_prereg()
>>> r.clients, r.fit_names, len(r.variant_grid())
((6, 12, 18, 24, 30, 36), ('other_cycles', 'c2c_cycles'), 48)
>>> r.space(seeds=(0,)).varying[:4]
('cpu_ghz', 'c2c_transfer_cross_socket', 'contended_rmw_per_sharer', 'smt_gain')
"""

from __future__ import annotations

import hashlib
import itertools
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcglab.resources import data_dir
from memcglab.uncertainty import Alternative, Prior, Space

__all__ = ["Study01Prereg", "load_prereg", "prereg_path", "FITTED", "REGISTERED_FIT",
           "TRACE_VARIANTS"]

#: the variants that change the trace (the rest act on the queueing model only)
TRACE_VARIANTS: tuple[str, ...] = ("release", "ancestors")
#: the fitted parameters as the registration names them (study01.toml's fit.parameters).
#: The registration is pinned by SHA-256 and cannot be renamed; ``c2c_cycles`` is the
#: hold time of a within-socket shared-line transfer, which the pricing core calls
#: ``hold_cycles``: :data:`FITTED` maps the names, here at the boundary and nowhere else
REGISTERED_FIT: tuple[str, ...] = ("other_cycles", "c2c_cycles")
#: registered name -> the pricing core's (memcglab.pricing.INPUTS)
FITTED: dict[str, str] = dict(zip(REGISTERED_FIT, ("other_cycles", "hold_cycles"),
                                  strict=True))


def prereg_path() -> Path:
    """``data/preregistration/study01.toml`` (installed or in a checkout)."""
    return data_dir() / "preregistration" / "study01.toml"


@dataclass(frozen=True)
class Study01Prereg:
    """The registration's values; ``sha256`` identifies the file that fixed them.

    ``fit_names`` are the registration's names (:data:`REGISTERED_FIT`); the fit itself
    (:mod:`memcglab.stats.netperf_fit`) speaks the pricing core's (:data:`FITTED`).
    """

    sha256: str
    clients: tuple[int, ...]
    trace: dict[str, Any]
    fit_names: tuple[str, ...]
    x0: tuple[float, ...]
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    priors: tuple[Prior, ...]
    variants: dict[str, tuple[Any, ...]]
    topology: dict[str, dict[str, float]]
    scoring: dict[str, Any]

    @property
    def without_model(self) -> str:
        """The engine model of the "without" column (the v6.15 single stock)."""
        return str(self.trace["without_model"])

    @property
    def with_model(self) -> str:
        """The engine model of the "with" column (the multi stock)."""
        return str(self.trace["with_model"])

    def seeds(self, quick: bool) -> tuple[int, ...]:
        """Trace seeds: the quick or the full set."""
        return tuple(self.trace["seeds_quick" if quick else "seeds_full"])

    def messages(self, quick: bool) -> int:
        """Messages per trace: the quick or the full length."""
        return int(self.trace["messages_quick" if quick else "messages_full"])

    def samples(self, quick: bool) -> int:
        """Points of the joint sample (a power of 2)."""
        return int(self.scoring["samples_quick" if quick else "samples_full"])

    def space(self, seeds: tuple[int, ...]) -> Space:
        """The priors, the variants (first option the default) and ``seeds``, jointly."""
        alts = [Alternative(k, tuple(v)) for k, v in self.variants.items()]
        return Space(self.priors, alts, seeds)

    def variant_grid(self) -> list[dict[str, Any]]:
        """Every combination of the variants, the default first."""
        names = list(self.variants)
        return [dict(zip(names, combo, strict=True))
                for combo in itertools.product(*self.variants.values())]

    def trace_keys(self, seeds: tuple[int, ...]) -> list[tuple[Any, ...]]:
        """Every (release, ancestors, seed) the variants and seeds need a trace for."""
        return list(itertools.product(*(self.variants[k] for k in TRACE_VARIANTS), seeds))


def _prior(name: str, t: dict[str, Any]) -> Prior:
    return Prior(name, t["unit"], float(t["low"]), float(t["typical"]), float(t["high"]),
                 t["shape"], t.get("source", t["from"]), t.get("note", ""))


def load_prereg(path: str | Path | None = None) -> Study01Prereg:
    """Read and check the registration (default :func:`prereg_path`)."""
    p = Path(path) if path is not None else prereg_path()
    raw = p.read_bytes()
    doc = tomllib.loads(raw.decode())
    if doc.get("schema") != 1 or doc.get("study") != "01":
        raise ValueError(f"{p}: schema={doc.get('schema')!r}, study={doc.get('study')!r}: "
                         "need schema 1 and study '01'")
    fit = doc["fit"]
    names = tuple(fit["parameters"])
    if names != REGISTERED_FIT:
        raise ValueError(f"{p}: fit.parameters={list(names)}: this study fits "
                         f"{' and '.join(REGISTERED_FIT)}")
    lo, hi, x0 = (tuple(float(v) for v in fit[k]) for k in ("lower", "upper", "x0"))
    if not all(a < x < b for a, x, b in zip(lo, x0, hi, strict=True)):
        raise ValueError(f"{p}: fit x0={x0} must lie strictly inside lower={lo}, upper={hi}")
    topo = {k: dict(v) for k, v in doc["topology"].items()}
    variants = {k: tuple(v) for k, v in doc["variants"].items()}
    missing = set(variants["topology"]) - set(topo)
    if missing:
        raise ValueError(f"{p}: variants.topology names {sorted(missing)} without a "
                         "[topology.NAME] table")
    return Study01Prereg(
        sha256=hashlib.sha256(raw).hexdigest(), clients=tuple(doc["trace"]["clients"]),
        trace=dict(doc["trace"]), fit_names=names, x0=x0, lower=lo, upper=hi,
        priors=tuple(_prior(k, v) for k, v in doc["priors"].items()),
        variants=variants, topology=topo, scoring=dict(doc["scoring"]))
