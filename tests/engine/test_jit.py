"""The guard that clears stale numba caches when an engine source changes."""

from __future__ import annotations

from memcglab.engine.jit import drop_stale_caches


def test_cache_files_are_dropped_when_a_source_changes(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    pkg = tmp_path / "engine"
    cache = pkg / "__pycache__"
    cache.mkdir(parents=True)
    (pkg / "a.py").write_text("x = 1\n")
    (tmp_path / "trace.py").write_text("OP = 1\n")
    stale = cache / "a.f-1.py311.nbi"
    stale.write_text("old")
    assert drop_stale_caches(pkg) and not stale.exists()
    stale.write_text("fresh")
    assert not drop_stale_caches(pkg) and stale.exists()  # nothing changed
    (tmp_path / "trace.py").write_text("OP = 2\n")  # a dependency outside the package
    assert drop_stale_caches(pkg) and not stale.exists()
