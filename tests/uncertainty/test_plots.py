"""The sensitivity figure: labelled axes with units, and a caption saying what to see."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from memcglab.uncertainty import Alternative, Prior, Space, sensitivity_figure, summarise  # noqa: E402


def test_figure_axes_and_caption():
    s = Space([Prior("percpu_rmw", "cycles", 2.0, 5.0, 8.0, "pert", "t")],
              [Alternative("placement", ("same", "reader"))], seeds=[0, 1])
    r = summarise(lambda d: d["percpu_rmw"] - 4.0 + (d["placement"] == "reader") + d["seed"],
                  s, n=128, unit="cycles/op")
    fig, caption = sensitivity_figure(r, "LRU minus random")
    ax1, ax2 = fig.axes[:2]
    assert ax1.get_xlabel() == "LRU minus random (cycles/op)"
    assert "dimensionless" in ax2.get_xlabel() and ax2.get_ylabel() == ""
    assert [t.get_text() for t in ax1.get_yticklabels()][0].endswith("(cycles)") or \
        any("(option)" in t.get_text() for t in ax1.get_yticklabels())
    assert "What to see" in caption and r.driver in caption and "percpu_rmw" in caption
    plt.close(fig)
