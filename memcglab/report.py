"""The reproduce report: exact counts first, then every published claim, then each study.

:func:`collect` reads what one ``memcglab reproduce`` run left in its study
directories (the executed notebook, the sidecar ``result.json`` with its
``"counts"``, ``"claims"`` and ``"conclusion"``, the PNGs and their captions) into
:class:`Study` records; :func:`render_markdown` writes ``report.md``: the counts
(:data:`memcglab.studies.COUNT_KEYS`, exact for the traces run) come first, then the
claims table (:data:`memcglab.studies.CLAIM_COLUMNS`: each price with its 90% interval,
P(holds), driver and break-even) and its legend, then each study.
:func:`render_html` turns that Markdown into a self-contained page (relative image
links, no scripts, no network); :func:`claims_table` and :func:`counts_table` are the
``claims.parquet`` and ``counts.parquet`` tables.

>>> s = Study("04_x", "Study 4: layout", "ok", 1.5, None, [{"claim": "c", "published":
...     "4.38%", "simulated": "0.03%", "verdict": "refuted"}], "It | fits.", [])
>>> md = render_markdown([s], {"quick": True, "missing": ["01"]}).splitlines()
>>> md.index(COUNTS_HEADING) < md.index(CLAIMS_HEADING)
True
>>> md[md.index(CLAIMS_HEADING) + 2].split(" | ")[3:8]
['simulated', '90% interval', 'P(holds)', 'driver (S_T)', 'break-even']
>>> "<table>" in render_html("| a |\\n|---|\\n| 1 |\\n")
True
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcglab.plots import captions
from memcglab.studies import CLAIM_COLUMNS, CLAIM_NUMBERS, COUNT_KEYS, claim_kind

__all__ = ["CLAIMS_HEADING", "COUNTS_HEADING", "VERDICT_RULES", "Study", "claim_cells",
           "claims_table", "collect", "conclusion_of", "counts_table", "format_driver",
           "format_interval", "format_p", "format_value", "md_cell", "render_html",
           "render_markdown", "title_of"]

COUNTS_HEADING = "## Counts (exact for the traces run)"
CLAIMS_HEADING = "## Published claims and what memcglab simulates"
#: where the verdict rules are declared, relative to the memcglab source tree
VERDICT_RULES = "data/preregistration/verdict_rules.md"

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
    claims: list[dict[str, Any]] = field(default_factory=list)
    conclusion: str = ""
    #: (path relative to the report, caption or "" where the notebook recorded none)
    figures: list[tuple[str, str]] = field(default_factory=list)
    counts: list[dict[str, Any]] = field(default_factory=list)


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


def _rows(read: Any, result: dict[str, Any]) -> list[dict[str, Any]]:
    # A notebook validates its rows when it encodes them (claims_json, counts_json), so
    # a sidecar that fails here was not written by a study; the report shows no rows.
    try:
        return read(result)
    except (KeyError, ValueError, TypeError):
        return []


def collect(directory: Path, stem: str, notebook: Path, record: dict[str, Any],
            executed_name: str) -> Study:
    """A :class:`Study` from a run's directory (relative to the report) and its run record."""
    result = record.get("result") or {}
    caps = captions(directory)
    pngs = sorted(p.name for p in directory.glob("*.png"))
    figures = [(f"{stem}/{name}", caps.get(name, "")) for name in pngs]
    from memcglab.studies import read_claims, read_counts

    return Study(stem, title_of(notebook), record.get("status", "failed"),
                 record.get("duration_s"), record.get("error"), _rows(read_claims, result),
                 conclusion_of(result, directory / executed_name), figures,
                 _rows(read_counts, result))


def md_cell(text: Any) -> str:
    """``text`` made safe for one Markdown table cell.

    >>> md_cell("a | b\\nc")
    'a \\\\| b c'
    """
    return " ".join(str(text).split()).replace("|", "\\|")


