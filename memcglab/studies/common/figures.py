"""Figure plumbing shared by studies 1-3: the theme, the axes grid, one colour per model.

Files and captions are :mod:`memcglab.plots`' job (``plots.finish``); this module only
starts figures in the studies' theme (:func:`memcglab.plots.set_theme`) and keeps the
model and policy colours the same in every study. A model or policy a plugin registers
(``docs/extending.md``) has no fixed colour: :func:`policy_palette` and
:func:`model_palette` give each such name one of the colour-blind palette's colours no
fixed name uses, in the names' sorted order, so the same names get the same colours.

>>> policy_palette(["lru", "fewest", "random"])
{'lru': '#d55e00', 'random': '#0173b2', 'fewest': '#de8f05'}

>>> import matplotlib.pyplot as plt
>>> fig, ax = new_figure(1, 2)
>>> ax.shape
(2,)
>>> plt.close(fig)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import matplotlib.pyplot as plt
import seaborn as sns

from memcglab import registry
from memcglab.plots import set_theme

__all__ = ["MODEL_PALETTE", "POLICY_PALETTE", "model_palette", "new_figure", "palette",
           "policy_palette"]

#: one colour per stock model, the same in every study: each registry entry's ``colour``
#: (seaborn's colour-blind palette for the built-in models)
MODEL_PALETTE = {n: registry.model(n).colour for n in registry.MODEL_NAMES
                 if registry.model(n).colour is not None}
#: one colour per victim policy: the colour of the model that runs it
POLICY_PALETTE = {"random": MODEL_PALETTE["multi"], "rr": MODEL_PALETTE["multi-rr"],
                  "lru": MODEL_PALETTE["multi-lru"]}


def palette(names: Iterable[str], fixed: Mapping[str, str]) -> dict[str, str]:
    """A colour for each of ``names``: its colour in ``fixed``, or, for the others in
    sorted order, the colour-blind palette's colours that ``fixed`` does not use, then
    (past those) evenly spaced hues. The same names always get the same colours."""
    names = [str(n) for n in dict.fromkeys(names)]
    extra = sorted(n for n in names if n not in fixed)
    used = set(fixed.values())
    spare = [c for c in sns.color_palette("colorblind").as_hex() if c not in used]
    if len(extra) > len(spare):
        spare += [c for c in sns.color_palette("husl", len(extra)).as_hex() if c not in used]
    out = {n: fixed[n] for n in names if n in fixed}
    out.update(zip(extra, spare, strict=False))
    return out


def policy_palette(names: Iterable[str]) -> dict[str, str]:
    """Colours for victim policies ``names``: :data:`POLICY_PALETTE`'s, then :func:`palette`'s."""
    return palette(names, POLICY_PALETTE)


def model_palette(names: Iterable[str]) -> dict[str, str]:
    """Colours for stock models ``names``: :data:`MODEL_PALETTE`'s, then :func:`palette`'s."""
    return palette(names, MODEL_PALETTE)


def new_figure(rows: int, cols: int, width: float = 5.0, height: float = 3.6,
               **kwargs) -> tuple[plt.Figure, object]:
    """A ``rows`` x ``cols`` figure in the studies' theme (axes as ``plt.subplots`` gives)."""
    set_theme()
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows),
                             layout="constrained", **kwargs)
    return fig, axes
