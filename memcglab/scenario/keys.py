"""The scenario contract's vocabulary: families, tests, layouts, and every key's rule.

Each key is a :class:`KeySpec`: its default (``None`` when required), what is valid,
and a check. The tables are the contract's ("Workloads", "Kernel designs", "Machine
families"), so a scenario file and :mod:`memcglab.scenario.spec` agree by construction.

>>> workload_keys("netperf", "TCP_RR")["rr_size"].default
1
>>> sorted(workload_keys("netperf", "TCP_SENDFILE"))
['instances', 'ip', 'send_size']
>>> DESIGN_KEYS["refill"].problem("sometimes")
'is unknown'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memcglab.models import BATCH_MAX
from memcglab.models import MODEL_NAMES as REPLAY_MODELS

__all__ = ["DESIGN_KEYS", "FAMILIES", "LAYOUTS", "MACHINE_FAMILIES", "MODEL_NAMES",
           "WORKLOAD_TESTS", "KeySpec", "workload_keys", "MAX_INSTANCES"]

#: the designs' models: the replay contract's, without the historic multi-fix2, plus none
MODEL_NAMES: tuple[str, ...] = ("none", *(m for m in REPLAY_MODELS if m != "multi-fix2"))
#: layout -> default depth
LAYOUTS: dict[str, int] = {"lkp": 2, "per-instance": 2, "shared": 1}
MACHINE_FAMILIES: tuple[str, ...] = (
    "sapphire-rapids", "emerald-rapids", "ice-lake", "cooper-lake", "cascade-lake",
    "skylake", "haswell", "zen2", "zen3", "zen4", "generic")
#: most benchmark instances (pairs, groups, jobs) a scenario may ask for: the trace
#: format's 8192 CPUs, twice over (the robot's nr_threads=200% doubles the threads)
MAX_INSTANCES = 16384

_STREAMS = ("TCP_STREAM", "TCP_SENDFILE", "TCP_MAERTS", "SCTP_STREAM_MANY")
_RR = ("TCP_RR", "UDP_RR", "SCTP_RR")
WORKLOAD_TESTS: dict[str, tuple[str, ...]] = {
    "netperf": ("TCP_STREAM", "TCP_SENDFILE", "TCP_MAERTS", "TCP_RR", "UDP_RR", "SCTP_RR",
                "SCTP_STREAM_MANY"),
    "lmbench": ("bw_unix", "bw_tcp", "lat_tcp", "lat_unix"),
    "hackbench": ("socket", "pipe"),
    "madvise": ("fault_release",),
}
FAMILIES: tuple[str, ...] = tuple(WORKLOAD_TESTS)


@dataclass(frozen=True)
class KeySpec:
    """One key: its default (None: required), valid text, and its kind's bounds."""

    default: Any
    valid: str
    kind: str  # "int", "choice" or "bool"
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is None

    def problem(self, v: Any) -> str:
        """What is wrong with ``v`` ('' when it is valid)."""
        if self.kind == "int":
            if isinstance(v, bool) or not isinstance(v, int):
                return "is not an integer"
            return "" if self.low <= v <= self.high else "is out of range"
        if self.kind == "bool":
            return "" if isinstance(v, bool) else "is not a boolean"
        return "" if v in self.choices else "is unknown"


def _int(default: int | None, low: int, high: int, unit: str = "") -> KeySpec:
    return KeySpec(default, f"an integer from {low} to {high}{unit}", "int", low, high)


def _choice(default: str, *choices: str) -> KeySpec:
    return KeySpec(default, ", ".join(choices), "choice", choices=choices)


_BYTES = 1 << 20  # 1 MiB: a larger message is one netperf/lmbench never sends by default
_INSTANCES = _int(None, 1, MAX_INSTANCES)


def workload_keys(family: str, test: str) -> dict[str, KeySpec]:
    """The keys test ``test`` of ``family`` takes (the contract's Workloads table)."""
    if family == "netperf":
        size = (("send_size", _int(16384, 1, _BYTES, " (bytes, netperf -m)")) if test in _STREAMS
                else ("rr_size", _int(1, 1, _BYTES, " (bytes, netperf -r)")))
        return {"instances": _INSTANCES, size[0]: size[1], "ip": _choice("ipv4", "ipv4", "ipv6")}
    if family == "lmbench":
        # lat_tcp and lat_unix send lmbench3's one-word default message
        default = 65536 if test.startswith("bw_") else 1
        return {"instances": _INSTANCES,
                "message_bytes": _int(default, 1, _BYTES, " (bytes)")}
    if family == "hackbench":
        return {"mode": _choice("process", "process", "threads"),
                "groups": _int(None, 1, 1024), "fds": _int(20, 1, 1024),
                "datasize": _int(100, 1, 65536, " (bytes)"), "loops": _int(100, 1, 100000)}
    if family == "madvise":
        return {"cgroups": _int(None, 1, 4096), "iterations": _int(50, 1, 10000),
                "pages": _int(256, 1, 1 << 18, " (4 KiB pages per iteration)")}
    raise KeyError(family)


#: [base] / [new] keys other than model
DESIGN_KEYS: dict[str, KeySpec] = {
    "batch": _int(64, 1, BATCH_MAX, " (MEMCG_CHARGE_BATCH)"),
    "slots": _int(7, 1, 255, " (NR_MEMCG_STOCK)"),
    "refill": _choice("always", "always", "not-in-irq", "never"),
    "sk_reclaim": _choice("eager", "eager", "lazy"),
}
