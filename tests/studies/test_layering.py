"""The studies sit side by side: none imports another, and what they share sits below them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import memcglab.studies

STUDIES = Path(memcglab.studies.__file__).parent
PKG = STUDIES.parent
PACKAGES = sorted(p.name for p in STUDIES.iterdir()
                  if p.is_dir() and p.name[:1] == "s" and (p / "__init__.py").is_file())


def _names(source: str, package: str) -> set[str]:
    """Absolute names of every memcglab module ``source`` (a module of ``package``) imports,
    relative imports resolved."""
    parts = package.split(".")
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            out.add(base)
            out |= {f"{base}.{a.name}" for a in node.names}
    return {n for n in out if n.startswith("memcglab")}


def _imports(path: Path) -> set[str]:
    package = ".".join(path.relative_to(PKG.parent).parts[:-1])
    return _names(path.read_text(encoding="utf-8"), package)


def test_the_six_studies_each_have_a_package():
    assert PACKAGES == ["s01_single_vs_multi", "s02_policy_and_slots", "s03_pcstock_vs_multi",
                        "s04_layout_false_sharing", "s05_history",
                        "s06_page_counter_stock_v4"]
    flat = sorted(p.name for p in STUDIES.glob("*.py") if p.name != "__init__.py")
    assert not flat, f"modules outside a study package or common/: {flat}"


@pytest.mark.parametrize("package", PACKAGES)
def test_a_study_never_imports_another(package):
    others = {f"memcglab.studies.{p}" for p in PACKAGES if p != package}
    for path in sorted((STUDIES / package).rglob("*.py")):
        bad = sorted(n for n in _imports(path) if any(n == o or n.startswith(o + ".")
                                                      for o in others))
        assert not bad, f"{path.relative_to(PKG)} imports {bad}"


@pytest.mark.parametrize("layer", ["studies/common", "pricing"])
def test_the_shared_layers_know_no_study(layer):
    for path in sorted((PKG / layer).rglob("*.py")):
        bad = sorted(n for n in _imports(path)
                     if any(n.startswith(f"memcglab.studies.{p}") for p in PACKAGES))
        assert not bad, f"{path.relative_to(PKG)} imports {bad}"


def test_the_checker_resolves_relative_and_lazy_imports():
    src = ("from ..s06_page_counter_stock_v4 import pricing\n"
           "def f():\n    import memcglab.studies.s01_single_vs_multi.counts\n")
    names = _names(src, "memcglab.studies.s03_pcstock_vs_multi")
    assert {"memcglab.studies.s06_page_counter_stock_v4.pricing",
            "memcglab.studies.s01_single_vs_multi.counts"} <= names


@pytest.mark.parametrize("package", PACKAGES)
def test_each_facade_names_its_modules(package):
    mod = __import__(f"memcglab.studies.{package}", fromlist=["__all__"])
    files = {p.stem for p in (STUDIES / package).glob("*.py") if p.stem != "__init__"}
    assert files <= set(mod.__all__), f"{package}.__all__ lacks {sorted(files - set(mod.__all__))}"
    assert all(hasattr(mod, name) for name in mod.__all__)
