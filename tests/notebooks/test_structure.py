"""Every study notebook is committed clean, opens with its question and has a parameters cell."""

from __future__ import annotations

import nbformat
import pytest

from tests.notebooks.outputs import NOTEBOOKS

# notebook: (its heading starts with, its opening cell asks, declarations beyond quick/output_dir)
OPENINGS = {
    "01_single_vs_multi": ("# 1. ", "**Question.**", ()),
    "02_policy_and_slots": ("# 2. ", "**Question.**",
                            ('policy: str = "random"', "slots: int = 7")),
    "03_pcstock_vs_multi": ("# 3. ", "**Question.**", ()),
    "04_layout_false_sharing": ("# Study 4", "**Questions.**", ()),
    "05_history": ("# Study 5", "**Question 1.**", ()),
    "06_page_counter_stock_v4": ("# 6. ", "**Question.**", ()),
    "07_validation": ("# 7. ", "**Question.**", ("points: int = 512", "seed: int = 0",
                                                 "live_ablation: bool = False",
                                                 'ablation_dir: str = ""')),
}


@pytest.mark.parametrize("stem", OPENINGS)
def test_committed_clean_with_a_question_and_parameters(stem):
    heading, question, declarations = OPENINGS[stem]
    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    assert nb.metadata.kernelspec.name == "python3"
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert first.source.startswith(heading) and question in first.source
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1 and params[0] is nb.cells[1]
    assert params[0].metadata.tags == ["parameters"]
    for decl in ("quick: bool = False", f'output_dir: str = "results/{stem[:2]}"',
                 *declarations):
        assert decl in params[0].source, decl
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
