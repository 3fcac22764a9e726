"""memcglab.tracegen: the random traces a plugin's tests use, from the package itself.

docs/extending.md's examples must run from an installed wheel, which has no ``tests``
package; the lab's own engine tests reuse the same generators (no second copy).
"""

from __future__ import annotations

import re
from pathlib import Path

from memcglab import tracegen
from memcglab.replay import dumps, replay
from tests.engine import tracegen as tests_tracegen

ROOT = Path(__file__).resolve().parents[1]


def test_the_extending_guide_imports_nothing_a_wheel_lacks():
    text = (ROOT / "docs" / "extending.md").read_text()
    assert not re.findall(r"^(?:>>> )?(?:from|import) tests\b.*$", text, re.M)
    assert "from memcglab.tracegen import random_trace" in text


def test_the_engine_tests_use_the_packaged_generators():
    for name in tracegen.__all__:
        assert getattr(tests_tracegen, name) is getattr(tracegen, name)
    assert tests_tracegen.MODELS[0] == "single" and len(tests_tracegen.MODELS) == 7


def test_the_traces_are_seeded_valid_and_replayable():
    for seed in range(5):
        a, b = tracegen.random_trace(seed, bursts=True), tracegen.random_trace(seed, bursts=True)
        assert a.cpus == b.cpus and (a.ops == b.ops).all()
        assert dumps(replay(a, "multi", check=True)) == dumps(replay(b, "multi", check=True))
        obj = tracegen.random_obj_trace(seed)
        replay(tracegen.without_nested(obj), "single", check=True)
        assert tracegen.with_irq(a, seed).ops["irq"].dtype == bool
