"""memcglab.report: where a study's conclusion comes from, and the two renderings."""

from __future__ import annotations

import math
import re
from types import SimpleNamespace

import nbformat
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memcglab.report import (
    COUNTS_HEADING,
    FACTS_HEADING,
    FIRST_SCREEN,
    MEASURED_HEADING,
    PREDICTIONS_HEADING,
    VERDICT_RULES,
    Study,
    claims_table,
    collect,
    conclusion_of,
    counts_table,
    format_interval,
    render_counts,
    render_html,
    render_markdown,
    slug,
    title_of,
)
from memcglab.stats import Measurement, judge, load_rules, verdict_words
from memcglab.studies import CLAIM_COLUMNS, COUNT_KEYS, claim_row, claims_json, count_row
from memcglab.studies.common.sources import MULTI, name

IV = SimpleNamespace(low=-0.1, high=4.9, sources={"parameters"}, coverage=0.9,
                     samples=np.linspace(-0.1, 4.9, 100))
PRICED = claim_row("random beats LRU by 1-3%", name(MULTI), "1% to 3%", "random +1.8%",
                   judge("measured", measured=Measurement(1.0, 3.0, 0.0, "%"), interval=IV,
                         tolerance=1.0),
                   measurement="1% to 3%", estimate=1.8, low=-0.1, high=4.9, unit="%",
                   driver="percpu_rmw", driver_st=0.93)
EXACT = claim_row("sizeof(memcg_stock) is 0x88", name(MULTI), "0x88", "136 bytes",
                  judge("exact", computed=136, published=0x88))
PREDICTION = claim_row("pcstock vs multi, netperf", name(MULTI), "not measured", "-40%",
                       judge("prediction", interval=SimpleNamespace(
                           low=-80.0, high=-10.0, sources={"parameters"}, coverage=0.9)),
                       estimate=-40.0, low=-80.0, high=-10.0, unit="%")
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
           "result": {"claims": claims_json([EXACT]), "conclusion": "Done."}}
    s = collect(d, "04_x", tmp_path / "04_x.ipynb", rec, "04_x.ipynb")
    assert s.claims == [EXACT]
    assert s.figures == [("04_x/a.png", "Caption A."), ("04_x/b.png", "")]
    bad = collect(d, "04_x", tmp_path / "04_x.ipynb", {"result": {"claims": "[1]"}}, "n")
    assert bad.claims == [] and bad.status == "failed"


def test_markdown_escapes_cells_and_html_escapes_markup():
    row = claim_row("a|b", name(MULTI), "x\ny", "<b>", judge("exact", computed=1, published=1))
    s = Study("05_y", "Study 5", "failed", None, "boom | bang", [row],
              "Text with <script>alert(1)</script>.", [("05_y/f.png", "")])
    md = render_markdown([s], {"quick": False, "missing": []})
    assert "| 05 | multi-memcg percpu charge cache (Butt, Apr 2025) | a\\|b | <b> | matches |" \
        in md
    assert "**Failed:**" in md
    assert md.rstrip().endswith("![figure f](05_y/f.png)")  # no empty caption line after it
    page = render_html(md)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<td>&lt;b&gt;</td>" in page


def test_a_run_without_claims_still_has_every_table():
    md = render_markdown([Study("01_z", "Study 1", "ok", 1.0, None)], {"quick": True})
    assert "| - | - | no measured claim was recorded | - | - | - | - | - | - |" in md
    assert md.index(MEASURED_HEADING) < md.index(PREDICTIONS_HEADING) < md.index(FACTS_HEADING)
    assert "_No counts were recorded._" in render_counts([Study("01_z", "Study 1", "ok", 1.0,
                                                                None)])


