"""Study 1's claim rows: each measured "with" value, the gain, its shape, the goal, and the
accounting share, every verdict from :func:`memcglab.stats.judge`.

The source is "memcg: multi-memcg percpu charge cache" (Shakeel Butt, April 2025). Its
netperf table states no run-to-run noise, so each column takes the rules' declared default
(5% of the value); the gain and its normalised shape are widened by both columns' noise.
The accounting share is the thread's strongest mechanistic statement ("almost all of that
time is spent in memcg accounting", the ``net_rx_action_busy`` claim), made a number as the
model's share of a flow's time per message in memcg accounting at the most clients, single
stock, judged against at least 80%.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcglab.hardware import MachineProfile
from memcglab.published import load
from memcglab.stats import Measurement, Take, judge, load_rules, option_intervals
from memcglab.studies import claim_row, interval_columns
from memcglab.studies.common.constraints import netperf_other_cycles
from memcglab.studies.common.sources import MULTI, name
from memcglab.studies.s01_single_vs_multi.score import (
    Study01Verdict,
    gain_measurement,
    memcg_share,
)
from memcglab.uncertainty import summarise

__all__ = ["ALMOST_ALL_PCT", "accounting_share", "claims"]

#: "almost all of that time", as the lab makes it a number: at least this share, in %
ALMOST_ALL_PCT = 80.0


def _claimed(claim_id: str) -> str:
    return str(load("claims").frame.set_index("claim_id").loc[claim_id, "quote"])


def accounting_share(df: pd.DataFrame, v: Study01Verdict, profile: MachineProfile) -> dict:
    """The accounting-share claim's row (module doc), with what it would take (the work
    outside memcg per message at which the share would reach :data:`ALMOST_ALL_PCT`) and
    its band's driver (the input with the largest total Sobol index of the share)."""
    pred = v.prediction
    share = memcg_share(pred)
    top = pred.model.prereg.clients[-1]
    other = pred.sample.other_cycles
    s = np.clip(share.samples / 100.0, 1e-9, 1 - 1e-9)
    goal = ALMOST_ALL_PCT / 100.0
    needed = float(np.median(other * (s / (1 - s)) * (1 - goal) / goal))
    floor = netperf_other_cycles(profile).low
    r = pred.model.prereg
    take = Take("other_cycles", "cycles", needed, (r.lower[0], r.upper[0]),
                f"below the {floor:.0f} cycles per message the published 'without' throughput "
                "implies at 6 clients" if needed < floor else "")
    band = Measurement(ALMOST_ALL_PCT, 100.0, 0.0, "%")
    verdict = judge(
        "qualitative",
        operationalised=f"the share of a flow's time per message spent in memcg accounting "
                        f"(the charge path's cycles and the time on usage lines, queueing "
                        f"included) at {top} clients without the multi stock, at least "
                        f"{ALMOST_ALL_PCT:g}%",
        differences="the author's CPUs ran net_rx_action for production traffic; the lab's "
                    f"netperf loopback mix of {top} flows on 72 CPUs has one number for the "
                    "work outside memcg on both sides of a flow, so it cannot separate "
                    "net_rx_action's own share",
        configurations={f"{top} clients": {"measured": band, "interval": share,
                                           "alternatives": option_intervals(share),
                                           "would_take": [take]}})
    q = np.quantile(share.samples, [0.05, 0.5, 0.95])
    # the band's driver: total Sobol indices of the same share over the same space
    model = pred.model
    column = len(r.clients) - 1
    drive = summarise(lambda d: model.memcg_share(d, r.without_model, column), pred.space,
                      n=pred.n, seed=0, unit="%")
    st = float(drive.sobol_total.get(drive.driver, np.nan))
    return claim_row(
        "almost all of net_rx_action's time is memcg accounting", name(MULTI),
        f"\"{_claimed('net_rx_action_busy')}\"",
        f"{q[1]:.0f}% [{q[0]:.0f}, {q[2]:.0f}] of a flow's time per message at {top} "
        "clients, single stock, study 1's fitted contention model", verdict,
        measurement=band.text(load_rules()), estimate=float(q[1]), low=float(q[0]),
        high=float(q[2]), unit="%", driver=str(drive.driver),
        driver_st=st if np.isfinite(st) else None)


def claims(df: pd.DataFrame, v: Study01Verdict, profile: MachineProfile) -> list[dict]:
    """The rows, in report order: each "with" value, the gain at the most clients, the
    shape, the accounting share, and the registered goal."""
    r, s = v.rows, v.summary
    src, rules = name(MULTI), load_rules()
    out = []
    for _, row in r.iterrows():
        c = int(row["clients"])
        res, ver = v.results[f"with_{c}"], v.verdicts[f"with_{c}"]
        out.append(claim_row(
            f"'with' per-flow throughput at {c} clients, predicted from 'without'", src,
            f"{row['published_with']:.0f} Mbit/s per flow with the multi stock",
            res.describe("{:.0f}"), ver,
            measurement=Measurement.point(row["published_with"], unit="Mbps").text(rules),
            **interval_columns(res, "Mbps")))
    last = int(r["clients"].iloc[-1])
    res, ver = v.results["gain_last"], v.verdicts["gain_last"]
    out.append(claim_row(
        f"gain of the multi stock at {last} clients", src,
        f"{s['published_gain_last_pct']:+.0f}% per-flow throughput", res.describe("{:.0f}"),
        ver, measurement=gain_measurement(r["published_with"].iloc[-1],
                                          r["published_without"].iloc[-1]).text(rules),
        **interval_columns(res, "%")))
    pub = ", ".join(f"{s[f'normalised_gain_published_{c}']:.2f}" for c in r["clients"][:-1])
    mod = ", ".join(f"{s[f'normalised_gain_predicted_{c}']:.2f}" for c in r["clients"][:-1])
    out.append(claim_row(
        "the gain grows with clients (the table's shape)", src,
        f"gain / gain at {last} clients: {pub} at {', '.join(map(str, r['clients'][:-1]))}",
        f"median normalised gain {mod}", v.verdicts["shape"],
        measurement=f"{pub} (each +-0.1 and its noise)"))
    out.append(accounting_share(df, v, profile))
    res = v.results["mape"]
    out.append(claim_row(
        "'with' column predicted out of sample (registered goal)", src,
        ", ".join(f"{x:.0f}" for x in r["published_with"]) + " Mbit/s",
        f"MAPE {s['mape_with_pct']:.1f}% of the median; {s['rows_covered']} of {s['rows']} "
        f"rows in the band; variants {s['variant_mape_min_pct']:.0f}-"
        f"{s['variant_mape_max_pct']:.0f}% (median {s['variant_mape_median_pct']:.0f}%)",
        v.verdicts["mape_goal"], **interval_columns(res, "%")))
    return out

