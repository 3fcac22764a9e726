"""The shared words of the conclusions follow the numbers."""

from __future__ import annotations

from memcglab.studies.common import text as T


def test_small_helpers():
    assert T.series([1.0, -2.4], ["a", "b"]) == "+1% at a, -2% at b"
    assert T.series([3.0], [7], unit=" walks") == "+3 walks at 7"
    assert T.times(0.0, 1.0) == "none of" and T.times(1.0, 0.0) == "infinitely more"
    assert T.times(2.0, 1.0) == "2.0x more" and T.times(1.0, 1.5) == "1.5x fewer"
