"""A published number never enters a simulation.

Simulation, workload, engine, layout, cost, pricing, scenario and calibration modules
must not import ``memcglab.published``, ``memcglab.stats`` or ``memcglab.validation``
(which read published and development-set measurements), or ``memcglab.sources`` (the
mail threads they were transcribed from), directly or through another memcglab module,
nor name the data/published, data/validation or data/sources directories. Checked
statically over the source with ast, so a module that does not import cleanly yet is
still checked.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

import memcglab

PKG = Path(memcglab.__file__).resolve().parent
#: the readers of published and development-set measurements
FORBIDDEN = ("memcglab.published", "memcglab.stats", "memcglab.validation",
             "memcglab.sources")
#: the simulation side, as globs relative to the package directory
SIMULATION = ["kernel/**/*.py", "replay*.py", "trace.py", "engine/**/*.py", "engine.py",
              "workloads/**/*.py", "workloads.py", "layout/**/*.py", "cost.py", "events.py",
              "models.py", "queueing/**/*.py", "hardware/**/*.py", "uncertainty/**/*.py",
              "probe/**/*.py", "scenario/**/*.py", "pricing/**/*.py", "calibration/**/*.py"]


def module_name(path: Path, root: Path = PKG) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _docstring_nodes(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def imports_and_paths(source: str, modname: str, is_package: bool = False
                      ) -> tuple[set[str], list[str]]:
    """Absolute names of everything ``source`` imports, and its suspicious strings."""
    tree = ast.parse(source)
    package = modname if is_package else modname.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            names.add(base)
            names |= {f"{base}.{a.name}" for a in node.names}
    docs = _docstring_nodes(tree)
    strings = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            s = node.value.replace("\\", "/")
            if ("data/published" in s or s.strip("/") == "published"
                    or "data/validation" in s or "data/sources" in s
                    or any(f in s for f in FORBIDDEN)):
                strings.append(node.value)
    return names, strings


def _forbidden(name: str) -> bool:
    return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)


@cache
def _graph() -> dict[str, set[str]]:
    g = {}
    for path in PKG.rglob("*.py"):
        name = module_name(path)
        imported, _ = imports_and_paths(path.read_text(), name, path.name == "__init__.py")
        # importing a module runs its parent packages' __init__ first
        parents = {name.rsplit(".", k)[0] for k in range(1, name.count(".") + 1)}
        g[name] = {i for i in imported if i.startswith("memcglab")} | (parents - {name})
    return g


def _reaches_forbidden(start: str, graph: dict[str, set[str]]) -> list[str] | None:
    """The import chain from ``start`` to a forbidden module, or None."""
    seen, stack = {start}, [[start]]
    while stack:
        chain = stack.pop()
        for nxt in sorted(graph.get(chain[-1], ())):
            if _forbidden(nxt):
                return [*chain, nxt]
            # "from memcglab.x import y" names memcglab.x.y, which may be an attribute
            mod = nxt if nxt in graph else nxt.rpartition(".")[0]
            if mod in graph and mod not in seen:
                seen.add(mod)
                stack.append([*chain, mod])
    return None


def simulation_files() -> list[Path]:
    return sorted({p for pat in SIMULATION for p in PKG.glob(pat) if p.is_file()})


def test_the_simulation_side_is_found():
    names = {module_name(p) for p in simulation_files()}
    assert {"memcglab.cost", "memcglab.trace", "memcglab.events"} <= names


@pytest.mark.parametrize("path", simulation_files(), ids=lambda p: module_name(p))
def test_simulation_module_never_reaches_published_data(path):
    name = module_name(path)
    _, strings = imports_and_paths(path.read_text(), name, path.name == "__init__.py")
    assert not strings, f"{name} names published data: {strings}"
    chain = _reaches_forbidden(name, _graph())
    assert chain is None, f"{name} reaches published data: {' -> '.join(chain)}"


# -- the checker itself catches what it must ---------------------------------------

@pytest.mark.parametrize("src", [
    "import memcglab.published",
    "from memcglab import published",
    "from memcglab.stats import verdict_003",
    "from .. import stats",
    "from ..published import load",
    "def f():\n    from memcglab.published import load\n",
    "from memcglab.validation import devset",
])
def test_checker_catches_imports(src):
    names, _ = imports_and_paths(src, "memcglab.kernel.fake")
    assert any(_forbidden(n) for n in names), names


@pytest.mark.parametrize("src", [
    "p = Path('data/published/seed000_netperf.csv')",
    "p = ROOT / 'data' / 'published'",
    "m = importlib.import_module('memcglab.published')",
    "p = f'{root}\\\\data\\\\published\\\\x.csv'",
    "p = Path('data/validation/cases.csv')",
])
def test_checker_catches_paths(src):
    _, strings = imports_and_paths(src, "memcglab.cost")
    assert strings


def test_checker_ignores_docstrings_and_allowed_imports():
    src = '"""Never reads data/published."""\nimport numpy\nfrom memcglab.events import X\n'
    names, strings = imports_and_paths(src, "memcglab.cost")
    assert not strings and not any(_forbidden(n) for n in names)


def test_transitive_chain_is_reported():
    g = {"memcglab.a": {"memcglab.b"}, "memcglab.b": {"memcglab.stats.verdicts"}}
    assert _reaches_forbidden("memcglab.a", g) == ["memcglab.a", "memcglab.b",
                                                   "memcglab.stats.verdicts"]
    assert _reaches_forbidden("memcglab.b", {"memcglab.b": {"memcglab.events"}}) is None
