"""Sphinx configuration of the memcglab documentation site (build: see docs/README.md)."""

from __future__ import annotations

from importlib.metadata import version as _version

project = "memcglab"
author = "the memcglab authors"
copyright = "the memcglab authors; GPL-2.0-only"  # noqa: A001 (Sphinx's name)
release = _version("memcglab")
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",
]

# The studies are the notebooks a `memcglab reproduce --quick` run executed, copied into
# studies/_executed/ by .ci/docs.sh; the site renders them and never runs them again.
nb_execution_mode = "off"
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "README.md", "**/.ipynb_checkpoints"]
templates_path = ["_templates"]

# The API reference: every public module of memcglab, found recursively, so a new
# module appears without editing these pages.
autosummary_generate = True
# Each object is documented once, in the module that defines it: a package's page lists
# its submodules, not the names it re-exports (which would describe the same object
# twice, and clash where a function shares its module's name, like workloads.synthetic).
autodoc_default_options = {"members": True, "show-inheritance": True,
                           "ignore-module-all": True}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"

html_theme = "pydata_sphinx_theme"
html_title = f"memcglab {release}"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
