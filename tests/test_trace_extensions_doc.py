"""docs/trace-extensions.md: its examples run (doctest) and its claims about the syntax hold."""

from __future__ import annotations

import doctest
from pathlib import Path

from memcglab.models import MODEL_NAMES, OBJ_ERAS

DOC = Path(__file__).resolve().parents[1] / "docs" / "trace-extensions.md"


def test_doc_examples() -> None:
    result = doctest.testfile(str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 10 and result.failed == 0, result


def test_doc_names_every_models_obj_era() -> None:
    text = DOC.read_text()
    assert set(OBJ_ERAS) == set(MODEL_NAMES)
    for model in MODEL_NAMES:
        assert f"`{model}`" in text


def test_doc_is_in_the_table_of_contents() -> None:
    index = (DOC.parent / "index.md").read_text()
    assert "\ntrace-extensions\n" in index
