"""The published tables: transcription checks, validation errors, re-derivation."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from memcglab import published
from memcglab.published import load, rederive, table_names

SEEDS = Path(os.environ.get("MEMCGLAB_SEEDS", "/work/shared/seeds"))
TABLES = ["claims", "seed000_netperf", "seed000_percpu_placement", "seed003_madvise",
          "seed004_false_sharing", "thread_quotes"]


def _flat(text: str) -> str:
    # Mail bodies wrap lines and quote ("> "), diff ("+") and comment (" * ") markers start
    # them; a quote is verbatim up to these.
    return " ".join(" ".join(re.sub(r"^[>+*\s]+", "", line) for line in
                             text.splitlines()).split())


def _verbatim(quote: str, text: str) -> bool:
    """``quote`` is in ``text`` up to :func:`_flat`, its ' ... ' gaps matching any words."""
    pos, flat = 0, _flat(text)
    for part in quote.split(" ... "):
        pos = flat.find(_flat(part), pos)
        if pos < 0:
            return False
        pos += len(_flat(part))
    return True


def test_verbatim_allows_wrapping_markers_and_marked_gaps_only():
    mail = "> The older behavior (fully drain) might be due to\n> a limit and is problematic\n"
    assert _verbatim("The older behavior (fully drain) ... is problematic", mail)
    assert not _verbatim("The older behavior (fully drain) is problematic", mail)
    assert not _verbatim("is problematic ... The older behavior", mail)


def test_every_table_loads_and_is_listed():
    assert table_names() == TABLES
    for name in TABLES:
        t = load(name)
        assert len(t.frame) > 0
        assert set(t.units) == set(t.frame.columns)


def test_data_dir_is_at_repository_root():
    assert published.PUBLISHED_DIR == Path(published.__file__).resolve().parents[1] / "data" / \
        "published"
    assert (published.PUBLISHED_DIR / "seed000_netperf.csv").exists()


def test_seed000_values_and_provenance():
    t = load("seed000_netperf")
    f = t.frame
    assert f["clients"].tolist() == [6, 12, 18, 24, 30, 36]
    assert f["without_mbps"].tolist() == [42584.1, 30617.1, 25305.2, 20104.1, 14702.4, 10801.5]
    assert f["with_mbps"].tolist() == [48603.4, 47919.7, 45497.3, 37907.7, 30746.5, 26476.3]
    assert t.machine["cpus"] == 72
    assert t.source["date"] == "2025-04-16"
    assert "netperf -6 -H ::1 -l 60 -t TCP_SENDFILE -- -m 10K" in t.meta["workload"]["command"]
    assert t.units["with_mbps"] == "Mbps"


def test_seed003_machine_and_units():
    t = load("seed003_madvise")
    assert (t.machine["cpus"], t.machine["memory_gb"]) == (40, 50)
    assert t.frame["stddev_ms"].tolist() == [5.097, 11.897, 54.089]
    assert t.units["delta_pct"] == "%"


@pytest.mark.parametrize("name", ["seed000_netperf", "seed003_madvise"])
def test_derived_columns_follow_from_raw_columns(name):
    r = rederive(load(name))
    assert len(r) == len(load(name).frame)
    assert r["consistent"].all(), r[~r["consistent"]]


def test_seed000_improvement_is_truncated_not_rounded():
    # Rounding cannot print the 24- and 36-client figures; this is what the
    # sidecar's "truncate" records, and it shows the check can fail.
    r = rederive(load("seed000_netperf"), rounding="round")
    assert r.loc[~r["consistent"], "published"].tolist() == [88.55, 145.11]


def test_rederive_catches_a_transposed_digit(tmp_path):
    d = _copy(tmp_path)
    csv = d / "seed000_netperf.csv"
    csv.write_text(csv.read_text().replace("20104.1", "21004.1"))
    r = rederive(load("seed000_netperf", d))
    assert r.loc[~r["consistent"], "row"].tolist() == [3]


def test_rederive_rejects_unknown_rounding():
    with pytest.raises(ValueError, match="rounding='ceil'"):
        rederive(load("seed003_madvise"), rounding="ceil")


def _numbers_in_order(line: str, values: list[str]) -> bool:
    pos = 0
    for v in values:
        m = re.compile(r"(?<![\d.])" + re.escape(v) + r"(?![\d])").search(line, pos)
        if m is None:
            return False
        pos = m.end()
    return True


@pytest.mark.parametrize("name", ["seed000_netperf", "seed003_madvise"])
def test_csv_matches_the_mail_excerpt(name):
    t = load(name)
    lines = t.meta["excerpt"][1:]  # the first line is the header
    assert len(lines) == len(t.frame)
    cols = t.meta["columns"]
    for line, (_, row) in zip(lines, t.frame.iterrows(), strict=True):
        printed = [f"{row[c]:.{spec['decimals']}f}" for c, spec in cols.items()]
        assert _numbers_in_order(line, printed), (line, printed)


def _parse_quoted(text: str) -> float:
    m = re.match(r"^(\d+(?:\.\d+)?)(%| million|-second|-CPU)?$", text)
    assert m, text
    scale = 1e6 if m.group(2) == " million" else 1.0
    return float(m.group(1)) * scale


def test_seed004_quoted_values_match_values():
    t = load("seed004_false_sharing")
    for _, r in t.frame.iterrows():
        assert r["quoted_value"] in r["quote"]
        assert _parse_quoted(r["quoted_value"]) == r["value"]
    q = t.frame.set_index("quantity")["value"]
    assert q["median_mremap_throughput_regression"] == 4.38
    assert (q["fixed_gap_to_parent"], q["boot_to_boot_spread"]) == (0.5, 1.2)
    assert (q["vmpressure_size_before"], q["vmpressure_size_after"]) == (112, 24)
    assert (t.machine["cpus"], t.machine["sockets"]) == (176, 1)


def test_claims_bounds():
    c = load("claims").frame.set_index("claim_id")
    assert (c.loc["lru_vs_random", "low"], c.loc["lru_vs_random", "high"]) == (1.0, 3.0)
    assert c.loc["pcstock_negligible", "relation"] == "negligible"


def test_seed000_placements_are_the_objdump_lines():
    t = load("seed000_percpu_placement")
    f = t.frame.set_index("definition")
    assert f["address"].to_dict() == {"DEFINE_PER_CPU": "ffffffff83a26e60",
                                      "DEFINE_PER_CPU_ALIGNED": "ffffffff83a2c5c0"}
    assert (f["size"] == 0x88).all() and t.units["size"] == "bytes"
    for definition, row in f.iterrows():
        fields = row["quote"].split()  # address, flags, section, size, name
        assert (fields[0], int(fields[-2], 16), fields[-1]) == (
            row["address"], row["size"], "memcg_stock"), definition
    assert (t.source["author"], t.source["date"]) == ("Vlastimil Babka", "2025-04-30")
    assert t.source["message_id"] == "f3e0c710-0815-44ad-844c-0e8a079bf663@suse.cz"


def test_thread_quotes_are_looked_up_by_id_and_an_unknown_id_is_named():
    assert published.quote("percpu_aligned_32_only") == "aligned to 32 bytes only"
    with pytest.raises(KeyError, match="quote_id='fix5'.*valid: random_beats_lru"):
        published.quote("fix5")


def test_every_quote_the_studies_use_is_in_the_table():
    studies = Path(published.__file__).parent / "studies"
    used = {m for path in studies.rglob("*.py")
            for m in re.findall(r"""quote\(["']([a-z0-9_]+)["']\)""", path.read_text())}
    assert used and used <= set(load("thread_quotes").frame["quote_id"])


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"seed mails not at {SEEDS} (set MEMCGLAB_SEEDS)")
@pytest.mark.parametrize("name", TABLES)
def test_excerpts_and_quotes_are_verbatim_in_the_seed(name):
    t = load(name)
    if "source" in t.meta:
        seeds = [t.source["seed_file"]] * len(t.frame)
    else:
        seeds = t.frame["seed_file"].tolist()
    for line in t.meta.get("excerpt", []):
        assert line in (SEEDS / seeds[0]).read_text(), line
    if "quote" in t.frame:
        for seed, quote in zip(seeds, t.frame["quote"], strict=True):
            assert _verbatim(quote, (SEEDS / seed).read_text()), quote


# -- validation errors name the table, the field and what is valid --------------------

def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "published"
    shutil.copytree(published.PUBLISHED_DIR, d)
    return d


def test_missing_table_lists_what_exists():
    with pytest.raises(FileNotFoundError, match="have: claims, seed000_netperf"):
        load("seed999")


# (table, edit of its sidecar, what the error must say)
SIDECAR_ERRORS = {
    "bad_unit": ("seed003_madvise",
                 lambda m: m["columns"]["before_ms"].update(unit="msec"),
                 "column 'before_ms' unit='msec'; valid: %"),
    "missing_machine_key": ("seed003_madvise", lambda m: m["machine"].pop("sockets"),
                            "machine lacks sockets"),
    "missing_author": ("seed000_netperf", lambda m: m["source"].pop("author"),
                       "source lacks provenance author"),
    "column_mismatch": ("seed003_madvise", lambda m: m["columns"].pop("stddev_ms"),
                        "CSV columns .* differ from the sidecar"),
    "derived_column_without_decimals": ("seed003_madvise",
                                        lambda m: m["columns"]["after_ms"].pop("decimals"),
                                        "uses column 'after_ms'"),
    "empty_command": ("seed004_false_sharing", lambda m: m["workload"].update(command=""),
                      "workload.command is empty"),
    "address_not_text": ("seed000_percpu_placement",
                         lambda m: m["columns"]["address"].update(dtype="int"),
                         "column 'address' unit 'address' needs dtype 'str'"),
}


@pytest.mark.parametrize("case", SIDECAR_ERRORS)
def test_a_bad_sidecar_is_named(tmp_path, case):
    name, edit, message = SIDECAR_ERRORS[case]
    side = _copy(tmp_path) / f"{name}.json"
    meta = json.loads(side.read_text())
    edit(meta)
    side.write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=message):
        load(name, side.parent)


# (table, text in its CSV, what replaces it, what the error must say)
CSV_ERRORS = {
    "bad_date_in_a_row": ("claims", "2026-04-10", "10 Apr 2026", "row 3 date='10 Apr 2026'"),
    "non_numeric_cell": ("seed003_madvise", "5.097", "5.O97",
                         r"row 1 column 'stddev_ms': '5.O97' is not a number"),
    "fractional_int": ("seed000_netperf", "\n12,", "\n12.5,",
                       "column 'clients': '12.5' is not an integer"),
    "address_not_hexadecimal": ("seed000_percpu_placement", "ffffffff83a2c5c0,",
                                "ffffffff83a2c5g0,", "row 2 column 'address': "
                                "'ffffffff83a2c5g0' is not a hexadecimal address"),
}


@pytest.mark.parametrize("case", CSV_ERRORS)
def test_a_bad_cell_is_named(tmp_path, case):
    name, old, new, message = CSV_ERRORS[case]
    csv = _copy(tmp_path) / f"{name}.csv"
    assert old in csv.read_text(), "the edit must change the table"
    csv.write_text(csv.read_text().replace(old, new))
    with pytest.raises(ValueError, match=message):
        load(name, csv.parent)
