"""Words the studies' conclusions share, chosen from a run's numbers and nothing else.

Every word that depends on a result (more or fewer, by how much) is chosen here from
the numbers passed in, so a notebook never carries hard-coded prose about its results.
Each study builds its own sentences in its views or claims module.

>>> series([14.1, 56.6, 145.1], [6, 12, 36])
'+14% at 6, +57% at 12, +145% at 36'
>>> times(10.0, 2.5)
'4.0x more'
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["series", "times"]


def series(values: Sequence[float], labels: Sequence[object], unit: str = "%") -> str:
    """``+x% at a, +y% at b, ...``: signed values, rounded, with their labels."""
    return ", ".join(f"{v:+.0f}{unit} at {n}" for v, n in zip(values, labels, strict=True))


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
