"""The pricing core's load for seed 000's netperf mix, measured by the compiled engine.

For each client count: generate the receive mix (:func:`memcglab.workloads.netperf_rx`),
replay it through a stock model with events on (:func:`memcglab.engine.replay_compiled`),
split the usage-line transfers into shared and private lines
(:func:`~memcglab.queueing.lines.line_counts`), and price the rest of the charge path
with :func:`memcglab.cost.cycles_per_op` at ``c2c_transfer = 0`` (the transfers are
the network's line stations, priced there): a :class:`memcglab.pricing.FlowLoad` for
:func:`memcglab.pricing.price_flows`. Only simulation inputs: no published number is
read.

>>> load = netperf_load([2, 4], "single", messages=2000)
>>> load.flows, load.shared_names
((2, 4), ('usage:0', 'usage:1'))
>>> load.shared.shape, bool(load.memcg_cycles[0] > 0)
((2, 2), True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memcglab.cost import CostParams, cycles_per_op
from memcglab.engine import replay_compiled
from memcglab.layout import slot_scan_lines
from memcglab.models import MODELS
from memcglab.pricing.load import FlowLoad
from memcglab.queueing.lines import line_counts, trace_parents
from memcglab.workloads import NetperfRxSpec, netperf_rx

__all__ = ["netperf_load"]


def netperf_load(clients: Sequence[int], model: str, messages: int = 100_000, seed: int = 0,
                 slots: int = 7, batch: int = 64, spec: NetperfRxSpec | None = None,
                 cost: CostParams | None = None) -> FlowLoad:
    """Shared-line transfers and charge-path cycles per message at each client count.

    ``spec`` sets the rest of the workload (its ``clients``, ``messages`` and ``seed``
    are replaced); ``cost`` prices the charge path (its ``c2c_transfer`` is ignored).
    """
    if model not in MODELS:
        raise ValueError(f"model={model!r}: unknown; valid: {', '.join(MODELS)}")
    base = spec or NetperfRxSpec()
    price = replace(cost or CostParams(), c2c_transfer=0.0)
    looked = slots if MODELS[model].multi else 1
    lines = slot_scan_lines(looked)
    counts, cycles = [], []
    for n in clients:
        trace = netperf_rx(replace(base, clients=int(n), messages=messages, seed=seed))
        _, events = replay_compiled(trace, model=model, slots=slots, seed=seed, batch=batch,
                                    events=True)
        counts.append(line_counts(events, trace_parents(trace)))
        cycles.append(cycles_per_op(events, price, lines_per_scan=lines, slots=looked))
    return FlowLoad.from_counts(clients, counts, cycles)
