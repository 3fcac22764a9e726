"""memcglab.plots: PNG files written atomically and deterministically, captions kept."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from memcglab import plots  # noqa: E402


@pytest.fixture
def fig():
    plots.set_theme()
    f, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [3, 1, 2])
    ax.set_xlabel("slots")
    yield f
    plt.close(f)


def test_png_is_written_whole_and_same_bytes_each_time(tmp_path, fig):
    a = plots.save_png(fig, tmp_path, "a")
    b = plots.save_png(fig, tmp_path, "b")
    assert a.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert a.read_bytes() == b.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.png", "b.png"]  # no temp files


def test_captions_accumulate_and_replace(tmp_path, fig):
    plots.save_png(fig, tmp_path, "one", caption="first")
    plots.save_png(fig, tmp_path, "two", caption="second")
    plots.save_png(fig, tmp_path, "one", caption="first, redrawn")
    assert plots.captions(tmp_path) == {"one.png": "first, redrawn", "two.png": "second"}


def test_no_output_dir_writes_nothing(tmp_path, fig, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert plots.save_png(fig, "", "x", caption="c") is None
    assert plots.save_png(fig, None, "x") is None
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["", "../x", "a/b", "x.png", ".hidden", "sp ace"])
def test_bad_names_are_refused_with_the_name(tmp_path, fig, name):
    with pytest.raises(ValueError, match="figure name"):
        plots.save_png(fig, tmp_path, name)


def test_finish_returns_a_displayable_caption(tmp_path, fig):
    shown = plots.finish(fig, tmp_path, "f", "What to see.")
    assert shown.data == "*What to see.*"
    assert plots.captions(tmp_path) == {"f.png": "What to see."}


def test_captions_of_a_missing_or_foreign_file(tmp_path):
    assert plots.captions(tmp_path / "nowhere") == {}
    (tmp_path / plots.CAPTIONS_FILE).write_text("[1, 2]")
    assert plots.captions(tmp_path) == {}
