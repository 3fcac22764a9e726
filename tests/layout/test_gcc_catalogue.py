"""Every catalogue entry compiled by gcc: sizeof, _Alignof and every offsetof as the model's.

gcc reads the catalogue's own C text (kernel annotations, padding macros and config
switches as written), so this checks the preprocessing as well as the layout rules
that tests/layout/test_gcc_crosscheck.py checks on random structs.
"""

from __future__ import annotations

import shutil

import pytest

from memcglab.layout.catalogue import CATALOGUE, struct_layout
from memcglab.layout.gcccheck import GccError, gcc_check
from memcglab.layout.pclines import PAGE_COUNTER_LAYOUTS

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None,
                                reason="gcc not found on PATH: the check compiles C")

CONFIGS = [None, ["SMP=n"], ["MEMCG_V1", "LOCK_STAT"]]
ENTRIES = [(name, era) for name, e in CATALOGUE.items() for era in e.eras]


@pytest.mark.parametrize("era", PAGE_COUNTER_LAYOUTS)
@pytest.mark.parametrize("config", [None, ["SMP=n"]])
def test_the_contract_page_counter_layouts_agree_with_gcc(era, config):
    check = gcc_check("page_counter", era, config)
    assert check.ok, check.mismatches
    lay = struct_layout("page_counter", era, config)
    assert (check.size, check.align) == (lay.size, lay.align)
    # 14 fields, the counter of each of the 5 atomic_long_t, v6.1's two paddings and x[0]s
    smp = config is None
    assert check.checked == 14 + 5 + (4 if era == "v6.1" and smp else 0)
    assert "agree" in check.summary() and check.compiler.startswith("gcc")


@pytest.mark.parametrize("name, era", ENTRIES)
def test_every_catalogue_entry_agrees_with_gcc(name, era):
    for config in CONFIGS:
        check = gcc_check(name, era, config)
        assert check.ok, (config, check.mismatches)


def test_a_wrong_model_is_caught(monkeypatch):
    # Compile v5.12's text but compare it with v5.11's layout: parent is at 104 for gcc
    # and 40 for the model, and the 8 fields emin..failcnt moved by 8 (4 of them
    # atomic_long_t, whose counter moved too): 1 + 8 + 4 differences.
    import memcglab.layout.gcccheck as gc
    real = gc.struct_layout
    monkeypatch.setattr(gc, "struct_layout", lambda n, e, c=None, d=None: real(n, "v5.11"))
    check = gc.gcc_check("page_counter", "v5.12")
    assert not check.ok
    assert "parent: model 40, gcc 104" in check.mismatches
    assert len(check.mismatches) == 13 and "13 differences" in check.summary()


def test_no_gcc_is_an_error_that_says_so(monkeypatch):
    with pytest.raises(GccError, match="cannot run /nonexistent/gcc"):
        gcc_check("page_counter", "v6.1", gcc="/nonexistent/gcc")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(GccError, match="gcc not found on PATH"):
        gcc_check("page_counter", "v6.1")
