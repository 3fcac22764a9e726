"""One function for every verdict word: :func:`judge`, by the rules and their addendum.

The rule kinds, their words and their conditions are declared in
``data/preregistration/verdict_rules_addendum_2026-12-01.md`` (read with the base rules by
:func:`memcglab.stats.verdict_rules.load_rules`). The subject of every verdict is the
model. A measurement is a :class:`Measurement`, widened by its noise; a prediction is
anything with ``low``, ``high``, ``sources`` and ``coverage`` (and optionally
``samples``, the predictive draws): a :class:`memcglab.uncertainty.UncertainResult`, or a
hand-made namespace. Every word in the report and the claims table comes from here.

>>> from types import SimpleNamespace as N
>>> iv = N(low=0.5, high=1.5, sources={"parameters"}, coverage=0.9)
>>> v = judge("measured", measured=Measurement.point(4.38, 1.2, "%"), interval=iv)
>>> v.word, v.reason.split(" the measurement")[0]
('misses', 'the 90% interval [0.5, 1.5] lies 1.68 below')
>>> judge("prediction", interval=N(low=-40.0, high=-3.0, sources={"parameters"},
...                                coverage=0.9)).prediction
'loss beyond 2%'
>>> judge("exact", computed=136, published=0x88).word
'matches'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import numpy as np

from memcglab.stats.verdict_rules import Rules, load_rules

__all__ = ["Measurement", "Take", "Verdict", "format_p", "judge", "p_inside"]


def _g(x: float) -> str:
    if not math.isfinite(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def _fmt(a: float, b: float) -> str:
    return f"[{_g(a)}, {_g(b)}]"


@dataclass(frozen=True)
class Measurement:
    """A measured value or band, and the noise its source states (absolute half-width).

    ``noise=None`` takes the rules' default relative noise; ``widened`` gives a derived
    quantity's band already widened (interval arithmetic over its inputs), ``noise_text``
    how that noise was found (for the study's words); ``low``/``high`` may be open
    (``-inf``, ``inf``) for a one-sided band.

    >>> [round(x, 2) for x in Measurement.point(4.38, 1.2, "%").band(load_rules())]
    [3.18, 5.58]
    >>> Measurement.point(100.0, unit="Mbps").text(load_rules())
    '100 Mbps ± 5 (default 5%)'
    >>> Measurement(145.0, 145.0, unit="%", widened=(122.0, 171.0)).text(load_rules())
    '145% [122, 171]'
    """

    low: float
    high: float
    noise: float | None = None
    unit: str = ""
    widened: tuple[float, float] | None = None
    noise_text: str = ""

    @classmethod
    def point(cls, value: float, noise: float | None = None, unit: str = "",
              noise_text: str = "") -> Measurement:
        """A measured point with its stated noise (None: the declared default)."""
        return cls(float(value), float(value), noise, unit, None, noise_text)

    def __post_init__(self) -> None:
        lo, hi = float(self.low), float(self.high)
        if math.isnan(lo) or math.isnan(hi) or lo > hi or (lo == -math.inf and hi == math.inf):
            raise ValueError(f"measurement [{lo}, {hi}]: need low <= high, not NaN, at "
                             "least one side finite")
        if self.noise is not None and not (math.isfinite(self.noise) and self.noise >= 0):
            raise ValueError(f"measurement noise={self.noise!r}: must be a finite number >= 0")

    def _noise(self, rules: Rules) -> float:
        if self.noise is not None:
            return float(self.noise)
        finite = [abs(v) for v in (self.low, self.high) if math.isfinite(v)]
        return rules.default_relative_noise * max(finite)

    def band(self, rules: Rules) -> tuple[float, float]:
        """The measurement widened by its noise (``widened`` when given)."""
        if self.widened is not None:
            return float(self.widened[0]), float(self.widened[1])
        e = self._noise(rules)
        return self.low - e, self.high + e

    def text(self, rules: Rules) -> str:
        """``"4.38% ± 1.2"``: the measurement as a reader sees it, with its noise."""
        u = self.unit if self.unit.startswith("%") or not self.unit else f" {self.unit}"
        if self.low == self.high:
            head = f"{_g(self.low)}{u}"
        elif self.high == math.inf:
            head = f">= {_g(self.low)}{u}"
        elif self.low == -math.inf:
            head = f"<= {_g(self.high)}{u}"
        else:
            head = f"{_g(self.low)}-{_g(self.high)}{u}"
        if self.widened is not None:
            return f"{head} {_fmt(*self.widened)}"
        if self.noise is None:
            e = self._noise(rules)
            return f"{head} ± {_g(e)} (default {rules.default_relative_noise:.0%})"
        return f"{head} ± {_g(self.noise)}" if self.noise else head

    def magnitude(self) -> float:
        """The measured magnitude, ``max(|low|, |high|)`` over the finite sides."""
        return max(abs(v) for v in (self.low, self.high) if math.isfinite(v))


@dataclass(frozen=True)
class Take:
    """What it would take: the value of input ``name`` at which the model reaches the
    measured value, its other inputs typical (``value=None``: no value in ``searched``)."""

    name: str
    unit: str
    value: float | None
    prior: tuple[float, float] | None = None
    infeasible: str = ""
    searched: tuple[float, float] | None = None

    def text(self) -> str:
        """``"c2c_transfer = 1770 cycles (outside its prior 45-350; infeasible: ...)"``."""
        if self.value is None:
            where = f" in {_g(self.searched[0])}-{_g(self.searched[1])} {self.unit}" \
                if self.searched else ""
            return f"{self.name}: no value{where} reaches it"
        notes = []
        if self.prior is not None:
            lo, hi = self.prior
            inside = lo <= self.value <= hi
            notes.append(f"{'inside' if inside else 'outside'} its prior "
                         f"{_g(lo)}-{_g(hi)}")
        if self.infeasible:
            notes.append(f"infeasible: {self.infeasible}")
        tail = f" ({'; '.join(notes)})" if notes else ""
        return f"{self.name} = {_g(self.value)} {self.unit}{tail}"


@dataclass(frozen=True)
class Verdict:
    """One verdict: its word (None for a prediction), its reason, the rule kind, the
    rules' SHA-256, and what the row prints beside it."""

    word: str | None
    reason: str
    rule: str
    rules_sha256: str
    p_holds: float | None = None
    p_text: str = ""
    prediction: str | None = None
    would_take: str | None = None
    band: tuple[float, float] | None = None

    def __str__(self) -> str:
        return f"{self.word or self.prediction}: {self.reason}"


def p_inside(samples: Any, low: float, high: float) -> float:
    """P(holds): the share of the predictive draws inside ``[low, high]`` (inclusive).

    >>> p_inside([0.0, 1.0, 2.0, 3.0], 1.0, 2.0)
    0.5
    """
    y = np.asarray(samples, dtype=float)
    if y.ndim != 1 or y.size == 0 or not np.all(np.isfinite(y)):
        raise ValueError(f"samples: need a non-empty 1-D array of finite draws, got shape "
                         f"{y.shape}")
    return float(((y >= low) & (y <= high)).mean())


def format_p(p: float | None, n: int | None) -> str:
    """P(holds) as printed: ``"0.83"``; ``"< 1/1024"`` when no draw falls inside; ``"—"``.

    >>> format_p(0.834, 1024), format_p(0.0, 1024), format_p(1.0, 512), format_p(None, 9)
    ('0.83', '< 1/1024', '1.00', '—')
    """
    if p is None:
        return "—"
    if p == 0.0:
        return f"< 1/{n}" if n else "< 1/n"
    return f"{p:.2f}" if p >= 0.005 or not n else f"{p:.2g}"


def _apart(lo: float, hi: float, b: tuple[float, float], touching: bool) -> bool:
    return (hi < b[0] or lo > b[1]) if touching else (hi <= b[0] or lo >= b[1])


def _interval(iv: Any) -> tuple[float, float, frozenset[str], np.ndarray | None]:
    lo, hi = float(iv.low), float(iv.high)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise ValueError(f"predicted interval {_fmt(lo, hi)}: need finite low <= high")
    samples = getattr(iv, "samples", None)
    return lo, hi, frozenset(iv.sources), None if samples is None else np.asarray(samples)


def _check_coverage(r: Rules, iv: Any) -> None:
    if abs(float(iv.coverage) - r.coverage) > 1e-9:
        raise ValueError(f"coverage={iv.coverage}: the rules in {r.path} (field coverage) "
                         f"judge {r.coverage:g} intervals only")


def _gap(lo: float, hi: float, b: tuple[float, float]) -> str:
    if hi < b[0]:
        return f"lies {_g(b[0] - hi)} below"
    return f"lies {_g(lo - b[1])} above"


def _measured(r: Rules, rule: str, measured: Measurement, interval: Any,
              tolerance: float | None = None, difference: bool = False,
              alternatives: Mapping[str, tuple[float, float]] | None = None,
              degenerate: str | None = None, would_take: Sequence[Take] = (),
              prefix: str = "") -> Verdict:
    v = _measured_pooled(r, rule, measured, interval, tolerance, difference, alternatives,
                         degenerate, would_take, prefix)
    if not alternatives or v.reason.startswith(("degenerate", "seed-only")):
        return v
    each = {k: _measured_pooled(r, rule, measured, SimpleNamespace(
        low=a, high=b, sources=interval.sources, coverage=interval.coverage), tolerance,
        difference).word for k, (a, b) in alternatives.items()}
    if len(set(each.values())) < 2:
        return v
    listed = "; ".join(f"{k} {_fmt(*alternatives[k])}: {w}" for k, w in each.items())
    return Verdict(v.word, f"{v.reason}; the alternatives disagree ({listed})", v.rule,
                   v.rules_sha256, v.p_holds, v.p_text, None, v.would_take, v.band)


def _measured_pooled(r: Rules, rule: str, measured: Measurement, interval: Any,
                     tolerance: float | None = None, difference: bool = False,
                     alternatives: Mapping[str, tuple[float, float]] | None = None,
                     degenerate: str | None = None, would_take: Sequence[Take] = (),
                     prefix: str = "") -> Verdict:
    _check_coverage(r, interval)
    lo, hi, sources, samples = _interval(interval)
    b = measured.band(r)
    p = p_inside(samples, *b) if samples is not None else None
    n = None if samples is None else int(samples.size)
    pred = f"the {r.coverage:.0%} interval {_fmt(lo, hi)}"
    where = f"the claim's band {_fmt(*b)}" if rule == "qualitative" else \
        f"the measurement widened by its noise {_fmt(*b)}"

    def out(word: str, reason: str, take: bool = False) -> Verdict:
        t = "; ".join(x.text() for x in would_take) if take and would_take else None
        return Verdict(word, prefix + reason, rule, r.sha256, p, format_p(p, n), None, t, b)

    if degenerate or lo == hi:
        why = degenerate or f"the interval has zero width ({_g(lo)})"
        v = out("undetermined", f"degenerate: {why}; a quantity fixed by construction "
                                "is not a check")
        return Verdict(v.word, v.reason, rule, r.sha256, None, "", None, None, b)
    missing = r.required_sources - sources
    if missing:
        return out("undetermined", f"seed-only: {pred} carries no "
                                   f"{', '.join(sorted(missing))} uncertainty")
    if _apart(lo, hi, b, r.touching_overlaps):
        alts = alternatives or {}
        escape = [k for k, (a, c) in alts.items() if not _apart(a, c, b, r.touching_overlaps)]
        if escape:
            return out("undetermined", f"{pred} {_gap(lo, hi, b)} {where}, but not under "
                                       f"{', '.join(escape)}: misses except there")
        under = f" and under each of {len(alts)} alternatives' options" if alts else ""
        return out("misses", f"{pred} {_gap(lo, hi, b)} {where}{under}", take=True)
    tol = float(tolerance) if tolerance is not None else \
        r.default_tolerance_share * measured.magnitude()
    limit = r.informative_width_ratio * tol
    if hi - lo > limit:
        return out("undetermined", f"too wide: {pred} overlaps {where} but is "
                                   f"{_g(hi - lo)} wide, more than "
                                   f"{r.informative_width_ratio:g} x the tolerance {_g(tol)}")
    if difference and not b[0] <= 0 <= b[1] and lo <= 0 <= hi:
        return out("undetermined", f"too wide: {pred} overlaps {where} but includes zero, "
                                   "so the sign is not settled")
    return out("agrees", f"{pred} overlaps {where} and is informative (width {_g(hi - lo)} "
                         f"<= {r.informative_width_ratio:g} x tolerance {_g(tol)})")


def _combine(r: Rules, rule: str, parts: Mapping[str, Verdict], head: str,
             p: float | None, n: int | None, any_miss: bool) -> Verdict:
    words = {k: v.word for k, v in parts.items()}
    agree, miss = r.words[rule][0], r.words[rule][1]
    if all(w == agree for w in words.values()):
        word = agree
    elif (any_miss and miss in words.values()) or all(w == miss for w in words.values()):
        word = miss
    else:
        word = r.words[rule][2]
    each = "; ".join(f"{k}: {v.word} ({v.reason})" for k, v in parts.items())
    takes = [f"{k}: {v.would_take}" for k, v in parts.items() if v.would_take]
    return Verdict(word, f"{head}{each}", rule, r.sha256, p, format_p(p, n), None,
                   "; ".join(dict.fromkeys(takes)) or None)


def _qualitative(r: Rules, operationalised: str, differences: str,
                 configurations: Mapping[str, Mapping[str, Any]]) -> Verdict:
    if not operationalised or not differences:
        raise ValueError("a qualitative claim needs operationalised (how the lab makes it a "
                         "number) and differences (the author's setup against the lab's)")
    if not configurations:
        raise ValueError("a qualitative claim needs at least one configuration")
    parts = {k: _measured(r, "qualitative", **kw) for k, kw in configurations.items()}
    head = f"made a number as {operationalised}; setups differ: {differences}; "
    if len(parts) == 1:
        v = next(iter(parts.values()))
        return Verdict(v.word, head + v.reason, "qualitative", r.sha256, v.p_holds, v.p_text,
                       None, v.would_take, v.band)
    ps = [v.p_holds for v in parts.values() if v.p_holds is not None]
    p = min(ps) if len(ps) == len(parts) else None
    sizes = [np.size(kw["interval"].samples) for kw in configurations.values()
             if getattr(kw["interval"], "samples", None) is not None]
    return _combine(r, "qualitative", parts, head + "P(holds) is the least over them; ", p,
                    min(sizes) if sizes else None, any_miss=False)


def _shape(r: Rules, points: Mapping[str, Mapping[str, Any]], power: float,
           monotonic_share: float | None, n: int | None) -> Verdict:
    if not points:
        raise ValueError("a shape claim needs at least one point (the last, normalised to 1 "
                         "by construction, is left out)")
    if not 0.0 <= power <= 1.0:
        raise ValueError(f"power={power!r}: the share of prior-predictive draws that pass "
                         "must lie in [0, 1]")
    parts = {}
    for k, kw in points.items():
        m = kw["measured"]
        lo, hi = m.band(r)
        wide = Measurement(m.low, m.high, m.noise, m.unit,
                           (lo - r.shape_tolerance, hi + r.shape_tolerance), m.noise_text)
        parts[k] = _measured(r, "shape", **{**kw, "measured": wide,
                                            "tolerance": r.shape_tolerance})
    mono = "" if monotonic_share is None else \
        f"; the monotonicity check it replaces passes {monotonic_share:.1%} of them"
    head = (f"normalised curve (each point +-{r.shape_tolerance:g} and its noise); power: "
            f"{power:.1%} of the model's prior-predictive draws pass{mono}; ")
    return _combine(r, "shape", parts, head, power, n, any_miss=True)


def _phrase(lo: float, hi: float, m: float, words: tuple[str, str]) -> str:
    if hi < -m:
        return f"{words[0]} beyond {m:g}%"
    if lo > m:
        return f"{words[1]} beyond {m:g}%"
    if -m <= lo and hi <= m:
        return f"within ±{m:g}%"
    return f"no prediction (the interval spans ±{m:g}%)"


def _prediction(r: Rules, interval: Any, margin: float | None = None,
                words: tuple[str, str] = ("loss", "gain"),
                alternatives: Mapping[str, tuple[float, float]] | None = None,
                degenerate: str | None = None) -> Verdict:
    _check_coverage(r, interval)
    lo, hi, sources, _ = _interval(interval)
    m = float(margin) if margin is not None else r.default_margin_pct
    pred = f"the {r.coverage:.0%} interval {_fmt(lo, hi)}"

    def out(phrase: str, reason: str) -> Verdict:
        return Verdict(None, reason, "prediction", r.sha256, None, "", phrase)

    if degenerate or lo == hi:
        why = degenerate or f"the interval has zero width ({_g(lo)})"
        return out(f"no prediction (zero by construction: {why})",
                   f"degenerate: {why}; nothing is predicted")
    if r.required_sources - sources:
        return out("no prediction (seed noise only)", f"seed-only: {pred} carries no "
                                                      "parameter uncertainty")
    each = {k: _phrase(a, b, m, words) for k, (a, b) in (alternatives or {}).items()}
    if len(set(each.values())) > 1:
        listed = "; ".join(f"{k}: {v}" for k, v in each.items())
        return out(f"no prediction (the alternatives disagree: {listed})",
                   f"{pred} pools modelling alternatives whose own intervals disagree "
                   f"({listed}); a pooled interval counts options, not evidence")
    return out(_phrase(lo, hi, m, words), f"{pred} against the margin ±{m:g}%")


def judge(rule: str, *, rules: Rules | str | None = None, **kw: Any) -> Verdict:
    """The verdict on one claim under rule kind ``rule`` (module doc; the addendum).

    * ``"measured"``: ``measured`` (:class:`Measurement`), ``interval``; optional
      ``tolerance`` (the claim's; default half the measured magnitude), ``difference``
      (a sign to settle), ``alternatives`` (label -> the interval of that option's draws),
      ``degenerate`` (why the quantity is fixed by construction), ``would_take``
      (:class:`Take` list, printed with a miss);
    * ``"qualitative"``: ``operationalised``, ``differences`` and ``configurations``
      (label -> the ``measured`` keywords of one configuration);
    * ``"shape"``: ``points`` (label -> ``measured`` keywords, the normalised curve),
      ``power``, optionally ``monotonic_share`` and ``n`` (draws);
    * ``"prediction"``: ``interval``; optional ``margin``, ``words`` (the two directions),
      ``alternatives``, ``degenerate``;
    * ``"exact"``: ``computed``, ``published``, optional ``comparable`` and ``config``;
    * ``"goal"``: ``met`` and ``goal`` (its registered words);
    * ``"port"``: ``shown`` and ``condition`` (what was counted against what).
    """
    r = rules if isinstance(rules, Rules) else load_rules(rules)
    if rule not in r.words:
        raise ValueError(f"rule={rule!r}: must be one of {', '.join(r.words)}")
    try:
        if rule == "measured":
            return _measured(r, "measured", **kw)
        if rule == "qualitative":
            return _qualitative(r, **kw)
        if rule == "shape":
            return _shape(r, kw.pop("points"), kw.pop("power"), kw.pop("monotonic_share", None),
                          kw.pop("n", None), **kw)
        if rule == "prediction":
            return _prediction(r, **kw)
    except TypeError as e:
        raise ValueError(f"judge({rule!r}): {e}") from None
    return _simple(r, rule, **kw)


def _simple(r: Rules, rule: str, **kw: Any) -> Verdict:
    def out(i: int, reason: str) -> Verdict:
        return Verdict(r.words[rule][i], reason, rule, r.sha256)

    need = {"exact": {"computed", "published"}, "goal": {"met", "goal"},
            "port": {"shown", "condition"}}[rule]
    allowed = need | ({"comparable", "config"} if rule == "exact" else set())
    if not need <= set(kw) or set(kw) - allowed:
        raise ValueError(f"judge({rule!r}) takes {', '.join(sorted(allowed))}; got "
                         f"{', '.join(sorted(kw)) or 'nothing'}")
    if rule == "exact":
        c, p = kw["computed"], kw["published"]
        if not kw.get("comparable", True):
            return out(2, f"the lab's configuration is not the author's: "
                          f"{kw.get('config') or 'it differs'} (computed {c!r}, "
                          f"published {p!r})")
        return out(0, f"computed {c!r} equals the published {p!r}") if c == p else \
            out(1, f"computed {c!r} differs from the published {p!r}")
    if rule == "goal":
        return out(0 if kw["met"] else 1, f"registered goal: {kw['goal']}")
    return out(0 if kw["shown"] else 1, kw["condition"])
