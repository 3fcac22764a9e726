"""Predicted against printed perf shares: the factor-of-2 goal counted by hand
(memcglab.validation.profiles)."""

from __future__ import annotations

import matplotlib
import pandas as pd
import pytest

from memcglab.validation import profiles

matplotlib.use("Agg")


def _frame(rows) -> pd.DataFrame:
    """(printed %, predicted median %) pairs as profile_frame's rows, a band of x1/3..x3."""
    return pd.DataFrame([{"case": f"s/c{i}", "kernel": "new", "kind": "children",
                          "function": "try_charge_memcg", "measured_pct": p, "median": m,
                          "low": m / 3, "high": m * 3} for i, (p, m) in enumerate(rows)])


def test_the_factor_is_inclusive_and_a_printed_zero_is_its_bound():
    t = profiles.profile_comparison(_frame([(2.0, 4.0), (2.0, 1.0), (2.0, 4.02), (2.0, 0.99),
                                            (0.0, 0.009), (0.0, 0.011), (0.0, 0.03)]))
    assert t["within"].tolist() == [True, True, False, False, True, False, False]
    assert t["printed_zero"].tolist() == [False] * 4 + [True] * 3
    assert t["ratio"].iloc[:4].tolist() == pytest.approx([2.0, 0.5, 2.01, 0.495])
    assert t["ratio"].iloc[4:].isna().all()
    # the band: x1/3 to x3 of the median holds 2.0 for the first four; a printed zero is
    # inside when the band's low end is below the 0.005% bound
    assert t["in_band"].tolist() == [True] * 6 + [False]


def test_the_goal_counts_the_printed_shares_above_zero():
    t = profiles.profile_comparison(_frame([(1.0, 1.5)] * 4 + [(1.0, 3.0), (0.0, 0.0)]))
    assert profiles.profile_goal(t) == {"rows": 5, "within": 4, "share": 0.8, "met": True,
                                        "zero_rows": 1, "zero_within": 1}
    text = profiles.profile_text(t)
    assert text.startswith("Goal met: 4 of 5 printed memcg rows (80%)")
    assert "Of the 1 rows perf printed as 0.00 (below 0.005%), 1 are predicted below 0.01%" \
        in text
    assert "1 are over-predicted (median ratio 3.00)" in text
    t = profiles.profile_comparison(_frame([(1.0, 1.5)] * 3 + [(1.0, 3.0)] * 2))
    assert not profiles.profile_goal(t)["met"]  # 3 of 5 is 60%
    none = profiles.profile_comparison(_frame([(0.0, 0.0)]))
    assert profiles.profile_goal(none)["met"] is False
    assert "not judged" in profiles.profile_text(none)


def test_the_figure_has_log_axes_in_percent_of_cycles_and_the_factor_lines():
    import matplotlib.pyplot as plt

    t = profiles.profile_comparison(_frame([(1.0, 1.5), (0.2, 0.5), (0.0, 0.0)]))
    fig = profiles.profile_figure(t)
    ax = fig.axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert "% of cycles" in ax.get_xlabel() and "% of cycles" in ax.get_ylabel()
    assert [line.get_gid() for line in ax.lines if line.get_gid()] == ["diagonal", "factor",
                                                                        "factor"]
    assert [float(line.get_ydata()[0] / line.get_xdata()[0]) for line in ax.lines
            if line.get_gid()] == pytest.approx([1.0, 2.0, 0.5])
    assert len(ax.collections[-1].get_offsets()) == 2  # the printed zero is not drawn
    plt.close(fig)
    fig = profiles.profile_figure(profiles.profile_comparison(_frame([(0.0, 0.0)])))
    assert fig.axes[0].texts[0].get_text() == "no printed share above 0"
    plt.close(fig)
