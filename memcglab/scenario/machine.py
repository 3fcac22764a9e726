"""The machine of a scenario: a shipped profile, a profile file, or the contract's facts.

``[machine] profile = NAME`` names a file under ``data/hardware/profiles/`` (the
contract); a value that ends in ``.toml`` or holds a ``/`` is read as a path instead,
so a profile written by ``memcglab probe`` prices a scenario on the machine it
measured. Without a profile, the four facts and the family make one
(:func:`memcglab.hardware.profile_from_facts`).

>>> from memcglab.scenario.spec import Machine
>>> p = resolve_machine(Machine(profile="lkp-2s-224t-spr"), "s.toml")
>>> p.cpus, p.sockets, p.family
(224, 2, 'sapphire-rapids')
>>> resolve_machine(Machine(profile="nope"), "s.toml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
memcglab.scenario.spec.ScenarioError: s.toml: machine.profile: 'nope' is not a shipped ...
"""

from __future__ import annotations

from memcglab.hardware import HardwareDataError, MachineProfile, load_profile, profiles
from memcglab.hardware.families import profile_from_facts
from memcglab.scenario.spec import Machine, ScenarioError

__all__ = ["resolve_machine"]


def resolve_machine(machine: Machine, file: object) -> MachineProfile:
    """The :class:`~memcglab.hardware.MachineProfile` a scenario's ``[machine]`` means."""
    if machine.profile is None:
        return profile_from_facts(machine.cpus, machine.sockets, machine.threads_per_core,
                                  machine.family, machine.ghz)
    name = machine.profile
    is_path = name.endswith(".toml") or "/" in name
    try:
        return load_profile(name)
    except FileNotFoundError:
        if is_path:
            raise ScenarioError(file, "machine.profile", f"{name!r}: no such file",
                                "a profile name or the path of a profile file") from None
        raise ScenarioError(file, "machine.profile", f"{name!r} is not a shipped profile",
                            ", ".join(profiles()) + ", or a path to a profile file") from None
    except HardwareDataError as e:
        # the loader's own message names the profile file and its field
        raise ScenarioError(file, "machine.profile", f"{name!r} is invalid: {e}",
                            "a profile file memcglab.hardware.load_profile accepts") from None
