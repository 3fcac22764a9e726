"""memcglab: a research lab for the Linux memory-cgroup charge path.

The layers, from the bottom up: ``memcglab.kernel`` (faithful ports of the kernel
functions), ``memcglab.trace`` and ``memcglab.replay`` (the replay contract),
``memcglab.engine`` (a compiled engine that reproduces the port exactly),
``memcglab.workloads`` (benchmark traces), ``memcglab.layout``, ``memcglab.cost``,
``memcglab.pricing``, ``memcglab.scenario`` (``memcglab predict``),
``memcglab.validation``, ``memcglab.stats`` and ``memcglab.sweep``.

The entry points a script needs are here, imported on first use so that
``import memcglab`` stays fast (``docs/python-api.md`` shows them in five minutes).
``replay_faithful`` is :func:`memcglab.replay.replay` (the module ``memcglab.replay``
keeps its name):

>>> import memcglab
>>> t = memcglab.parse_text("memcglab-trace 1\\ncpus 1\\ncgroup 1 0\\ncharge 0 1 3\\n")
>>> memcglab.replay_faithful(t)["counters"] == memcglab.replay_compiled(t)["counters"]
True
>>> sorted(memcglab.__all__)[:4]
['BenchmarkSpec', 'MODELS', 'Machine', '__version__']
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.2.0"

#: public name -> (module, attribute)
_EXPORTS: dict[str, tuple[str, str]] = {
    "parse_text": ("memcglab.trace", "parse_text"),
    "read_trace": ("memcglab.trace", "read_trace"),
    "replay_faithful": ("memcglab.replay", "replay"),
    "dumps": ("memcglab.replay", "dumps"),
    "replay_compiled": ("memcglab.engine", "replay_compiled"),
    "MODELS": ("memcglab.models", "MODELS"),
    "build_model": ("memcglab.models", "build_model"),
    "generate": ("memcglab.workloads", "generate"),
    "build_benchmark": ("memcglab.workloads.catalogue", "build"),
    "BenchmarkSpec": ("memcglab.workloads.catalogue", "BenchmarkSpec"),
    "Machine": ("memcglab.workloads.catalogue", "Machine"),
    "struct_layout": ("memcglab.layout", "struct_layout"),
    "load_profile": ("memcglab.hardware", "load_profile"),
    "profiles": ("memcglab.hardware", "profiles"),
    "load_scenario": ("memcglab.scenario.spec", "load_scenario"),
    "predict": ("memcglab.scenario.predict", "predict"),
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'memcglab' has no attribute {name!r}")
    module, attr = _EXPORTS[name]
    # not cached in globals(): a submodule of the same package must stay reachable
    return getattr(importlib.import_module(module), attr)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
