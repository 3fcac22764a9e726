"""The core-to-core latency heatmap of a probe run, with its caption."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memcglab.plots import save_png, set_theme
from memcglab.probe.measure import ProbeResult

__all__ = ["caption", "heatmap_png"]


def caption(r: ProbeResult) -> str:
    """What the heatmap shows, with this run's figures."""
    m = r.matrix()
    vals = m[~np.isnan(m)]
    return (f"One-way cache-line transfer latency between every pair of the {len(r.cpus)} "
            f"CPUs probed: two threads pinned to the pair alternately write one line; a "
            f"round trip halved; median of {r.plan.reps} runs of {r.plan.pingpong_iters} "
            f"round trips. Pairs range from {vals.min():.0f} to {vals.max():.0f} ns "
            f"(core clock {r.core_ghz.median:.2f} GHz).")


def heatmap_png(r: ProbeResult, path: Path) -> Path:
    """Draw the pair matrix (ns) with seaborn and save it as the PNG ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    set_theme()
    n = len(r.cpus)
    side = min(3.5 + 0.12 * n, 16.0)
    fig, ax = plt.subplots(figsize=(side + 1.5, side + 1.0))
    sns.heatmap(r.matrix(), ax=ax, square=True, annot=n <= 8, fmt=".0f", cmap="viridis",
                xticklabels=list(r.cpus) if n <= 48 else "auto",
                yticklabels=list(r.cpus) if n <= 48 else "auto",
                cbar_kws={"label": "one-way transfer latency (ns)"})
    ax.grid(False)
    ax.set_xlabel("CPU of the second thread")
    ax.set_ylabel("CPU of the first thread")
    ax.set_title("Core-to-core cache-line transfer latency")
    text = caption(r)
    fig.text(0.01, 0.01, text, wrap=True, fontsize=8, va="bottom")
    fig.subplots_adjust(bottom=0.22)
    path = Path(path)
    try:
        out = save_png(fig, path.parent, path.stem)
    finally:
        plt.close(fig)
    assert out is not None
    return out
