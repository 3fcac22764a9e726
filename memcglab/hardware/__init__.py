"""Hardware priors and machine profiles: the cost model's inputs, with their sources.

``data/hardware/priors.toml`` gives every cost parameter of
:class:`memcglab.cost.CostParams` and every input of the contention model a prior
(low, typical, high, shape, unit, source); ``data/hardware/profiles/`` describes the
seed threads' machines and a few reference servers, overriding the generic priors
where a machine is known; ``memcglab probe`` writes a profile of this machine.
Hardware figures are model inputs, so simulation-side code may read them (published
results, in ``data/published``, it never may).

>>> p = load_profile("butt-netperf-72cpu")
>>> p.cpus, "sockets" in p.inferred
(72, True)
>>> p.cost_params().c2c_transfer
150.0
"""

from memcglab.hardware.curves import Curve
from memcglab.hardware.profile import (
    MachineProfile,
    hardware_dir,
    load_curves,
    load_priors,
    load_profile,
    profiles,
)
from memcglab.hardware.schema import CURVES, PARAMETERS, HardwareDataError

__all__ = ["CURVES", "PARAMETERS", "Curve", "HardwareDataError", "MachineProfile",
           "hardware_dir", "load_curves", "load_priors", "load_profile", "profiles"]
