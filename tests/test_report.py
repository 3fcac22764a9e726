"""memcglab.report: where a study's conclusion comes from, and the two renderings."""

from __future__ import annotations

import nbformat

from memcglab.report import Study, collect, conclusion_of, render_html, render_markdown, title_of


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
    assert "| 05 | a\\|b | x y | <b> | no |" in md
    assert "**Failed:**" in md
    assert md.rstrip().endswith("![f](05_y/f.png)")  # no empty caption line after it
    page = render_html(md)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<td>&lt;b&gt;</td>" in page


def test_a_run_without_claims_still_has_a_first_table():
    md = render_markdown([Study("01_z", "Study 1", "ok", 1.0, None)], {"quick": True})
    assert "| - | no claims were recorded | - | - | - |" in md
