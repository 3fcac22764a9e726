"""The reproduce report: the measured claims on the first screen, then predictions, exact
facts, the sources and each study; the counts on an appendix page.

:func:`collect` reads what one ``memcglab reproduce`` run left in its study directories
(the executed notebook, the sidecar ``result.json`` with its ``"counts"``, ``"claims"`` and
``"conclusion"``, the PNGs and their captions) into :class:`Study` records.
:func:`render_markdown` writes ``report.md``. Its first table (within the first 40 lines,
a test pins it) lists every measured claim on one line: the measurement with its noise,
the model's median and 90% interval, P(holds), the verdict, the driver and what it would
take. The lab's own predictions follow (:data:`PREDICTIONS_HEADING`, each with its driver
and what it would take to change it), then exact facts,
registered goals and the port's behaviour (:data:`FACTS_HEADING`), the sources by name and
message-id, and each study's conclusion and figures, every caption once.
:func:`render_counts` writes the appendix page ``counts.md`` (the exact counts, per study).
:func:`render_html` turns either into a self-contained page with a table of contents and
anchors (relative links, no scripts, no network); :func:`claims_table` and
:func:`counts_table` are ``claims.parquet`` and ``counts.parquet``. Every verdict word and
prediction phrase in these tables was written by :func:`memcglab.stats.judge`;
:func:`priced_without_driver` names any priced row that lacks its driver.

>>> s = Study("04_x", "Study 4: layout", "ok", 1.5, None, [], "It | fits.", [])
>>> md = render_markdown([s], {"quick": True, "missing": ["01"]}).splitlines()
>>> md.index(MEASURED_HEADING) < 40
True
>>> "<table>" in render_html("| a |\\n|---|\\n| 1 |\\n")
True
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memcglab.plots import captions
from memcglab.studies import CLAIM_COLUMNS, CLAIM_NUMBERS, COUNT_KEYS
from memcglab.studies.common.sources import SOURCES, cite

__all__ = ["COUNTS_FILE", "COUNTS_HEADING", "FACTS_HEADING", "FIRST_SCREEN",
           "MEASURED_HEADING", "MEASURED_RULES", "PREDICTIONS_HEADING", "VERDICT_RULES",
           "Study", "claim_cells", "claims_table", "collect", "conclusion_of", "counts_table",
           "format_driver", "format_interval", "format_value", "md_cell", "priced_without_driver",
           "render_counts", "render_html", "render_markdown", "slug", "title_of"]

MEASURED_HEADING = "## The measured claims: where the model agrees and where it misses"
PREDICTIONS_HEADING = "## The lab's predictions (nothing measured)"
FACTS_HEADING = "## Exact facts, registered goals and the port's behaviour"
COUNTS_HEADING = "# Counts (exact for the traces run)"
#: the appendix page's Markdown file, beside report.md
COUNTS_FILE = "counts.md"
#: the rule kinds of the first table
MEASURED_RULES = ("measured", "qualitative", "shape")
#: the first table's heading must be within this many lines of report.md's top
FIRST_SCREEN = 40
#: where the verdict rules are declared, relative to the memcglab source tree
VERDICT_RULES = ("data/preregistration/verdict_rules.md and its addendum "
                 "verdict_rules_addendum_2026-12-01.md")

CSS = """body{font-family:system-ui,sans-serif;max-width:80rem;margin:2rem auto;padding:0 1rem;
line-height:1.45;color:#222}table{border-collapse:collapse;margin:1rem 0;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.3rem .5rem;vertical-align:top;text-align:left}
th{background:#f3f3f3}img{max-width:100%}code{background:#f5f5f5;padding:0 .2rem}
nav ul{columns:2}figure{margin:1.5rem 0}"""


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


def slug(heading: str) -> str:
    """The anchor of a heading, as GitHub and the HTML page make it.

    >>> slug("## Study 4: layout & false sharing")
    'study-4-layout-false-sharing'
    """
    text = heading.lstrip("#").strip().lower()
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


def _decimals(low: float, high: float, *others: float) -> int:
    """Decimals that show an interval's width to two significant digits (0 to 4)."""
    scale = high - low or max(abs(low), abs(high), *(abs(x) for x in others))
    return 0 if scale == 0 else min(4, max(0, 1 - math.floor(math.log10(scale))))


def format_interval(row: dict[str, Any]) -> str:
    """A priced claim's value for a reader: median and unit, then the 90% interval.

    Signs are shown when any of the numbers is negative (a difference); "—" for a claim
    without an interval.

    >>> format_interval({"estimate": 1.8, "low": -0.1, "high": 4.93, "unit": "%"})
    '+1.8% [−0.1, +4.9]'
    >>> format_interval({"low": 210.0, "high": 388.0, "unit": "cycles/packet"})
    '[210, 388] cycles/packet'
    >>> format_interval({"claim": "exact"})
    '—'
    """
    if row.get("low") is None or row.get("high") is None:
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


def format_driver(row: dict[str, Any]) -> str:
    """The driver and its total Sobol index: ``"percpu_rmw (S_T 0.93)"``; "—" when none.

    >>> format_driver({"driver": "percpu_rmw", "driver_st": 0.934})
    'percpu_rmw (S_T 0.93)'
    """
    if row.get("driver") is None:
        return "—"
    st = row.get("driver_st")
    return row["driver"] if st is None else f"{row['driver']} (S_T {st:.2f})"


def _driver_fault(row: dict[str, Any]) -> str:
    if row.get("low") is None or row.get("high") is None or row["low"] == row["high"]:
        return ""  # unpriced, or a band of zero width: no variance for a driver to explain
    name, st = row.get("driver"), row.get("driver_st")
    if not isinstance(name, str) or not name.strip():
        return "no driver"
    if not isinstance(st, int | float) or not 0.0 <= st <= 1.0:
        return f"driver {name} has S_T {st!r}, not a total Sobol index in [0, 1]"
    return ""


def priced_without_driver(studies: list[Study]) -> list[str]:
    """Every priced row (an interval of non-zero width) without a driver and its total
    Sobol index in [0, 1], as ``"study NN, 'claim': what is wrong"``.

    >>> row = {"claim": "x", "low": 1.0, "high": 2.0, "driver": "c2c", "driver_st": 1.2}
    >>> priced_without_driver([Study("06_v4", "Study 6", "ok", None, None, [row])])
    ["study 06, 'x': driver c2c has S_T 1.2, not a total Sobol index in [0, 1]"]
    """
    return [f"study {s.stem[:2]}, '{c['claim']}': {fault}" for s in studies
            for c in s.claims if (fault := _driver_fault(c))]


def _short(source: str) -> str:
    for s in SOURCES.values():
        if s.name == source:
            return s.short
    return source


def claim_cells(stem: str, row: dict[str, Any]) -> list[str]:
    """The first table's cells for one measured claim of study ``stem``, before escaping."""
    model = format_interval(row) if row.get("low") is not None else row["simulated"]
    return [stem[:2], _short(row["source"]), row["claim"], row.get("measurement") or "—",
            model, row.get("p_text") or "—", row["verdict"], format_driver(row),
            row.get("would_take") or "—"]


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
            *["| " + " | ".join(md_cell(v) for v in r) + " |" for r in rows]]


def _by_rule(studies: list[Study], rules: tuple[str, ...]) -> list[tuple[str, dict]]:
    return [(s.stem, c) for s in studies for c in s.claims if c["rule"] in rules]


def _measured(studies: list[Study]) -> list[str]:
    head = ["study", "source", "claim", "measured ± noise", "model: median [90%]", "P(holds)",
            "verdict", "driver (S_T)", "what it would take"]
    rows = [claim_cells(stem, c) for stem, c in _by_rule(studies, MEASURED_RULES)]
    return _table(head, rows or [["-", "-", "no measured claim was recorded"] + ["-"] * 6])


def _predictions(studies: list[Study]) -> list[str]:
    head = ["study", "source", "quantity", "model: median [90%]", "prediction", "driver (S_T)",
            "what it would take"]
    rows = [[stem[:2], _short(c["source"]), c["claim"], format_interval(c), c["prediction"],
             format_driver(c), c.get("would_take") or "—"]
            for stem, c in _by_rule(studies, ("prediction",))]
    return _table(head, rows or [["-", "-", "no prediction was recorded"] + ["-"] * 4])


def _facts(studies: list[Study]) -> list[str]:
    head = ["study", "source", "claim", "the lab computes", "verdict", "why"]
    rows = [[stem[:2], _short(c["source"]), c["claim"], c["simulated"], c["verdict"],
             c["reason"]] for stem, c in _by_rule(studies, ("exact", "goal", "port"))]
    return _table(head, rows or [["-", "-", "no exact fact was recorded", "-", "-", "-"]])


LEGEND = (
    "The subject of every verdict is the model. A measurement is widened by its stated noise "
    "(or the declared default, 5% of a value that states none); the model's 90% interval "
    "carries the hardware priors, the modelling alternatives and the random seeds. `agrees`: "
    "the interval overlaps the widened measurement and is no wider than twice the claim's "
    "tolerance; `misses`: no overlap, pooled and under every modelling alternative, with what "
    "it would take (each input's value that reaches the measurement, marked infeasible where "
    "the model's own assumptions fail); `undetermined`: too wide, seed-only, or degenerate "
    "(zero or identical by construction). P(holds) is the share of the model's draws inside "
    "the widened measurement, `< 1/n` when none is. A qualitative claim states in its row how "
    "the lab made it a number. Rules, declared before the runs: "
    f"{VERDICT_RULES}; each verdict's reason is in claims.parquet.")


def _alt(path: str) -> str:
    return "figure " + Path(path).stem.replace("_", " ")


def _contents(studies: list[Study], counts_link: str) -> str:
    parts = [(MEASURED_HEADING, "measured claims"), (PREDICTIONS_HEADING, "predictions"),
             (FACTS_HEADING, "exact facts, goals, port"), ("## Sources", "sources")]
    links = [f"[{text}](#{slug(h)})" for h, text in parts]
    links += [f"[{s.stem[:2]}](#{slug(s.title)})" for s in studies]
    return "Contents: " + " · ".join(links) + f" · [appendix: counts]({counts_link})"


def render_markdown(studies: list[Study], run: dict[str, Any],
                    counts_link: str = COUNTS_FILE) -> str:
    """``report.md``: run facts, the three tables, the sources, each study (module doc)."""
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
           _contents(studies, counts_link), "",
           MEASURED_HEADING, "", *_measured(studies), "", f"*{LEGEND}*", "",
           PREDICTIONS_HEADING, "",
           "No measurement exists for these: each row is the lab's prediction, stated before "
           "any comparison: a loss or gain beyond the margin, within it, or no prediction "
           "(the interval spans the margin, or its modelling alternatives disagree).", "",
           *_predictions(studies), "", FACTS_HEADING, "", *_facts(studies), "",
           "## Sources", "", *[f"- {cite(k)}" for k in SOURCES], ""]
    for s in studies:
        when = f", {s.duration_s:.1f} s" if s.duration_s is not None else ""
        out += [f"## {s.title}", "",
                f"Notebook: [{s.stem}.ipynb]({s.stem}/{s.stem}.ipynb) ({s.status}{when}); "
                f"{len(s.counts)} exact counts in the [appendix]({counts_link}#"
                f"{slug(s.title)}).", ""]
        if s.error:
            out += [f"**Failed:** `{md_cell(s.error)}`", ""]
        out += [s.conclusion or "_No conclusion was recorded._", ""]
        for path, caption in s.figures:
            out += [f"![{_alt(path)}]({path})", ""] + ([f"*{md_cell(caption)}*", ""]
                                                       if caption else [])
    if missing:
        out += ["## Missing notebooks", "", *[f"- `{m}`: not found in the notebooks "
                                               "directory" for m in missing], ""]
    return "\n".join(out)


