"""Words the studies' sentences share, chosen from a run's numbers and nothing else.

Every word that depends on a result is chosen from the numbers passed in, so a notebook
never carries hard-coded prose about its results; each study builds its own sentences
in its views or claims module.

>>> plural(1, "cgroup"), plural(32, "cgroup"), plural(2, "memcg"), plural(1.5, "cycle")
('1 cgroup', '32 cgroups', '2 memcgs', '1.5 cycles')
>>> interval(-36.66, -82.57, -1.69)
'-36.7% [-82.6, -1.7]'
"""

from __future__ import annotations

__all__ = ["interval", "plural"]


def plural(n: float, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, made plural unless ``n`` is exactly one (``many`` when the
    plural is not ``word + "s"``)."""
    count = f"{n:g}" if isinstance(n, float) else str(n)
    return f"{count} {word if n == 1 else (many or word + 's')}"


def interval(median: float, low: float, high: float, digits: int = 1, unit: str = "%") -> str:
    """``"+1.8% [-0.1, +4.9]"`` with signs when any number is negative: median, 90%."""
    sign = "+" if min(median, low, high) < 0 else ""
    f = f"{{:{sign}.{digits}f}}"
    return f"{f.format(median)}{unit} [{f.format(low)}, {f.format(high)}]"
