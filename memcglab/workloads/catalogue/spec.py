"""What to generate: :class:`BenchmarkSpec`, its keys, its modelling alternatives, its bounds.

The keys are the scenario contract's ("Workloads" and "Cgroup layouts",
``shared/spec/scenario-contract.md``), with its defaults; the scenario layer
(:mod:`memcglab.scenario.keys`) checks a file with the same table, and a test keeps
the two equal. On top of them, each test names the modelling alternatives it reads
(:data:`ALTERNATIVES`): choices the kernel and benchmark sources leave to the
machine's timing or to how the benchmark was started, each with its valid values,
its default and the prior weight the pricing layer may give it.

>>> spec = BenchmarkSpec("netperf", "TCP_RR", {"instances": 4}, Machine(8, 1, 2))
>>> spec.resolved_keys()
{'instances': 4, 'ip': 'ipv4', 'rr_size': 1}
>>> BenchmarkSpec("netperf", "TCP_RR", {"instances": 4, "send_size": 9}, Machine(8))
Traceback (most recent call last):
...
ValueError: keys.send_size: netperf TCP_RR has no such key (valid: instances, rr_size, ip)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memcglab.trace import MAX_CPUS
from memcglab.workloads.catalogue.knobs import ALTERNATIVES, MAX_INSTANCES, Alternative, Key
from memcglab.workloads.catalogue.tests import TESTS

__all__ = ["ALTERNATIVES", "FAMILIES", "LAYOUTS", "MAX_DEPTH", "MAX_INSTANCES",
           "MAX_TRACE_ROWS", "TEST_ALTERNATIVES", "TEST_DEFAULTS", "Alternative", "BenchmarkSpec",
           "Key", "Machine", "keys_of"]

#: layout -> default depth (the contract's "Cgroup layouts")
LAYOUTS: dict[str, int] = {"lkp": 2, "per-instance": 2, "shared": 1}
MAX_DEPTH = 16
#: the most trace rows a build may make: a few seconds of replay, so a scenario
#: (two kernels, the uncertainty propagation) stays within 30 s on 2 cores
MAX_TRACE_ROWS = 3_000_000

# Every per-test fact lives in the test's record (catalogue.tests.TESTS); the tables
# below are the public names derived from the records, in the contract's order.

#: family -> its tests, in the contract's order
FAMILIES: dict[str, tuple[str, ...]] = {
    fam: tuple(t.test for t in sorted((t for t in TESTS.values() if t.family == fam),
                                      key=lambda t: t.contract_order))
    for fam in dict.fromkeys(t.family for t in TESTS.values())}

#: per-test defaults of alternatives that differ from the general one (each record
#: says why)
TEST_DEFAULTS: dict[tuple[str, str], dict[str, Any]] = {
    k: dict(t.defaults) for k, t in TESTS.items() if t.defaults}

#: the alternatives each test reads ("placement" too, every one)
TEST_ALTERNATIVES: dict[tuple[str, str], tuple[str, ...]] = {
    (f, t): ("placement", *TESTS[(f, t)].reads) for f, ts in FAMILIES.items() for t in ts}


def keys_of(family: str, test: str) -> dict[str, Key]:
    """The contract's keys of ``family``/``test``, in its order, with their defaults."""
    if family not in FAMILIES:
        raise ValueError(f"family={family!r}: must be one of {', '.join(FAMILIES)}")
    if test not in FAMILIES[family]:
        raise ValueError(f"test={test!r}: must be one of {', '.join(FAMILIES[family])}")
    return dict(TESTS[(family, test)].keys)


