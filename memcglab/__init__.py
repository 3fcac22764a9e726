"""memcglab: a research lab for the Linux memory-cgroup charge path.

The layers, from the bottom up: ``memcglab.kernel`` (faithful ports of the kernel
functions), ``memcglab.trace`` and ``memcglab.replay`` (the replay contract),
``memcglab.engine`` (a compiled engine that reproduces the port exactly),
``memcglab.workloads``, ``memcglab.layout``, ``memcglab.cost``, ``memcglab.stats``
and ``memcglab.sweep``.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
