"""The sweep's check of the grid's models, policies and plugins against the registry.

A sweep parameter named ``model`` or ``policy`` names a stock model or a victim policy
of :mod:`memcglab.registry` (the sweep's table already reads ``model`` as one, for
its ``kernel_version``); one named ``plugins`` names plugin modules (comma-separated
values are separate runs; a value may list several modules separated by spaces), which
the notebook loads with :func:`memcglab.registry.load_plugins` in its own kernel.
:func:`check_registered` imports those plugins here too, so that the models and
policies they register are known, and refuses, before anything runs, a plugin that
cannot be imported or a name that is not registered, saying what is. A parameter
named ``profile`` or ``*_profile`` names a machine profile (a shipped name or a file's
path; ``""`` is a study's own default): each value is loaded here first, so a misspelt
profile is refused with the loader's error before any run starts.

>>> check_registered({"model": ["multi", "pcstock"], "policy": ["lru"]})
>>> check_registered({"policy": ["fifo"]})
Traceback (most recent call last):
...
memcglab.sweep.params.ParameterError: policy=fifo: not a registered victim policy; valid: \
random, rr, lru (a plugin registers more: -p plugins MODULE)
>>> check_registered({"profile": ["cray-1"]})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
memcglab.sweep.params.ParameterError: profile=cray-1: hardware profile 'cray-1': no file ...
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memcglab import registry

__all__ = ["check_registered"]

_KINDS = {"model": ("stock model", registry.MODEL_NAMES),
          "policy": ("victim policy", registry.POLICIES)}


def check_registered(grid: Mapping[str, Sequence[Any]]) -> None:
    """Load the grid's ``plugins``, then refuse ``model`` and ``policy`` values that the
    registry does not hold (:class:`~memcglab.sweep.params.ParameterError`)."""
    from memcglab.sweep.params import ParameterError

    try:
        for spec in grid.get("plugins", ()):
            if isinstance(spec, str):
                registry.load_plugins(spec, where=f"plugins={spec}")
        for name, (what, table) in _KINDS.items():
            for value in grid.get(name, ()):
                if isinstance(value, str) and value not in table:
                    raise ParameterError(
                        f"{name}={value}: not a registered {what}; valid: "
                        f"{', '.join(table)} (a plugin registers more: -p plugins MODULE)")
    except registry.PluginError as exc:
        raise ParameterError(str(exc)) from None
    _check_profiles(grid, ParameterError)


def _check_profiles(grid: Mapping[str, Sequence[Any]], error: type[Exception]) -> None:
    from memcglab.hardware import HardwareDataError, load_profile

    for name, values in grid.items():
        if name != "profile" and not name.endswith("_profile"):
            continue
        for value in values:
            if isinstance(value, str) and value:
                try:
                    load_profile(value)
                except (FileNotFoundError, HardwareDataError) as exc:
                    raise error(f"{name}={value}: {exc}") from None