@dataclass(frozen=True, slots=True)
class Machine:
    """The contract's machine facts: logical CPUs, sockets, SMT threads per core."""

    cpus: int
    sockets: int = 1
    threads_per_core: int = 1

    def __post_init__(self) -> None:
        for name, value, high in (("cpus", self.cpus, MAX_CPUS), ("sockets", self.sockets, 32),
                                  ("threads_per_core", self.threads_per_core, 8)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
                raise ValueError(f"machine.{name}: {value!r} is invalid "
                                 f"(valid: an integer from 1 to {high})")
        if self.cpus % (self.sockets * self.threads_per_core):
            raise ValueError(f"machine.cpus: {self.cpus} is not a multiple of sockets x "
                             f"threads_per_core = {self.sockets * self.threads_per_core} "
                             "(valid: every socket has the same cores and threads)")

    @property
    def cores_per_socket(self) -> int:
        """Physical cores in each socket."""
        return self.cpus // (self.sockets * self.threads_per_core)


@dataclass(frozen=True, slots=True)
class BenchmarkSpec:
    """One benchmark run to turn into a trace.

    ``keys`` are the contract's workload keys (defaults filled in by
    :meth:`resolved_keys`); ``layout``/``depth``/``protection`` its ``[cgroups]``;
    ``sk_reclaim`` the design key; ``operations`` the benchmark operations to
    generate per instance (None: the test's default, :func:`build` says which);
    ``alternatives`` overrides the modelling alternatives' defaults.
    """

    family: str
    test: str
    keys: dict[str, Any]
    machine: Machine
    layout: str = "lkp"
    depth: int | None = None
    protection: bool = False
    sk_reclaim: str = "eager"
    seed: int = 0
    operations: int | None = None
    alternatives: dict[str, Any] = field(default_factory=dict)
    #: the kernel whose accounting the trace follows, for the tests whose accounting
    #: depends on the era (will-it-scale: catalogue.wis.accounting_kernel maps it);
    #: the other tests follow v6.18.19 and ignore it
    kernel: str = "v6.18"

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"family: {self.family!r} is unknown (valid: {', '.join(FAMILIES)})")
        if self.test not in FAMILIES[self.family]:
            raise ValueError(f"test: {self.test!r} is not a {self.family} test "
                             f"(valid: {', '.join(FAMILIES[self.family])})")
        if not isinstance(self.machine, Machine):
            raise ValueError("machine: must be a Machine(cpus, sockets, threads_per_core)")
        known = keys_of(self.family, self.test)
        for k in self.keys:
            if k not in known:
                raise ValueError(f"keys.{k}: {self.family} {self.test} has no such key "
                                 f"(valid: {', '.join(known)})")
        for k, key in known.items():
            if k in self.keys:
                key.check(k, self.keys[k])
            elif key.default is None:
                raise ValueError(f"keys.{k}: missing (required by {self.family} {self.test}; "
                                 f"valid: {key.valid})")
        if self.layout not in LAYOUTS:
            raise ValueError(f"layout: {self.layout!r} is unknown (valid: {', '.join(LAYOUTS)})")
        depth = self.resolved_depth
        if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
            raise ValueError(f"depth: {depth!r} is invalid (valid: an integer from 1 to "
                             f"{MAX_DEPTH})")
        if self.layout == "per-instance" and depth < 2:
            raise ValueError(f"depth: {depth} leaves no shared parent (valid: 2 or more for "
                             "per-instance, depth - 1 shared ancestors)")
        if not isinstance(self.protection, bool):
            raise ValueError(f"protection: {self.protection!r} is invalid (valid: true, false)")
        if self.sk_reclaim not in ("eager", "lazy"):
            raise ValueError(f"sk_reclaim: {self.sk_reclaim!r} is invalid (valid: eager, lazy)")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) \
                or not 0 <= self.seed < 2**64:
            raise ValueError(f"seed: {self.seed!r} is invalid (valid: an integer from 0 to "
                             "2^64-1)")
        if self.operations is not None and (
                isinstance(self.operations, bool) or not isinstance(self.operations, int)
                or not 1 <= self.operations <= 10**7):
            raise ValueError(f"operations: {self.operations!r} is invalid (valid: an integer "
                             "from 1 to 10^7 benchmark operations per instance, or None)")
        reads = TEST_ALTERNATIVES[(self.family, self.test)]
        for k, v in self.alternatives.items():
            if k not in reads:
                raise ValueError(f"alternatives.{k}: {self.family} {self.test} reads no such "
                                 f"alternative (valid: {', '.join(reads) or 'none'})")
            ALTERNATIVES[k].check(k, v)
        if not isinstance(self.kernel, str):
            raise ValueError(f"kernel: {self.kernel!r} is invalid (valid: a version such as "
                             "'v6.1')")
        if TESTS[(self.family, self.test)].by_kernel:
            from memcglab.workloads.catalogue.wis import accounting_kernel
            accounting_kernel(self.kernel)

    def __hash__(self) -> int:
        # the kernel enters only for the tests that read it, so the other tests'
        # hashes (file names, seeds) are as before
        era = (self.kernel,) if TESTS[(self.family, self.test)].by_kernel else ()
        return hash((self.family, self.test, tuple(sorted(self.keys.items())), self.machine,
                     self.layout, self.depth, self.protection, self.sk_reclaim, self.seed,
                     self.operations, tuple(sorted(self.alternatives.items())), *era))

    @property
    def resolved_depth(self) -> int:
        """``depth``, or the layout's default when it is None."""
        return LAYOUTS[self.layout] if self.depth is None else self.depth

    def resolved_keys(self) -> dict[str, Any]:
        """Every key of the test, the contract's default where none is given (sorted)."""
        known = keys_of(self.family, self.test)
        return dict(sorted((k, self.keys.get(k, key.default)) for k, key in known.items()))

    def resolved_alternatives(self) -> dict[str, Any]:
        """Every alternative the test reads, its default where none is given (sorted)."""
        reads = TEST_ALTERNATIVES[(self.family, self.test)]
        own = TEST_DEFAULTS.get((self.family, self.test), {})
        return dict(sorted((k, self.alternatives.get(k, own.get(k, ALTERNATIVES[k].default)))
                           for k in reads))
