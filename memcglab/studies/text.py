"""Conclusion sentences for studies 1-3, built from a run's numbers and nothing else.

Every word that depends on a result (more or fewer, grows or not, within or outside
a margin) is chosen here from the numbers passed in, so a notebook never carries
hard-coded prose about its results. Words quoted from the seed threads come from the
published table ``thread_quotes`` (:func:`memcglab.published.quote`).

>>> series([14.1, 56.6, 145.1], [6, 12, 36])
'+14% at 6, +57% at 12, +145% at 36'
>>> trend([1.0, 2.0]), trend([1.0, -0.5]), trend([-1.0, -2.0])
('increasing', 'not monotonic', 'decreasing')
>>> times(10.0, 2.5)
'4.0x more'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from memcglab.published import quote

__all__ = ["series", "trend", "times", "advantage_word", "netperf_conclusion",
           "policy_conclusion", "pcstock_conclusion"]


def series(values: Sequence[float], labels: Sequence[object], unit: str = "%") -> str:
    """``+x% at a, +y% at b, ...``: signed values, rounded, with their labels."""
    return ", ".join(f"{v:+.0f}{unit} at {n}" for v, n in zip(values, labels, strict=True))


def trend(diffs: Sequence[float]) -> str:
    """``increasing``, ``decreasing`` or ``not monotonic`` for consecutive differences."""
    d = np.asarray(diffs, dtype=float)
    if np.all(d > 0):
        return "increasing"
    if np.all(d < 0):
        return "decreasing"
    return "not monotonic"


def times(a: float, b: float) -> str:
    """How ``a`` compares with ``b``: a factor, or a percentage when they are close.

    >>> times(1.0, 2.0), times(3.0, 3.0), times(99.8, 102.0), times(100.2, 100.0)
    ('2.0x fewer', 'as many', '2% fewer', 'as many')
    """
    if b == a:
        return "as many"
    if b == 0:
        return "infinitely more"
    if a == 0:
        return "none of"
    ratio, word = (a / b, "more") if a > b else (b / a, "fewer")
    if ratio < 1.095:
        pct = round((ratio - 1) * 100)
        return f"{pct}% {word}" if pct else "as many"
    return f"{ratio:.1f}x {word}"


def _cmp(a: float, b: float, more: str = "more", less: str = "less") -> str:
    return more if a > b else less if a < b else "the same as"


def netperf_conclusion(s: Mapping[str, object], worst_clients: int, worst_error_pct: float,
                       ok_pct: float) -> str:
    """Study 1's conclusion from :func:`memcglab.studies.netperf_study.summary` values.

    >>> s = {"max_clients": 36, "walks_per_op_single_max_clients": 1.0,
    ...      "walks_per_op_multi_max_clients": 0.1, "hit_rate_single_max_clients": 0.6,
    ...      "hit_rate_multi_max_clients": 0.95, "transfers_per_op_single_max_clients": 0.8,
    ...      "transfers_per_op_multi_max_clients": 0.15, "cycles_per_op_single_max_clients":
    ...      470.0, "cycles_per_op_multi_max_clients": 150.0, "mape_without_fit_pct": 15.0,
    ...      "mape_with_pct": 23.0, "band_mape_with_low_pct": 13.0,
    ...      "band_mape_with_high_pct": 55.0, "predicted_improvement_increasing": True,
    ...      "published_improvement_increasing": True, "fit_at_bound": "none",
    ...      "predicted_improvement_max_clients_pct": 212.0,
    ...      "published_improvement_max_clients_pct": 145.0}
    >>> print(netperf_conclusion(s, 36, 67.0, 10.0))  # doctest: +ELLIPSIS
    At 36 clients the multi stock walks the page_counter 0.10 times per packet ... \
