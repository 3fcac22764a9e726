"""``memcglab reproduce``: the whole quick run, its report and tables, and its user errors."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pandas as pd
import pytest

from memcglab.cli import main
from memcglab.report import (
    COUNTS_HEADING,
    FACTS_HEADING,
    FIRST_SCREEN,
    MEASURED_HEADING,
    MEASURED_RULES,
    claim_cells,
)
from memcglab.reproduce import NOTEBOOKS_DIR, discover
from memcglab.stats import Measurement, judge, load_rules, verdict_words
from memcglab.studies import (
    CLAIM_COLUMNS,
    COUNT_KEYS,
    claim_row,
    claims_json,
    count_row,
    counts_json,
    read_claims,
    read_counts,
)

PRESENT, MISSING = discover(NOTEBOOKS_DIR)
TABLE_HEAD = ("| study | source | claim | measured ± noise | model: median [90%] | P(holds) "
              "| verdict | driver (S_T) | what it would take |")


def first_table(markdown: str, heading: str = MEASURED_HEADING) -> list[str]:
    """The lines of the first Markdown table after ``heading`` in ``markdown``."""
    lines = markdown.splitlines()
    after = lines.index(heading)
    start = next(i for i, line in enumerate(lines) if i > after and line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")),
               len(lines))
    return lines[start:end]


# quick_reproduce (tests/conftest.py): the session's one quick run, shared with tests/notebooks


def test_every_present_notebook_runs(quick_reproduce):
    rc, out = quick_reproduce
    assert rc == 0
    assert PRESENT, "no study notebooks found"
    for nb in PRESENT:
        executed = nbformat.read(out / nb.stem / nb.name, as_version=4)
        assert any(c.get("outputs") for c in executed.cells if c.cell_type == "code")
        assert (out / nb.stem / "result.json").is_file()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no staging left


def test_the_measured_claims_are_the_first_table_on_the_first_screen(quick_reproduce):
    _, out = quick_reproduce
    report = (out / "report.md").read_text()
    lines = report.splitlines()
    assert lines.index(MEASURED_HEADING) < FIRST_SCREEN
    assert next(i for i, line in enumerate(lines) if line.startswith("|")) < FIRST_SCREEN
    table = first_table(report)
    assert table[0] == TABLE_HEAD
    expected = [(nb.stem, c) for nb in PRESENT for c in read_claims(out / nb.stem)
                if c["rule"] in MEASURED_RULES]
    assert len(table) - 2 == len(expected) > 0
    assert len(expected) <= 24  # about 20 rows, one line each
    for row, (stem, claim) in zip(table[2:], expected, strict=True):
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        assert cells[0] == stem[:2]
        assert cells == [" ".join(v.split()).replace("|", "\\|")
                         for v in claim_cells(stem, claim)]
    # the counts are on the appendix page, not before the answers
    assert COUNTS_HEADING not in report
    assert (out / "counts.md").read_text().startswith(COUNTS_HEADING)
    assert (out / "counts.html").read_text().startswith("<!DOCTYPE html>")


def test_every_verdict_word_in_the_table_and_the_report_is_judges(quick_reproduce):
    _, out = quick_reproduce
    claims = pd.read_parquet(out / "claims.parquet")
    words = load_rules().words
    for _, c in claims.iterrows():
        if c["rule"] == "prediction":
            assert pd.isna(c["verdict"]) and c["prediction"]
        else:
            assert c["verdict"] in words[c["rule"]], (c["claim"], c["verdict"])
    assert claims["rules_sha256"].unique().tolist() == [load_rules().sha256]
    assert claims["reason"].notna().all()
    report = (out / "report.md").read_text()
    shown = set(re.findall(r"\| (" + "|".join(sorted(verdict_words(), key=len, reverse=True))
                           + r") \|", report))
    assert shown and shown <= verdict_words()
    for retired in (*load_rules().retired, "confirmed", "refuted"):
        assert f"| {retired} |" not in report and f"| {retired}:" not in report


def test_parquet_tables_have_one_row_per_notebook_and_per_claim(quick_reproduce):
    _, out = quick_reproduce
    results = pd.read_parquet(out / "results.parquet")
    assert results["notebook"].tolist() == [nb.name for nb in PRESENT]
    assert (results["status"] == "ok").all() and results["quick"].all()
    claims = pd.read_parquet(out / "claims.parquet")
    assert claims.columns.tolist() == ["notebook", *CLAIM_COLUMNS]
    assert len(claims) == sum(len(read_claims(out / nb.stem)) for nb in PRESENT)
    assert set(claims["notebook"]) <= {nb.stem for nb in PRESENT}
    counts = pd.read_parquet(out / "counts.parquet")
    assert counts.columns.tolist() == ["notebook", *COUNT_KEYS]
    assert len(counts) == sum(len(read_counts(out / nb.stem)) for nb in PRESENT)


def test_every_figure_is_in_the_report_and_every_link_resolves(quick_reproduce):
    _, out = quick_reproduce
    report = (out / "report.md").read_text()
    linked = re.findall(r"!\[(?:\\.|[^\]\\])*\]\(([^)]+)\)", report)  # alt may escape ]
    pngs = sorted(str(p.relative_to(out)) for p in out.glob("0*/*.png"))
    assert pngs and sorted(linked) == pngs
    for nb in PRESENT:
        assert f"({nb.stem}/{nb.name})" in report
        assert any(p.startswith(nb.stem) for p in pngs), f"{nb.stem} saved no figure"
    html = (out / "report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "<table>" in html
    assert all(f'src="{p}"' in html for p in pngs)
    assert "http://" not in html and "https://" not in html and "<script" not in html


def test_outputs_are_readable_like_ordinary_files(quick_reproduce):
    _, out = quick_reproduce
    umask = os.umask(0)
    os.umask(umask)
    for path in (out / "report.md", out / "results.parquet", out / "counts.parquet",
                 *out.glob("0*/*.png")):
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask


# -- errors a user can make: exit 2, one line, nothing written ---------------------


def test_out_below_a_file_is_refused_before_anything_is_written(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["reproduce", "--quick", "--out", str(blocker / "sub" / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memcglab reproduce: error: --out") and "not a directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_out_that_is_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "r").write_text("x")
    assert main(["reproduce", "--out", str(tmp_path / "r")]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--only", "08"], "--only 08: studies are 01, 02, 03, 04, 05"),
    (["--timeout", "0"], "--timeout 0: must be a positive number of seconds"),
    (["--workers", "0"], "--workers 0: must be at least 1"),
])
def test_bad_options_name_the_option(tmp_path, capsys, argv, message):
    assert main(["reproduce", "--out", str(tmp_path / "o"), *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_unknown_option_exits_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "--fast", "--out", str(tmp_path / "o")])
    assert exc.value.code == 2 and "--fast" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_directory_without_notebooks_is_refused(tmp_path, capsys):
    assert main(["reproduce", "--notebooks", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "none of the notebooks" in capsys.readouterr().err


# -- missing notebooks are named; a second run replaces the first --------------------


_IV = SimpleNamespace(low=-0.1, high=4.9, sources={"parameters"}, coverage=0.9)
TINY_CLAIMS = [claim_row("tiny", "a thread", "1", "1", judge("exact", computed=1, published=1)),
               claim_row("tiny price", "a thread", "2%", "+1.8%",
                         judge("measured", measured=Measurement.point(2.0, 0.1, "%"),
                               interval=_IV),
                         measurement="2% ± 0.1", estimate=1.8, low=-0.1, high=4.9, unit="%",
                         driver="percpu_rmw", driver_st=0.93)]
TINY_COUNTS = [count_row("04", "walks per 1000 charges", "multi, 7 slots", 92.6, "exact")]


def _tiny_notebook(path: Path) -> None:
    claim, counts = claims_json(TINY_CLAIMS), counts_json(TINY_COUNTS)
    params = nbformat.v4.new_code_cell('quick: bool = False  # CI size\n'
                                       'output_dir: str = ""  # where results go')
    params.metadata["tags"] = ["parameters"]
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Study 4: tiny"), params,
        nbformat.v4.new_code_cell(
            "from memcglab.sweep import record_result\n"
            f"record_result(output_dir, {{'quick': quick, 'conclusion': 'All **fine**.', "
            f"'claims': {claim!r}, 'counts': {counts!r}}})")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)


def test_missing_notebooks_are_named_and_a_rerun_replaces_the_old_results(tmp_path, capsys):
    nbdir, out = tmp_path / "nbs", tmp_path / "out"
    nbdir.mkdir()
    _tiny_notebook(nbdir / "04_tiny.ipynb")
    argv = ["reproduce", "--notebooks", str(nbdir), "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    assert "missing notebooks 01, 02, 03, 05" in capsys.readouterr().err
    report = (out / "report.md").read_text()
    assert "missing: 01, 02, 03, 05" in report and "All **fine**." in report
    assert first_table(report)[2:] == [
        "| 04 | a thread | tiny price | 2% ± 0.1 | +1.8% [−0.1, +4.9] | — | undetermined "
        "| percpu_rmw (S_T 0.93) | — |"]
    assert first_table(report, FACTS_HEADING)[2:] == [
        "| 04 | a thread | tiny | 1 | matches | computed 1 equals the published 1 |"]
    assert first_table((out / "counts.md").read_text(), "## Study 4: tiny")[2:] == [
        "| walks per 1000 charges | multi, 7 slots | 92.6 | exact |"]
    claims = pd.read_parquet(out / "claims.parquet")
    assert claims["rule"].tolist() == ["exact", "measured"]
    assert claims.loc[1, ["low", "high", "driver_st"]].tolist() == [-0.1, 4.9, 0.93]
    assert pd.read_parquet(out / "counts.parquet").to_dict("records") == [
        {"notebook": "04_tiny", **TINY_COUNTS[0]}]
    (out / "04_tiny" / "stale.txt").write_text("from an older run")
    assert main(argv) == 0
    assert not (out / "04_tiny" / "stale.txt").exists()
    assert json.loads((out / "04_tiny" / "result.json").read_text())["quick"] is False
    assert sorted(p.name for p in out.iterdir()) == [
        "04_tiny", "claims.parquet", "counts.html", "counts.md", "counts.parquet",
        "report.html", "report.md", "results.parquet"]


def test_default_budgets_are_hang_guards_a_loaded_machine_does_not_reach():
    # The slowest quick notebook took up to 110 s with both cores of a 2-core machine
    # loaded (issue 21); the default must leave a wide margin over that, and the full run's
    # budget must not be smaller than the quick one's.
    from memcglab.reproduce import FULL_BUDGET_S, QUICK_BUDGET_S

    assert QUICK_BUDGET_S >= 5 * 110
    assert FULL_BUDGET_S >= QUICK_BUDGET_S
