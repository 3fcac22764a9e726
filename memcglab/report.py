"""The reproduce report: every published claim against memcglab, then each study.

:func:`collect` reads what one ``memcglab reproduce`` run left in its study
directories (the executed notebook, the sidecar ``result.json`` with its
``"claims"`` and ``"conclusion"``, the PNGs and their captions) into
:class:`Study` records; :func:`render_markdown` writes ``report.md``, whose first
table lists every claim of every study (:data:`memcglab.studies.CLAIM_KEYS`), and
:func:`render_html` turns that Markdown into a self-contained page (relative image
links, no scripts, no network).

>>> s = Study("04_x", "Study 4: layout", "ok", 1.5, None, [{"claim": "c", "published":
...     "4.38%", "simulated": "0.03%", "verdict": "missed"}], "It | fits.", [])
>>> print(render_markdown([s], {"quick": True, "missing": ["01"]}).splitlines()[6])
| study | claim | published | simulated | verdict |
>>> "<table>" in render_html("| a |\\n|---|\\n| 1 |\\n")
True
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcglab.plots import captions

__all__ = ["Study", "collect", "conclusion_of", "md_cell", "render_html", "render_markdown",
           "title_of"]

CSS = """body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;
line-height:1.45;color:#222}table{border-collapse:collapse;margin:1rem 0;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.3rem .5rem;vertical-align:top;text-align:left}
th{background:#f3f3f3}img{max-width:100%}code{background:#f5f5f5;padding:0 .2rem}
figure{margin:1.5rem 0}figcaption{font-style:italic;color:#444}"""


@dataclass
class Study:
    """One notebook's run, as the report shows it."""

    stem: str
    title: str
    status: str
    duration_s: float | None
    error: str | None
    claims: list[dict[str, str]] = field(default_factory=list)
    conclusion: str = ""
    #: (path relative to the report, caption or "" where the notebook recorded none)
    figures: list[tuple[str, str]] = field(default_factory=list)


def title_of(notebook: Path) -> str:
    """The first Markdown heading of ``notebook`` (its question cell), else its stem."""
    try:
        nb = json.loads(Path(notebook).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Path(notebook).stem
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            for line in "".join(cell.get("source", "")).splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return Path(notebook).stem


def _markdown_outputs(cell: dict) -> list[str]:
    return ["".join(o["data"]["text/markdown"]) for o in cell.get("outputs", [])
            if "text/markdown" in o.get("data", {})]


def conclusion_of(result: dict[str, Any], executed: Path | None) -> str:
    """The study's conclusion: the sidecar's ``"conclusion"``, else the Markdown shown by
    the executed notebook's cell tagged ``conclusion``, else its last Markdown output."""
    text = result.get("conclusion")
    if isinstance(text, str) and text.strip():
        return text.strip()
    try:
        cells = json.loads(Path(executed).read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, TypeError, KeyError):
        return ""
    tagged = [c for c in cells if "conclusion" in c.get("metadata", {}).get("tags", [])]
    shown = [t for c in (tagged or cells) for t in _markdown_outputs(c)]
    return shown[-1].strip() if shown else ""


def _claims(result: dict[str, Any]) -> list[dict[str, str]]:
    from memcglab.studies import read_claims

    try:
        return read_claims(result)
    except (KeyError, ValueError, TypeError):
        return []


def collect(directory: Path, stem: str, notebook: Path, record: dict[str, Any],
            executed_name: str) -> Study:
    """A :class:`Study` from a run's directory (relative to the report) and its run record."""
    result = record.get("result") or {}
    caps = captions(directory)
    pngs = sorted(p.name for p in directory.glob("*.png"))
    figures = [(f"{stem}/{name}", caps.get(name, "")) for name in pngs]
    return Study(stem, title_of(notebook), record.get("status", "failed"),
                 record.get("duration_s"), record.get("error"), _claims(result),
                 conclusion_of(result, directory / executed_name), figures)


def md_cell(text: Any) -> str:
    """``text`` made safe for one Markdown table cell.

    >>> md_cell("a | b\\nc")
    'a \\\\| b c'
    """
    return " ".join(str(text).split()).replace("|", "\\|")


def _claims_table(studies: list[Study]) -> list[str]:
    rows = ["| study | claim | published | simulated | verdict |", "|---|---|---|---|---|"]
    for s in studies:
        for c in s.claims:
            rows.append("| " + " | ".join(md_cell(v) for v in (
                s.stem[:2], c["claim"], c["published"], c["simulated"], c["verdict"])) + " |")
    if len(rows) == 2:
        rows.append("| - | no claims were recorded | - | - | - |")
    return rows


def render_markdown(studies: list[Study], run: dict[str, Any]) -> str:
    """``report.md``: run facts, the claims table first, then each study."""
    ok = sum(s.status == "ok" for s in studies)
    missing = run.get("missing") or []
    facts = [f"{ok} of {len(studies)} notebooks ran", "quick" if run.get("quick") else
             "full size"]
    if run.get("elapsed_s") is not None:
        facts.append(f"{run['elapsed_s']:.0f} s")
    if missing:
        facts.append("missing: " + ", ".join(missing))
    out = ["# memcglab reproduce", "",
           f"memcglab {run.get('version', '?')}; " + "; ".join(facts) + ".", "",
           "## Published claims and what memcglab simulates", "", *_claims_table(studies), ""]
    for s in studies:
        when = f", {s.duration_s:.1f} s" if s.duration_s is not None else ""
        out += [f"## {s.title}", "",
                f"Notebook: [{s.stem}.ipynb]({s.stem}/{s.stem}.ipynb) ({s.status}{when}).", ""]
        if s.error:
            out += [f"**Failed:** `{md_cell(s.error)}`", ""]
        out += [s.conclusion or "_No conclusion was recorded._", ""]
        for path, caption in s.figures:
            alt = caption or Path(path).stem.replace("_", " ")
            out += [f"![{md_cell(alt)}]({path})", ""] + ([f"*{caption}*", ""] if caption else [])
    if missing:
        out += ["## Missing notebooks", "", *[f"- `{m}`: not found in the notebooks "
                                               "directory" for m in missing], ""]
    return "\n".join(out)


def render_html(markdown_text: str, title: str = "memcglab reproduce") -> str:
    """A self-contained HTML page for ``markdown_text`` (mistune, tables enabled)."""
    import mistune

    body = mistune.create_markdown(plugins=["table"], escape=True)(markdown_text)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n<body>\n"
            f"{body}</body></html>\n")