a MAPE of 23.0%, outside the pre-registered 10%; ...
    """
    top = s["max_clients"]

    def g(col: str, model: str) -> float:
        return float(s[f"{col}_{model}_max_clients"])

    w1, w0 = g("walks_per_op", "multi"), g("walks_per_op", "single")
    c1, c0 = g("cycles_per_op", "multi"), g("cycles_per_op", "single")
    out = [
        f"At {top} clients the multi stock walks the page_counter {w1:.2f} times per packet "
        f"against {w0:.2f} for the single stock ({times(w1, w0)}; stock hit rate "
        f"{g('hit_rate', 'multi'):.0%} vs {g('hit_rate', 'single'):.0%}, usage-line transfers "
        f"{g('transfers_per_op', 'multi'):.2f} vs {g('transfers_per_op', 'single'):.2f} per "
        f"packet), so its charge path costs {c1:.0f} rather than {c0:.0f} cycles per packet."]
    mape = float(s["mape_with_pct"])
    within = "within" if mape <= ok_pct else "outside"
    out.append(
        f"Calibrated on seed 000's 'without' column alone (fit MAPE "
        f"{float(s['mape_without_fit_pct']):.1f}%), the model predicts the 'with' column "
        f"with a MAPE of {mape:.1f}%, {within} the pre-registered {ok_pct:g}%; the worst row "
        f"is {worst_error_pct:+.0f}% at {worst_clients} clients, and the pre-registered "
        f"sensitivity band spans MAPEs of {float(s['band_mape_with_low_pct']):.1f}-"
        f"{float(s['band_mape_with_high_pct']):.1f}%.")
    pred_up, pub_up = bool(s["predicted_improvement_increasing"]), bool(
        s["published_improvement_increasing"])
    shape = "as in the published table" if pred_up == pub_up else "unlike the published table"
    grows = "grows with every added client" if pred_up else "does not grow steadily with clients"
    pred, pub = (float(s["predicted_improvement_max_clients_pct"]),
                 float(s["published_improvement_max_clients_pct"]))
    out.append(f"The predicted gain of the multi stock {grows}, {shape}, and reaches "
               f"{pred:+.0f}% at {top} clients against the published {pub:+.0f}% "
               f"({_cmp(pred, pub, 'an overestimate', 'an underestimate')}).".replace(
                   "(the same as)", "(exact)"))
    bound = str(s["fit_at_bound"])
    if "other" in bound.split(","):
        out.append("The fit pushed the work outside memcg to its bound of zero: even a "
                   "packet that costs nothing but its charge path cannot follow the "
                   "'without' column's fall, so the model's form, not only its parameters, "
                   "misses it.")
    elif bound != "none":
        out.append(f"The fit pushed {bound} to its bound, so its intervals mean nothing.")
    if "cycles_per_op_multi_rr_max_clients" in s:
        rr = g("cycles_per_op", "multi_rr")
        out.append(f"The 2026 round-robin stock costs {rr:.0f} cycles per packet at {top} "
                   f"clients ({(rr / c1 - 1) * 100:+.1f}% against the random victim).")
    return " ".join(out)


def advantage_word(ci_low: float, ci_high: float, other: str) -> str:
    """Random against ``other`` from the CI of random's advantage (%).

    >>> advantage_word(0.2, 1.5, "rr"), advantage_word(-0.3, 0.4, "rr")
    ('random better than rr', 'random and rr indistinguishable')
    """
    if ci_low > 0:
        return f"random better than {other}"
    if ci_high < 0:
        return f"{other} better than random"
    return f"random and {other} indistinguishable"


def _slots_list(needs) -> str:
    def need(r) -> str:
        n = r.slots_needed
        return "never" if n is None or n is pd.NA or n != n else str(int(n))

    return ", ".join(f"{r.policy} {need(r)}" for r in needs.itertuples())


def _pays(value: object, label: str) -> str:
    return f"never ({label})" if value is None else f"from {value} ({label})"


def _holds(verdicts: Sequence[str]) -> str:
    inside = [v.startswith("inside") for v in verdicts]
    against = [v.startswith(("LRU better", "below", "above")) for v in verdicts]
    if inside and all(inside):
        return "holds on both workloads"
    if inside and all(against):
        return "does not hold on either workload"
    if any(against):
        return "does not hold on every workload"
    return "is not settled by this run (the intervals overlap the claim)"


def policy_conclusion(s: Mapping[str, object], needs, mixes: Sequence[str],
                      cpu_counts: Sequence[int], clients: int, tol_pct: float) -> str:
    """Study 2's conclusion from :func:`memcglab.studies.policy_study.summary` values.

    ``needs`` is :func:`memcglab.studies.policy_study.needs`'s table (best first).
    """
    best = needs.iloc[0]
    out = [
        f"On the {clients}-client netperf mix, {best['policy']} needs the fewest slots: "
        f"{int(best['slots_needed'])} bring it within {tol_pct:g}% of the lowest cost per "
        f"charge ({float(best['best_cost']):.0f} cycles, at {int(best['best_slots'])} "
        f"slots); slots needed per policy: {_slots_list(needs)}."]
    pol, slots = s["policy"], s["slots"]
    net, syn = float(s["tp_change_vs_random_netperf_pct"]), float(
        s["tp_change_vs_random_synthetic_pct"])
    if pol != "random":
        out.append(f"With {slots} slots, {pol} changes the predicted throughput by "
                   f"{net:+.2f}% against random on that mix and by {syn:+.2f}% on the "
                   "synthetic mixes where a CPU sees more memcgs than slots.")
    one, two = s["one_line_slots"], s["two_line_slots"]
    for cpus in dict.fromkeys((min(cpu_counts), max(cpu_counts))):
        pays = ", ".join(_pays(s[f"second_line_pays_from_{m}_{cpus}cpu"], m) for m in mixes)
        gains = ", ".join(f"{float(s[f'second_line_gain_max_active_{m}_{cpus}cpu_pct']):+.1f}%"
                          f" ({m})" for m in mixes)
        where = ("one CPU (its own memcgs only)" if cpus == 1
                 else f"{cpus} CPUs and remote releases")
        out.append(f"With {where}, a second cache line of slots ({two} instead of {one}) "
                   f"pays for the line it adds to every lookup of {pol} from these many "
                   f"active memcgs per CPU on: {pays}; its gain at the most memcgs is {gains}.")
    words = []
    for w, name in (("netperf", "the netperf mix"), ("synthetic", "the synthetic overflow")):
        word = str(s[f"lru_verdict_{w}"])
        if word == "not tested":
            continue
        words.append(word)
        out.append(f"Random's throughput advantage over LRU on {name} is "
                   f"{float(s[f'lru_mean_advantage_pct_{w}']):+.2f}% (95% CI "
                   f"{float(s[f'lru_ci_low_{w}']):+.2f} to {float(s[f'lru_ci_high_{w}']):+.2f}):"
                   f" {word}.")
    wr, wl = float(s["walks_per_1000_netperf_random"]), float(s["walks_per_1000_netperf_lru"])
    out.append(f"On the netperf mix LRU walks {wl:.1f} times per 1000 charges against random's "
               f"{wr:.1f} ({times(wl, wr)}) and writes its recency "
               f"{float(s['lru_writes_per_op_netperf_lru']):.2f} times per charge, for "
               f"{float(s['cycles_per_op_netperf_lru']):.0f} against "
               f"{float(s['cycles_per_op_netperf_random']):.0f} cycles per charge.")
    out.append(f"So \"{quote('random_beats_lru')}\" {_holds(words)}, with {slots} slots.")
    return " ".join(out)


def _equiv_list(s: Mapping[str, object], key: str, groups: Sequence[int]) -> str:
    return ", ".join(f"{float(s[f'delta_pct_{key}_{c}']):+.2f}% at {c}" for c in groups)


def pcstock_conclusion(s: Mapping[str, object], cgroups: Sequence[int],
                       clients: Sequence[int], margin_pct: float) -> str:
    """Study 3's conclusion from :func:`memcglab.studies.pcstock_study.summary` values."""
    def g(col: str, model: str, key: str) -> float:
        return float(s[f"{col}_{model}_{key}"])

    top_c, top_n = s["madvise_max_cgroups"], s["netperf_max_cgroups"]
    mad_eq, pub_eq = bool(s["all_equivalent_madvise"]), bool(s["all_equivalent_published"])
    agree = "as seed 003's own table does" if mad_eq == pub_eq else \
        "unlike seed 003's own table" if pub_eq else "where seed 003's own table is not"
    out = [
        f"On seed 003's madvise loop ({top_c} cgroups), the page_counter stock walks "
        f"{g('walks_per_op', 'pcstock', 'madvise'):.3f} times per fault against "
        f"{g('walks_per_op', 'multi', 'madvise'):.3f} for the multi stock, and its charge "
        f"path costs {g('cycles_per_op', 'pcstock', 'madvise'):.1f} rather than "
        f"{g('cycles_per_op', 'multi', 'madvise'):.1f} cycles per fault; with "
        f"{float(s['fault_cycles']):g} cycles of fault work, trial times differ by "
        f"{_equiv_list(s, 'madvise', cgroups)} cgroups, "
        f"{'equivalent in every row' if mad_eq else 'not equivalent in every row'} within "
        f"+-{margin_pct:g}% (TOST), {agree} ({_equiv_list(s, 'published', cgroups)})."]
    wp, wm = g("walks_per_op", "pcstock", "netperf"), g("walks_per_op", "multi", "netperf")
    cp, cm = g("cycles_per_op", "pcstock", "netperf"), g("cycles_per_op", "multi", "netperf")
    tp, tm = (g("transfers_per_op", m, "netperf") for m in ("pcstock", "multi"))
    out.append(
        f"On the netperf mix at {top_n} clients, where a message is charged on the sender's "
        f"CPU and freed on the reader's, the page_counter stock walks {wp:.2f} times per "
        f"packet against {wm:.2f} ({times(wp, wm)}), with {tp:.2f} against {tm:.2f} usage "
        f"lines from other CPUs, and its charge path costs {cp:.0f} rather than {cm:.0f} "
        f"cycles per packet ({float(s['netperf_cycles_change_pct']):+.0f}%; per client count: "
        f"{_equiv_list(s, 'netperf', clients)}).")
    if s["pcstock_loses_netperf"]:
        answer = ("Yes: a stock that keeps at most a batch per CPU and walks for any excess "
                  "loses to the multi stock when charges and uncharges happen on different "
                  "CPUs")
    elif bool(s["all_equivalent_netperf"]):
        answer = ("No: even with charges and uncharges on different CPUs the two stocks "
                  f"are equivalent within +-{margin_pct:g}%")
    else:
        answer = ("Not shown: the difference on the netperf mix is neither a significant "
                  f"loss nor equivalent within +-{margin_pct:g}%")
    out.append(answer + ", in this run.")
    return " ".join(out)
