"""The five-minute API page runs as written, and `import memcglab` stays light."""

from __future__ import annotations

import doctest
import subprocess
import sys
from pathlib import Path

import memcglab

PAGE = Path(__file__).resolve().parents[2] / "docs" / "python-api.md"


def test_the_page_is_a_doctest_that_passes():
    result = doctest.testfile(str(PAGE), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 5 and result.failed == 0


def test_every_exported_name_resolves_and_is_listed():
    for name in memcglab.__all__:
        assert getattr(memcglab, name) is not None
    assert set(memcglab.__all__) <= set(dir(memcglab))
    # the submodule keeps its name beside the exported function
    from memcglab import replay as replay_module

    assert memcglab.replay_faithful is replay_module.replay


def test_import_loads_no_heavy_dependency():
    code = ("import sys, memcglab; heavy = [m for m in ('numpy', 'pandas', 'numba', 'scipy',"
            " 'matplotlib') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"
