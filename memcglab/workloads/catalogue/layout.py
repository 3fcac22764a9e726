"""The contract's cgroup layouts as ``cgroup`` lines, and which memcg each role charges.

* ``lkp``: one memcg at ``depth`` (default 2: root, ``system.slice``, the service
  cgroup, as the kernel test robot runs a job from ``lkp-bootstrap.service``); every
  task of every instance in it.
* ``per-instance``: ``depth - 1`` shared ancestors, then one memcg per instance.
* ``shared``: ``lkp``'s single memcg at ``depth`` (default 1) directly below the root.

A server daemon's memcg is the ``server_memcg`` alternative (see
:data:`~memcglab.workloads.catalogue.spec.ALTERNATIVES`): with ``per-instance`` and
``hierarchy`` it is one more leaf beside the instances; with ``lkp``/``shared`` the
benchmark's memcg; with ``root`` none (memcg 0: the root charges nothing).

>>> head, roles, bench = cgroups("per-instance", 2, instances=2, server="hierarchy")
>>> [(int(m), int(p)) for m, p in zip(head["memcg"], head["parent"])]
[(1, 0), (2, 1), (3, 1), (4, 1)]
>>> roles, bench.instance.tolist(), bench.server.tolist()
({0: 'root', 1: 'ancestor', 2: 'instance', 3: 'instance', 4: 'server'}, [2, 3], [4, 4])
>>> cgroups("lkp", 2, instances=2, server="root")[2].server.tolist()
[0, 0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcglab.trace import OP_CGROUP, OP_DTYPE, PAGE_COUNTER_MAX

__all__ = ["Memcgs", "cgroups"]


@dataclass(frozen=True, slots=True)
class Memcgs:
    """Per instance: the memcg its own tasks charge, and the one its server's do."""

    instance: np.ndarray
    server: np.ndarray


def _lines(parents: list[int]) -> np.ndarray:
    ops = np.zeros(len(parents), dtype=OP_DTYPE)
    ops["op"] = OP_CGROUP
    ops["cpu"] = -1
    ops["memcg"] = np.arange(1, len(parents) + 1)
    ops["parent"] = parents
    ops["arg"] = PAGE_COUNTER_MAX
    return ops


def cgroups(layout: str, depth: int, instances: int,
            server: str = "hierarchy") -> tuple[np.ndarray, dict[int, str], Memcgs]:
    """The ``cgroup`` lines, memcg ID -> role, and each instance's memcgs."""
    if layout == "per-instance":
        chain = list(range(depth - 1))  # ancestor k (ID k+1) under ID k
        parent = depth - 1
        parents = chain + [parent] * instances
        roles = {0: "root", **{k: "ancestor" for k in range(1, depth)}}
        ids = np.arange(depth, depth + instances, dtype=np.int64)
        roles.update({int(i): "instance" for i in ids})
        if server == "hierarchy":
            parents.append(parent)
            roles[len(parents)] = "server"
            srv = np.full(instances, len(parents), dtype=np.int64)
        elif server == "instance":
            srv = ids.copy()
        else:
            srv = np.zeros(instances, dtype=np.int64)
        return _lines(parents), roles, Memcgs(ids, srv)
    # lkp and shared: one memcg for everything, at the end of a chain of `depth`
    parents = list(range(depth))
    roles = {0: "root"}
    for k in range(1, depth + 1):
        roles[k] = "ancestor"
    if layout == "lkp" and depth >= 2:
        roles[1] = "system.slice"
    roles[depth] = "service" if layout == "lkp" else "shared"
    ids = np.full(instances, depth, dtype=np.int64)
    srv = np.zeros(instances, dtype=np.int64) if server == "root" else ids.copy()
    return _lines(parents), roles, Memcgs(ids, srv)