def _decimals(low: float, high: float, *others: float) -> int:
    """Decimals that show an interval's width to two significant digits (0 to 4)."""
    scale = high - low or max(abs(low), abs(high), *(abs(x) for x in others))
    return 0 if scale == 0 else min(4, max(0, 1 - math.floor(math.log10(scale))))


def format_interval(row: dict[str, Any]) -> str:
    """A priced claim's value for a reader: estimate and unit, then the 90% interval.

    Signs are shown when any of the numbers is negative (a difference); "—" for a
    claim that is not priced.

    >>> format_interval({"estimate": 1.8, "low": -0.1, "high": 4.93, "unit": "%"})
    '+1.8% [−0.1, +4.9]'
    >>> format_interval({"low": 210.0, "high": 388.0, "unit": "cycles/packet"})
    '[210, 388] cycles/packet'
    >>> format_interval({"claim": "structural"})
    '—'
    """
    if claim_kind(row) != "priced":
        return "—"
    low, high, est = row["low"], row["high"], row.get("estimate")
    numbers = [low, high] + ([est] if est is not None else [])
    d = _decimals(low, high, *numbers)
    sign = "+" if min(numbers) < 0 else ""

    def num(x: float) -> str:
        return f"{x:{sign}.{d}f}".replace("-", "−")

    unit = row["unit"] if row["unit"].startswith("%") else f" {row['unit']}"
    if est is None:
        return f"[{num(low)}, {num(high)}]{unit}"
    return f"{num(est)}{unit} [{num(low)}, {num(high)}]"


def format_p(p: float | None) -> str:
    """The probability that a claim holds: ``"P=0.83"``; "—" when there is none.

    >>> format_p(0.834), format_p(0.001), format_p(0.999), format_p(1.0), format_p(None)
    ('P=0.83', 'P<0.01', 'P>0.99', 'P=1.00', '—')
    """
    if p is None:
        return "—"
    if 0 < p < 0.005:
        return "P<0.01"
    if 0.995 <= p < 1:
        return "P>0.99"
    return f"P={p:.2f}"


def format_driver(row: dict[str, Any]) -> str:
    """The driver and its total Sobol index: ``"percpu_rmw (S_T 0.93)"``; "—" when none.

    >>> format_driver({"driver": "percpu_rmw", "driver_st": 0.934})
    'percpu_rmw (S_T 0.93)'
    """
    if row.get("driver") is None:
        return "—"
    st = row.get("driver_st")
    return row["driver"] if st is None else f"{row['driver']} (S_T {st:.2f})"


def claim_cells(stem: str, row: dict[str, Any]) -> list[str]:
    """The claims table's cells for one claim row of study ``stem``, before escaping."""
    return [stem[:2], row["claim"], row["published"], row["simulated"], format_interval(row),
            format_p(row.get("p_holds")), format_driver(row), row.get("break_even") or "—",
            row["verdict"]]


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
            *["| " + " | ".join(md_cell(v) for v in r) + " |" for r in rows]]


def _claims_table(studies: list[Study]) -> list[str]:
    head = ["study", "claim", "published", "simulated", "90% interval", "P(holds)",
            "driver (S_T)", "break-even", "verdict"]
    rows = [claim_cells(s.stem, c) for s in studies for c in s.claims]
    return _table(head, rows or [["-", "no claims were recorded"] + ["-"] * 7])


def format_value(value: float) -> str:
    """A count as it was recorded: integers whole, fractions to six significant digits.

    >>> format_value(3), format_value(92.61538), format_value(1234567.0), format_value(0.00081)
    ('3', '92.6154', '1234567', '0.00081')
    """
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    text = f"{value:.6g}"
    return f"{value:.0f}" if "e" in text and abs(value) >= 1 else text


def _counts_section(studies: list[Study]) -> list[str]:
    out = [COUNTS_HEADING, "",
           "Counted in the replay itself, before any cost model: for the traces run they are "
           "exact and carry no interval. Every price below rests on them.", ""]
    rows = [[s.stem[:2], c["quantity"], c["configuration"], format_value(c["value"]),
             c["note"]] for s in studies for c in s.counts]
    if not rows:
        return out + ["_No study recorded counts in this run._", ""]
    return out + _table(["study", "quantity", "configuration", "value", "note"], rows) + [""]


