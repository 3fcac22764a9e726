"""The shared words: plurals and intervals."""

from memcglab.studies.common import text as T


def test_plural_is_singular_for_exactly_one():
    assert T.plural(1, "cgroup") == "1 cgroup" and T.plural(0, "cgroup") == "0 cgroups"
    assert T.plural(4, "memcg") == "4 memcgs" and T.plural(2, "entry", "entries") == "2 entries"
    assert T.plural(1.0, "cycle") == "1 cycle"


def test_interval_signs_and_digits():
    assert T.interval(1.8, -0.1, 4.93) == "+1.8% [-0.1, +4.9]"
    assert T.interval(131.0, 87.4, 178.5, 0, " cycles") == "131 cycles [87, 178]"
