"""``memcglab probe``: measure this machine's hardware costs into a machine profile.

:mod:`memcglab.probe.bench` builds and drives the C microbenchmark ``c2c.c``;
:mod:`memcglab.probe.measure` runs it and summarises every value as a median with
its spread; :mod:`memcglab.probe.toprofile` turns the result into a
:class:`memcglab.hardware.MachineProfile` of narrow priors;
:mod:`memcglab.probe.heatmap` draws the core-to-core latency heatmap;
:mod:`memcglab.probe.cli` is the command.
"""

from memcglab.probe.bench import ProbeError, compile_bench
from memcglab.probe.measure import FULL, QUICK, Plan, ProbeResult, Stat, measure
from memcglab.probe.toprofile import to_profile, topology

__all__ = ["FULL", "QUICK", "Plan", "ProbeError", "ProbeResult", "Stat", "compile_bench",
           "measure", "to_profile", "topology"]
