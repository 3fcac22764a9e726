"""Figure helpers shared by the study notebooks: one theme, PNG files, captions.

Every study figure is drawn with seaborn under :func:`set_theme`, saved next to the
notebook's sidecar with :func:`save_png`, and shown with its caption
(:func:`caption`); :func:`finish` does the last two in one call. Captions are also
kept in ``output_dir/figures.json`` (file name -> caption), which is where
``memcglab reproduce`` finds them for the report. Like ``record_result``, nothing is
written when ``output_dir`` is empty (a notebook run by hand).

>>> import tempfile, matplotlib
>>> matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt
>>> d = tempfile.mkdtemp()
>>> fig, ax = plt.subplots()
>>> save_png(fig, d, "walks", caption="Walks per charge fall as slots grow.").name
'walks.png'
>>> captions(d)
{'walks.png': 'Walks per charge fall as slots grow.'}
>>> save_png(fig, "", "walks") is None
True
>>> plt.close(fig)
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

from memcglab.results import atomic_write, read_json, write_json_atomic

__all__ = ["CAPTIONS_FILE", "DPI", "caption", "captions", "finish", "save_png", "set_theme"]

CAPTIONS_FILE = "figures.json"
#: 110 dpi keeps a 7x4 inch figure near 800x450 pixels: sharp in a report, small on disk.
DPI = 110
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


def set_theme() -> None:
    """The studies' look: seaborn's whitegrid, the colour-blind palette, notebook scale."""
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="notebook", palette="colorblind")


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name) or name.endswith(".png"):
        raise ValueError(
            f"figure name {name!r}: must be a file stem of letters, digits, '_', '-' or '.' "
            "(no directory, no .png suffix), e.g. 'leak_growth'"
        )
    return name


def save_png(fig: Any, output_dir: str | os.PathLike[str] | None, name: str,
             caption: str = "", dpi: int = DPI) -> Path | None:
    """Save ``fig`` atomically as ``output_dir/name.png``; record ``caption`` if given.

    Returns the PNG's path, or None when ``output_dir`` is empty (nothing written).
    """
    _check_name(name)
    if output_dir is None or str(output_dir) == "":
        return None
    directory = Path(output_dir)
    directory.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    # No metadata: the same figure gives the same bytes on every run.
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    path = atomic_write(directory / f"{name}.png", lambda f: f.write(buf.getvalue()))
    if caption:
        table = captions(directory)
        table[path.name] = caption
        write_json_atomic(directory / CAPTIONS_FILE, table)
    return path


def captions(output_dir: str | os.PathLike[str]) -> dict[str, str]:
    """The captions recorded in ``output_dir`` (PNG file name -> caption); {} if none."""
    try:
        table = read_json(Path(output_dir) / CAPTIONS_FILE)
    except (FileNotFoundError, ValueError):
        return {}
    return {str(k): str(v) for k, v in table.items()} if isinstance(table, dict) else {}


def caption(text: str) -> Any:
    """A caption to display under a figure in a notebook (an IPython Markdown object)."""
    from IPython.display import Markdown

    return Markdown(f"*{text}*")


def finish(fig: Any, output_dir: str | os.PathLike[str] | None, name: str, text: str) -> Any:
    """Save ``fig`` with its caption (:func:`save_png`) and return the caption to display."""
    save_png(fig, output_dir, name, caption=text)
    return caption(text)
