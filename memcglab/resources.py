"""Where the study notebooks, the data and the example trace are, installed or not.

A wheel ships the repository's top-level ``notebooks/``, ``data/`` and ``examples/``
inside the package as ``memcglab/_notebooks``, ``memcglab/_data`` and
``memcglab/_examples`` (``setup.py`` maps them); this module finds them there with
:mod:`importlib.resources`. A checkout, or an editable install that uses it in place,
has no such copies, so each lookup falls back to the top-level directory beside the
package. Every module that needs one of these directories asks here, never builds a
path from ``__file__`` itself.

>>> (notebooks_dir() / "01_single_vs_multi.ipynb").is_file()
True
>>> (data_dir() / "published" / "claims.csv").is_file()
True
>>> example_trace().name
'example.trace'
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["data_dir", "example_trace", "examples_dir", "notebooks_dir", "study_notebooks"]

#: top-level directory of a checkout -> the package directory a wheel ships it as
_SHIPPED = {"notebooks": "_notebooks", "data": "_data", "examples": "_examples"}


def _locate(name: str) -> Path:
    root = files("memcglab")
    shipped = root.joinpath(_SHIPPED[name])
    if shipped.is_dir():
        return Path(str(shipped))
    checkout = Path(str(root)).resolve().parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(
        f"memcglab's {name}/ directory is missing: looked for {shipped} (an installed wheel) "
        f"and {checkout} (a checkout); reinstall memcglab")


def notebooks_dir() -> Path:
    """The directory of the study notebooks (``NN_name.ipynb``)."""
    return _locate("notebooks")


def data_dir() -> Path:
    """The data directory: ``published/`` (the seed threads' tables) and the rest of ``data/``."""
    return _locate("data")


def examples_dir() -> Path:
    """The directory of the example inputs (the contract's example trace)."""
    return _locate("examples")


def example_trace() -> Path:
    """The example trace of the replay contract (``examples/example.trace``)."""
    return examples_dir() / "example.trace"


def study_notebooks() -> list[Path]:
    """The study notebooks, ``NN_name.ipynb``, sorted by number.

    >>> [p.name[:2] for p in study_notebooks()][:2]
    ['01', '02']
    """
    return sorted(notebooks_dir().glob("[0-9][0-9]_*.ipynb"))
