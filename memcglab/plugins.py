"""Plugins: modules that register stock models or victim policies when imported.

The registry (:mod:`memcglab.registry`) loads, the first time it is read in a process,
the modules named by ``MEMCGLAB_PLUGINS`` (comma- or space-separated; the kernels a
sweep starts inherit it) and the ``memcglab.plugins`` entry points of installed
distributions (a module, or a function to call). :func:`load_plugins` loads more: a
study calls it with its ``plugins`` parameter, so a sweep's runs record the plugins
they ran with. A plugin that cannot be loaded is a :class:`PluginError` naming it and
where it was named.

>>> load_plugins("memcglab.kernel.victim", where="a doctest")
('memcglab.kernel.victim',)
>>> load_plugins("no_such_plugin")
Traceback (most recent call last):
...
memcglab.plugins.PluginError: plugins: cannot import plugin module 'no_such_plugin': \
ModuleNotFoundError: No module named 'no_such_plugin'
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterable

__all__ = ["PLUGIN_ENV", "PLUGIN_GROUP", "PluginError", "load_plugins", "load_environment",
           "loaded_plugins"]

PLUGIN_ENV = "MEMCGLAB_PLUGINS"
PLUGIN_GROUP = "memcglab.plugins"
_LOADED: dict[str, str] = {}  # plugin -> where it was named


class PluginError(ValueError):
    """A plugin module or entry point that cannot be loaded; the message names it."""


def _split(spec: str | Iterable[str] | None) -> list[str]:
    if spec is None:
        return []
    parts = re.split(r"[\s,]+", spec) if isinstance(spec, str) else list(spec)
    return [p for p in parts if p]


def load_plugins(spec: str | Iterable[str] | None = None, where: str = "plugins"
                 ) -> tuple[str, ...]:
    """Import the plugin modules named in ``spec`` (comma- or space-separated), each of
    which registers policies or models on import; return their names.

    ``where`` names the setting in the error of a module that cannot be imported.
    A module already imported is not imported again.
    """
    names = _split(spec)
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # any failure of the plugin's own code
            raise PluginError(f"{where}: cannot import plugin module {name!r}: "
                              f"{type(exc).__name__}: {exc}") from None
        _LOADED.setdefault(name, where)
    return tuple(names)


def load_environment() -> None:
    """Load the plugins of ``MEMCGLAB_PLUGINS``, then the ``memcglab.plugins`` entry points."""
    from importlib.metadata import entry_points

    load_plugins(os.environ.get(PLUGIN_ENV, ""), where=PLUGIN_ENV)
    for ep in entry_points(group=PLUGIN_GROUP):
        try:
            obj = ep.load()
            if callable(obj):
                obj()
        except Exception as exc:
            raise PluginError(f"entry point {ep.name!r} ({ep.value}) of {PLUGIN_GROUP}: "
                              f"{type(exc).__name__}: {exc}") from None
        _LOADED.setdefault(ep.value, PLUGIN_GROUP)


def loaded_plugins() -> dict[str, str]:
    """The plugins loaded in this process, each with where it was named."""
    return dict(_LOADED)
