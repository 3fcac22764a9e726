"""The package facade: every exported name resolves, lazily."""

from __future__ import annotations

import pytest

import memcglab.layout as layout_pkg


@pytest.mark.parametrize("name", layout_pkg.__all__)
def test_every_export_resolves(name):
    assert getattr(layout_pkg, name) is not None


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        layout_pkg.nope  # noqa: B018
