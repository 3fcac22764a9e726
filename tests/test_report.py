"""memcglab.report: where a study's conclusion comes from, and the two renderings."""

from __future__ import annotations

import math
import re

import nbformat
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcglab.report import (
    CLAIMS_HEADING,
    COUNTS_HEADING,
    VERDICT_RULES,
    Study,
    claims_table,
    collect,
    conclusion_of,
    counts_table,
    format_interval,
    render_html,
    render_markdown,
    title_of,
)
from memcglab.studies import CLAIM_COLUMNS, COUNT_KEYS, claim_row, claims_json, count_row

PRICED = claim_row("seed 000: LRU beats random by 1-3%", "1% to 3%", "LRU +1.8% (typical)",
                   "undetermined", estimate=1.8, low=-0.1, high=4.9, unit="%", p_holds=0.83,
                   driver="percpu_rmw", driver_st=0.93, break_even="percpu_rmw = 0.45 cycles")
SHAPE = claim_row("seed 000: grows with clients", "14% -> 145%", "9% -> 120%", "reproduced")
WALKS = count_row("02", "walks per 1000 charges", "multi, 7 slots, netperf 36 clients", 92.6,
                  "LRU and random alike")


def _executed(path, cells):
    nb = nbformat.v4.new_notebook(cells=cells)
    nbformat.write(nb, path)
    return path


def _md_out(cell, text):
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": text})]
    return cell


def test_conclusion_prefers_the_sidecar_then_the_tagged_cell_then_the_last_markdown(tmp_path):
    caption = _md_out(nbformat.v4.new_code_cell("x"), "*a caption*")
    tagged = _md_out(nbformat.v4.new_code_cell("y"), "The tagged one.")
    tagged.metadata["tags"] = ["conclusion"]
    later = _md_out(nbformat.v4.new_code_cell("z"), "*a later caption*")
    nb = _executed(tmp_path / "a.ipynb", [caption, tagged, later])
    assert conclusion_of({"conclusion": "From the sidecar."}, nb) == "From the sidecar."
    assert conclusion_of({}, nb) == "The tagged one."
    untagged = _executed(tmp_path / "b.ipynb", [caption, later])
    assert conclusion_of({}, untagged) == "*a later caption*"
    assert conclusion_of({}, tmp_path / "missing.ipynb") == ""


def test_title_is_the_first_heading(tmp_path):
    nb = _executed(tmp_path / "04_x.ipynb", [nbformat.v4.new_markdown_cell("intro\n## Study 4: x")])
    assert title_of(nb) == "Study 4: x"
    assert title_of(tmp_path / "09_none.ipynb") == "09_none"


def test_collect_reads_claims_captions_and_figures(tmp_path):
    d = tmp_path / "04_x"
    d.mkdir()
    (d / "b.png").write_bytes(b"png")
    (d / "a.png").write_bytes(b"png")
    (d / "figures.json").write_text('{"a.png": "Caption A."}')
    rec = {"status": "ok", "duration_s": 2.0, "error": None,
           "result": {"claims": '[{"claim": "c", "published": "p", "simulated": "s", '
                                '"verdict": "v"}]', "conclusion": "Done."}}
    s = collect(d, "04_x", tmp_path / "04_x.ipynb", rec, "04_x.ipynb")
    assert s.claims == [{"claim": "c", "published": "p", "simulated": "s", "verdict": "v"}]
    assert s.figures == [("04_x/a.png", "Caption A."), ("04_x/b.png", "")]
    bad = collect(d, "04_x", tmp_path / "04_x.ipynb", {"result": {"claims": "[1]"}}, "n")
    assert bad.claims == [] and bad.status == "failed"


def test_markdown_escapes_cells_and_html_escapes_markup():
    s = Study("05_y", "Study 5", "failed", None, "boom | bang",
              [{"claim": "a|b", "published": "x\ny", "simulated": "<b>", "verdict": "no"}],
              "Text with <script>alert(1)</script>.", [("05_y/f.png", "")])
    md = render_markdown([s], {"quick": False, "missing": []})
    assert "| 05 | a\\|b | x y | <b> | — | — | — | — | no |" in md
    assert "**Failed:**" in md
    assert md.rstrip().endswith("![f](05_y/f.png)")  # no empty caption line after it
    page = render_html(md)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<td>&lt;b&gt;</td>" in page


def test_a_run_without_claims_or_counts_still_has_both_sections():
    md = render_markdown([Study("01_z", "Study 1", "ok", 1.0, None)], {"quick": True})
    assert "| - | no claims were recorded | - | - | - | - | - | - | - |" in md
    assert md.index(COUNTS_HEADING) < md.index("_No study recorded counts in this run._") \
        < md.index(CLAIMS_HEADING)


