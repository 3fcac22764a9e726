"""The replay contract's worked example (shared/spec/replay-contract.md), shared by the
trace-format tests and the ``memcglab replay`` tests."""

from __future__ import annotations

#: the example trace of the contract's "Trace format" section
EXAMPLE = """memcglab-trace 1
cpus 4
cgroup 1 0
cgroup 2 1 max=5000
charge 0 2 3
uncharge 1 2 3
uncharge_direct 1 2 1
drain_all 0 1
cpu_dead 3
set_max 2 4000
offline 2
"""

#: the contract's exact output for EXAMPLE with the default options
EXAMPLE_JSON = (
    '{"batch":64,"counters":{"evictions":0,"stock_hits":0,"walks":3},"failed_charges":0,'
    '"memcgs":{"0":{"max_events":0,"online":true,"usage":0,"watermark":64},'
    '"1":{"max_events":0,"online":true,"usage":0,"watermark":64},'
    '"2":{"max_events":0,"online":false,"usage":0,"watermark":64}},'
    '"model":"multi","ops":9,"seed":0,"set_max_busy":0,"short_uncharges":1,"slots":7,'
    '"stocks":[[null,null,null,null,null,null,null],[null,null,null,null,null,null,null],'
    '[null,null,null,null,null,null,null],[null,null,null,null,null,null,null]],'
    '"warnings":0}\n'
)

#: the contract's exact output for EXAMPLE with ``--model pcstock-v4`` (section "Model
#: pcstock-v4", Examples)
EXAMPLE_V4_JSON = (
    '{"batch":64,"counters":{"evictions":0,"stock_hits":0,"walks":3},"failed_charges":0,'
    '"memcgs":{"0":{"max_events":0,"online":true,"usage":0,"watermark":64},'
    '"1":{"max_events":0,"online":true,"usage":0,"watermark":64},'
    '"2":{"max_events":0,"online":false,"usage":0,"watermark":64}},'
    '"model":"pcstock-v4","ops":9,"seed":0,"set_max_busy":0,"short_uncharges":1,"slots":7,'
    '"stocks":[{},{},{},{}],"warnings":0}\n'
)

#: the v4 section's second example: a drain in the retry loop makes room for the batch
V4_DRAIN_EXAMPLE = """memcglab-trace 1
cpus 2
cgroup 1 0 max=100
cgroup 2 1
charge 1 2 1
charge 0 2 50
"""

#: its exact output with ``--model pcstock-v4``
V4_DRAIN_EXAMPLE_JSON = (
    '{"batch":64,"counters":{"evictions":0,"stock_hits":0,"walks":5},"failed_charges":0,'
    '"memcgs":{"0":{"max_events":0,"online":true,"usage":65,"watermark":65},'
    '"1":{"max_events":1,"online":true,"usage":65,"watermark":65},'
    '"2":{"max_events":0,"online":true,"usage":65,"watermark":128}},'
    '"model":"pcstock-v4","ops":4,"seed":0,"set_max_busy":0,"short_uncharges":0,"slots":7,'
    '"stocks":[{"2":14},{}],"warnings":0}\n'
)