def format_value(value: float) -> str:
    """A count as it was recorded: integers whole, fractions to six significant digits.

    >>> format_value(3), format_value(92.61538), format_value(1234567.0), format_value(0.00081)
    ('3', '92.6154', '1234567', '0.00081')
    """
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    text = f"{value:.6g}"
    return f"{value:.0f}" if "e" in text and abs(value) >= 1 else text


def render_counts(studies: list[Study], report_link: str = "report.md") -> str:
    """``counts.md``, the appendix page: every study's exact counts, one table each."""
    out = [COUNTS_HEADING, "",
           f"Counted in the replay itself, before any cost model: for the traces run they are "
           f"exact and carry no interval. Every price in the [report]({report_link}) rests on "
           "them; `counts.parquet` holds the same rows.", "",
           "Contents: " + " · ".join(f"[{s.stem[:2]}](#{slug(s.title)})" for s in studies), ""]
    for s in studies:
        out += [f"## {s.title}", ""]
        rows = [[c["quantity"], c["configuration"], format_value(c["value"]), c["note"]]
                for c in s.counts]
        out += (_table(["quantity", "configuration", "value", "note"], rows) if rows
                else ["_No counts were recorded._"]) + [""]
    return "\n".join(out)


def claims_table(studies: list[Study]) -> Any:
    """``claims.parquet``: a ``pyarrow.Table`` with ``notebook`` (the study's stem), then
    :data:`memcglab.studies.CLAIM_COLUMNS` (the rule kind, judge's word or prediction, its
    reason and the rules' SHA-256 among them); one row per claim, null where a row has no
    value. The columns of :data:`memcglab.studies.CLAIM_NUMBERS` (``driver_st`` too) are
    float64, the rest strings.
    """
    import pyarrow as pa

    rows = [{"notebook": s.stem, **c} for s in studies for c in s.claims]
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


def _heading_id(token: dict, index: int) -> str:
    text = token.get("text") or "".join(c.get("raw", "") for c in token.get("children", []))
    return slug(text) or f"section-{index}"


def render_html(markdown_text: str, title: str = "memcglab reproduce") -> str:
    """A self-contained HTML page for ``markdown_text`` (mistune, tables enabled): every
    heading an anchor, a table of contents of the second-level headings first, and links
    to ``.md`` pages pointing at their ``.html`` twins."""
    import mistune
    from mistune.toc import add_toc_hook, render_toc_ul

    md = mistune.create_markdown(plugins=["table"], escape=True)
    add_toc_hook(md, min_level=1, max_level=2, heading_id=_heading_id)
    body, state = md.parse(markdown_text)
    body = re.sub(r'href="([^":#]+)\.md(#[^"]*)?"', r'href="\1.html\2"', body)
    items = [t for t in state.env.get("toc_items", []) if t[0] == 2]
    nav = f"<nav>{render_toc_ul(items)}</nav>\n" if items else ""
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{CSS}</style></head>\n<body>\n"
            f"{nav}{body}</body></html>\n")