def test_the_measured_claims_come_first_on_one_line_each_then_predictions_then_facts():
    s = Study("02_policy", "Study 2", "ok", 3.0, None, [PRICED, EXACT, PREDICTION], "Done.",
              [], [WALKS])
    md = render_markdown([s], {"quick": True})
    lines = md.splitlines()
    first = lines.index(MEASURED_HEADING)
    assert first < FIRST_SCREEN and lines[first + 2].startswith("| study | source | claim |")
    assert lines[first + 2] == ("| study | source | claim | measured ± noise | model: median "
                                "[90%] | P(holds) | verdict | driver (S_T) | what it would "
                                "take |")
    assert lines[first + 4] == ("| 02 | multi-memcg percpu charge cache (Butt, Apr 2025) | "
                                "random beats LRU by 1-3% | 1% to 3% | +1.8% [−0.1, +4.9] | "
                                f"{PRICED['p_text']} | undetermined | percpu_rmw (S_T 0.93) | — |")
    preds = lines.index(PREDICTIONS_HEADING)
    # a prediction without a driver shows "—" for it and for what it would take
    assert any(line.endswith("| loss beyond 2% | — | — |") for line in lines[preds:])
    facts = lines.index(FACTS_HEADING)
    assert any("| matches |" in line for line in lines[facts:])
    assert first < preds < facts < lines.index("## Study 2")
    legend = next(line for line in lines if line.startswith("*The subject of every verdict"))
    assert VERDICT_RULES in legend and "`< 1/n`" in legend
    # counts live on the appendix page, linked from the study's section
    assert "92.6" not in md and "[appendix](counts.md#study-2)" in md
    appendix = render_counts([s]).splitlines()
    assert appendix[0] == COUNTS_HEADING
    assert ("| walks per 1000 charges | multi, 7 slots, netperf 36 clients | 92.6 | LRU and "
            "random alike |") in appendix
    page = render_html(md)
    assert page.index("<nav>") < page.index("The measured claims")
    assert f'id="{slug(MEASURED_HEADING)}"' in page and 'href="counts.html#study-2"' in page


def test_every_verdict_word_shown_is_judges():
    s = Study("02_policy", "Study 2", "ok", 3.0, None, [PRICED, EXACT, PREDICTION])
    md = render_markdown([s], {"quick": True})
    for word in ("reproduced", "refuted", "confirmed"):
        assert f"| {word} |" not in md
    assert {r["verdict"] for r in s.claims if "verdict" in r} <= verdict_words()


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
    s = Study("02_policy", "Study 2", "ok", 3.0, None, [PRICED, EXACT], "", [], [WALKS])
    claims = claims_table([s])
    assert claims.column_names == ["notebook", *CLAIM_COLUMNS]
    assert claims.schema.field("low").type == pa.float64()
    assert claims.schema.field("driver_st").type == pa.float64()
    assert claims.schema.field("driver").type == pa.string()
    df = claims.to_pandas()
    assert df["rule"].tolist() == ["measured", "exact"]
    assert df["verdict"].tolist() == ["undetermined", "matches"]
    assert df["rules_sha256"].unique().tolist() == [load_rules().sha256]
    assert df["low"][0] == -0.1 and math.isnan(df["low"][1])  # NaN for pandas readers
    exact = claims.to_pylist()[1]
    assert [k for k, v in exact.items() if v is None] == [
        "measurement", "estimate", "low", "high", "unit", "p_holds", "p_text", "driver",
        "driver_st", "would_take", "prediction"]
    counts = counts_table([s])
    assert counts.column_names == ["notebook", *COUNT_KEYS]
    assert counts.to_pylist() == [{"notebook": "02_policy", **WALKS}]
    empty = Study("01_z", "Study 1", "ok", 1.0, None)
    assert claims_table([empty]).num_rows == counts_table([empty]).num_rows == 0
    assert counts_table([empty]).column_names == ["notebook", *COUNT_KEYS]


def test_a_caption_is_printed_once():
    caption = "LRU costs +1.8% [−0.1, +4.9] (90%)."
    s = Study("02_p", "Study 2", "ok", 1.0, None, figures=[("02_p/f.png", caption)])
    md = render_markdown([s], {"quick": True})
    assert md.count("LRU costs") == 1
    assert "![figure f](02_p/f.png)" in md and "*LRU costs +1.8% [−0.1, +4.9] (90%).*" in md
    assert 'src="02_p/f.png" alt="figure f"' in render_html(md)


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
