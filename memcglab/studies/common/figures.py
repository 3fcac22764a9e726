"""Figure plumbing shared by studies 1-3: the theme, the axes grid, one colour per model.

Files and captions are :mod:`memcglab.plots`' job (``plots.finish``); this module only
starts figures in the studies' theme (:func:`memcglab.plots.set_theme`) and keeps the
model and policy colours the same in every study.

>>> import matplotlib.pyplot as plt
>>> fig, ax = new_figure(1, 2)
>>> ax.shape
(2,)
>>> plt.close(fig)
"""

from __future__ import annotations

import matplotlib.pyplot as plt

from memcglab.plots import set_theme

__all__ = ["MODEL_PALETTE", "POLICY_PALETTE", "new_figure"]

#: one colour per stock model, the same in every study (seaborn's colour-blind palette)
MODEL_PALETTE = {"single": "#949494", "multi": "#0173b2", "multi-rr": "#029e73",
                 "multi-lru": "#d55e00", "multi-fix2": "#cc78bc", "pcstock": "#de8f05",
                 "pcstock-v4": "#ca9161"}
#: one colour per victim policy: the colour of the model that runs it
POLICY_PALETTE = {"random": MODEL_PALETTE["multi"], "rr": MODEL_PALETTE["multi-rr"],
                  "lru": MODEL_PALETTE["multi-lru"]}


def new_figure(rows: int, cols: int, width: float = 5.0, height: float = 3.6,
               **kwargs) -> tuple[plt.Figure, object]:
    """A ``rows`` x ``cols`` figure in the studies' theme (axes as ``plt.subplots`` gives)."""
    set_theme()
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows),
                             layout="constrained", **kwargs)
    return fig, axes
