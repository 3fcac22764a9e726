"""One figure for what drives a priced quantity: a tornado chart beside Sobol-index bars.

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt
>>> from memcglab.uncertainty.priors import Prior
>>> from memcglab.uncertainty.propagate import summarise
>>> from memcglab.uncertainty.space import Space
>>> s = Space([Prior("a", "cycles", 0.0, 0.5, 1.0, "uniform", "example"),
...            Prior("b", "cycles", 0.0, 0.5, 1.0, "uniform", "example")])
>>> r = summarise(lambda d: d["a"] + 2 * d["b"], s, n=256, unit="cycles/op")
>>> fig, text = sensitivity_figure(r, "cycles per charge")
>>> text.split(":")[0]
'Left, tornado'
>>> plt.close(fig)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memcglab.uncertainty.propagate import UncertainResult

__all__ = ["sensitivity_figure"]


def sensitivity_figure(result: UncertainResult, quantity: str, top: int = 10):
    """A tornado chart (left) and first-order/total Sobol bars (right), and a caption.

    ``quantity`` names what was priced (the x-axis label, with ``result.unit``); the
    ``top`` inputs with the largest swing are drawn. Returns ``(Figure, caption)``.
    """
    import matplotlib.pyplot as plt
    import seaborn as sns

    t = result.tornado.head(top)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 0.45 * max(len(t), 3) + 1.6),
                                   gridspec_kw={"width_ratios": [3, 2]})
    base = float(t["y_typical"].iloc[0]) if len(t) else result.median
    pal = sns.color_palette("colorblind", 2)
    ylab = [f"{r.input} ({r.unit})" for r in t.itertuples()]
    pos = np.arange(len(t))[::-1]
    for y, r in zip(pos, t.itertuples(), strict=True):
        if r.swing == 0 and r.y_low == base:
            ax1.annotate("no effect", (base, y), xytext=(4, 0), textcoords="offset points",
                         va="center", fontsize=8, color="0.4")
            continue
        # both ends on one side of the typical value: stack their labels, else they overlap
        same_side = (r.y_low >= base) == (r.y_high >= base)
        for val, lab, c, dy in ((r.y_low, r.at_low, pal[0], -4), (r.y_high, r.at_high, pal[1], 4)):
            ax1.barh(y, val - base, left=base, color=c, height=0.6)
            ax1.annotate(lab, (val, y), xytext=(3 if val >= base else -3, dy if same_side else 0),
                         textcoords="offset points", va="center",
                         ha="left" if val >= base else "right", fontsize=8)
    ax1.margins(x=0.15)  # room for the end labels inside the axes
    ax1.axvline(base, color="0.3", lw=1)
    ax1.set_yticks(pos, ylab)
    ax1.set_xlabel(f"{quantity} ({result.unit})" if result.unit else quantity)
    ax1.set_title("one at a time, others typical")
    ax1.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=pal[0]),
                        plt.Rectangle((0, 0), 1, 1, color=pal[1])],
               labels=["input low (or lowest option)", "input high (or highest option)"],
               loc="best", fontsize=8)
    s = pd.DataFrame({"input": list(result.sobol_total.index) * 2,
                      "index": list(result.sobol_first.to_numpy())
                      + list(result.sobol_total.to_numpy()),
                      "kind": ["first-order"] * len(result.sobol_first)
                      + ["total"] * len(result.sobol_total)})
    order = list(t["input"])
    sns.barplot(data=s[s["input"].isin(order)], y="input", x="index", hue="kind", order=order,
                ax=ax2, palette="colorblind")
    ax2.set_xlabel("Sobol index (variance share, dimensionless)")
    ax2.legend(title=None, fontsize=8)
    ax2.set_ylabel("")
    ax2.set_xlim(0, max(1.0, float(np.nanmax(s["index"])) if len(s) else 1.0))
    ax2.set_title("variance shares, all inputs varying")
    fig.tight_layout()
    be = [k for k, v in result.break_even.items() if v is not None]
    caption = (
        f"Left, tornado: {quantity} with one input at its low and high value (alternatives "
        f"and seeds at their lowest- and highest-giving option), the others typical; the "
        f"vertical line is the typical value {base:.3g} {result.unit}. Right: first-order "
        f"and total Sobol indices; a total well above first-order means interactions. "
        f"What to see: {result.driver} drives the spread "
        f"(median {result.median:.3g}, {result.coverage:.0%} interval "
        f"[{result.low:.3g}, {result.high:.3g}] {result.unit})"
        + (f"; the conclusion flips inside the prior range of {', '.join(be)}." if be else
           "; no single input's prior range flips the conclusion."))
    return fig, caption