def test_counts_come_first_then_priced_claims_with_interval_p_driver_and_break_even():
    s = Study("02_policy", "Study 2", "ok", 3.0, None, [PRICED, SHAPE], "Done.", [], [WALKS])
    md = render_markdown([s], {"quick": True})
    lines = md.splitlines()
    counts_at, claims_at = lines.index(COUNTS_HEADING), lines.index(CLAIMS_HEADING)
    assert counts_at < claims_at < lines.index("## Study 2")
    assert lines.index("| study | quantity | configuration | value | note |") < claims_at
    assert ("| 02 | walks per 1000 charges | multi, 7 slots, netperf 36 clients | 92.6 "
            "| LRU and random alike |") in lines[counts_at:claims_at]
    claims = lines[claims_at:]
    assert claims[2] == ("| study | claim | published | simulated | 90% interval | P(holds) "
                         "| driver (S_T) | break-even | verdict |")
    assert claims[4] == ("| 02 | seed 000: LRU beats random by 1-3% | 1% to 3% "
                         "| LRU +1.8% (typical) | +1.8% [−0.1, +4.9] | P=0.83 "
                         "| percpu_rmw (S_T 0.93) | percpu_rmw = 0.45 cycles | undetermined |")
    assert claims[5] == ("| 02 | seed 000: grows with clients | 14% -> 145% | 9% -> 120% "
                         "| — | — | — | — | reproduced |")
    legend = next(line for line in claims if line.startswith("**Reading this table.**"))
    assert VERDICT_RULES in legend and "not only seed noise" in legend
    page = render_html(md)
    assert page.index("Counts (exact") < page.index("Published claims")
    assert "<td>P=0.83</td>" in page


def test_collect_reads_counts_and_a_sidecar_without_counts_has_none(tmp_path):
    rec = {"status": "ok", "result": {"claims": claims_json([PRICED]),
                                      "counts": '[{"study": "02", "quantity": "evictions", '
                                                '"configuration": "lru", "value": 7, '
                                                '"note": ""}]'}}
    s = collect(tmp_path, "02_p", tmp_path / "02_p.ipynb", rec, "02_p.ipynb")
    assert s.claims == [PRICED]
    assert s.counts == [count_row("02", "evictions", "lru", 7)]
    del rec["result"]["counts"]
    assert collect(tmp_path, "02_p", tmp_path / "n", rec, "n").counts == []


def test_parquet_tables_keep_their_columns_and_leave_unpriced_cells_null():
    s = Study("02_policy", "Study 2", "ok", 3.0, None, [PRICED, SHAPE], "", [], [WALKS])
    claims = claims_table([s])
    assert claims.column_names == ["notebook", *CLAIM_COLUMNS]
    assert claims.schema.field("low").type == pa.float64()
    assert claims.schema.field("driver").type == pa.string()
    df = claims.to_pandas()
    assert df["kind"].tolist() == ["priced", "structural"]
    assert df["low"][0] == -0.1 and math.isnan(df["low"][1])  # NaN for pandas readers
    structural = claims.to_pylist()[1]
    assert [k for k, v in structural.items() if v is None] == [
        "estimate", "low", "high", "unit", "p_holds", "driver", "driver_st", "break_even"]
    counts = counts_table([s])
    assert counts.column_names == ["notebook", *COUNT_KEYS]
    assert counts.to_pylist() == [{"notebook": "02_policy", **WALKS}]
    empty = Study("01_z", "Study 1", "ok", 1.0, None)
    assert claims_table([empty]).num_rows == counts_table([empty]).num_rows == 0
    assert counts_table([empty]).column_names == ["notebook", *COUNT_KEYS]


def test_a_caption_that_quotes_an_interval_keeps_its_image_link_whole():
    caption = "LRU costs +1.8% [−0.1, +4.9] (90%)."
    s = Study("02_p", "Study 2", "ok", 1.0, None, figures=[("02_p/f.png", caption)])
    md = render_markdown([s], {"quick": True})
    assert "![LRU costs +1.8% \\[−0.1, +4.9\\] (90%).](02_p/f.png)" in md
    assert 'src="02_p/f.png" alt="LRU costs +1.8% [−0.1, +4.9] (90%)."' in render_html(md)


@given(st.floats(-1e5, 1e5), st.floats(0, 1e5), st.none() | st.floats(-1e5, 1e5))
def test_an_interval_is_rendered_to_within_its_shown_precision(low, width, estimate):
    high = low + width
    row = {"low": low, "high": high, "unit": "cycles/packet", "estimate": estimate}
    text = format_interval(row)
    numbers = [float(x.replace("−", "-")) for x in re.findall(r"[+−]?\d+(?:\.\d+)?", text)]
    shown = re.search(r"\[(\S+), (\S+)\]", text).groups()
    decimals = len(shown[0].split(".")[1]) if "." in shown[0] else 0
    want = [low, high] if estimate is None else [estimate, low, high]
    assert numbers == pytest.approx(want, abs=0.51 * 10 ** -decimals + 1e-9 * abs(high))
    assert text.endswith("cycles/packet") or "cycles/packet [" in text
