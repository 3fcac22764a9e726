"""The documentation site's sources: every page reachable, notebooks rendered not run."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _conf() -> dict[str, object]:
    tree = ast.parse((DOCS / "conf.py").read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


def test_the_notebooks_are_rendered_never_executed():
    conf = _conf()
    assert conf["nb_execution_mode"] == "off"
    assert {"myst_nb", "sphinx.ext.autodoc", "sphinx.ext.autosummary"} <= set(conf["extensions"])
    assert conf["html_theme"] == "pydata_sphinx_theme"


def test_every_page_is_in_the_table_of_contents():
    index = (DOCS / "index.md").read_text()
    toc = re.search(r"```\{toctree\}\n(.*?)```", index, re.S).group(1)
    entries = {line.strip() for line in toc.splitlines() if line.strip()
               and not line.startswith(":")}
    pages = {p.relative_to(DOCS).with_suffix("").as_posix()
             for p in [*DOCS.glob("*.md"), *DOCS.glob("*.rst"), *DOCS.glob("studies/*.md"),
                       *DOCS.glob("audit/*.md")]
             if p.name not in ("README.md", "index.md")} | {"studies/index"}
    assert entries == pages


def test_the_api_reference_is_recursive_over_the_package():
    api = (DOCS / "api.rst").read_text()
    assert ":recursive:" in api and re.search(r"^\s+memcglab$", api, re.M)
    template = (DOCS / "_templates" / "autosummary" / "module.rst").read_text()
    assert ":recursive:" in template


def test_the_pages_drawn_from_the_readme_find_their_sections():
    readme = (ROOT / "README.md").read_text()
    for page in ("layers.md", "differences.md"):
        text = (DOCS / page).read_text()
        for marker in re.findall(r':(?:start-after|end-before): "(.+)"', text):
            assert marker in readme, f"docs/{page}: README.md has no {marker!r}"


def test_the_replay_contract_copy_says_where_it_comes_from():
    text = (DOCS / "replay-contract.md").read_text()
    assert text.startswith("# memcglab replay contract\n")
    assert "shared/spec/replay-contract.md" in text.split("## Command")[0]


def test_docs_build_without_executed_notebooks_is_an_error_naming_the_fix(tmp_path):
    done = subprocess.run(["bash", str(ROOT / ".ci" / "docs.sh"), str(tmp_path)],
                          capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 2
    assert f"no executed notebooks in {tmp_path}" in done.stderr
    assert "memcglab reproduce --quick --out" in done.stderr