LEGEND = (
    f"Verdicts (reproduced, refuted, undetermined) follow rules declared before the runs, in "
    f"`{VERDICT_RULES}` of the memcglab source tree. The 90% interval (estimate, then 5th "
    "and 95th percentiles) includes the uncertainty of the hardware parameters the cost "
    "model prices with, drawn from their priors, not only seed noise. P(holds) is the "
    "probability that the published claim holds under those priors; the driver is the "
    "input with the largest total Sobol index S_T; the break-even is where the conclusion "
    "flips. \"—\" marks a structural or count-derived claim: it carries no interval.")


def _alt(text: str) -> str:
    # A caption quotes intervals ("[0.1, 4.9]"); escaped brackets keep the image link whole.
    return md_cell(text).replace("[", "\\[").replace("]", "\\]")


def render_markdown(studies: list[Study], run: dict[str, Any]) -> str:
    """``report.md``: run facts, the counts, the claims table and its legend, each study."""
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
           *_counts_section(studies), CLAIMS_HEADING, "", *_claims_table(studies), "",
           f"**Reading this table.** {LEGEND}", ""]
    for s in studies:
        when = f", {s.duration_s:.1f} s" if s.duration_s is not None else ""
        out += [f"## {s.title}", "",
                f"Notebook: [{s.stem}.ipynb]({s.stem}/{s.stem}.ipynb) ({s.status}{when}).", ""]
        if s.error:
            out += [f"**Failed:** `{md_cell(s.error)}`", ""]
        out += [s.conclusion or "_No conclusion was recorded._", ""]
        for path, caption in s.figures:
            alt = caption or Path(path).stem.replace("_", " ")
            out += [f"![{_alt(alt)}]({path})", ""] + ([f"*{caption}*", ""] if caption else [])
    if missing:
        out += ["## Missing notebooks", "", *[f"- `{m}`: not found in the notebooks "
                                               "directory" for m in missing], ""]
    return "\n".join(out)


def claims_table(studies: list[Study]) -> Any:
    """``claims.parquet``: a ``pyarrow.Table`` with ``notebook`` (the study's stem), then
    :data:`memcglab.studies.CLAIM_COLUMNS`; one row per claim, ``kind`` always filled
    (:func:`memcglab.studies.claim_kind`), null where a row has no value. The columns of
    :data:`memcglab.studies.CLAIM_NUMBERS` are float64, the rest strings.
    """
    import pyarrow as pa

    rows = [{"notebook": s.stem, **c, "kind": claim_kind(c)} for s in studies for c in s.claims]
    schema = pa.schema([("notebook", pa.string())] + [
        (c, pa.float64() if c in CLAIM_NUMBERS else pa.string()) for c in CLAIM_COLUMNS])
    return pa.table({c: [r.get(c) for r in rows] for c in schema.names}, schema=schema)


def counts_table(studies: list[Study]) -> Any:
    """``counts.parquet``: a ``pyarrow.Table`` with ``notebook``, then
    :data:`memcglab.studies.COUNT_KEYS`; one row per count, ``value`` float64 (exact for
    integers below 2**53), the rest strings."""
    import pyarrow as pa

    rows = [{"notebook": s.stem, **c} for s in studies for c in s.counts]
    schema = pa.schema([("notebook", pa.string())] + [
        (c, pa.float64() if c == "value" else pa.string()) for c in COUNT_KEYS])
    return pa.table({c: [r[c] for r in rows] for c in schema.names}, schema=schema)


def render_html(markdown_text: str, title: str = "memcglab reproduce") -> str:
    """A self-contained HTML page for ``markdown_text`` (mistune, tables enabled)."""
    import mistune

    body = mistune.create_markdown(plugins=["table"], escape=True)(markdown_text)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n<body>\n"
            f"{body}</body></html>\n")
