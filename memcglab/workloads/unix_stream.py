"""unix_stream: lmbench's bw_unix, an AF_UNIX stream socket pair per instance.

bw_unix creates ``socketpair(AF_UNIX, SOCK_STREAM)``, forks, and the child writes
64 KiB chunks (``XFERSIZE``) that the parent reads. What of this reaches the memcg
(net/unix/af_unix.c, net/core/sock.c, net/core/skbuff.c, as read for issue 10):

* **No socket memory charge.** ``unix_proto`` has no ``memory_allocated``, so
  ``sk_has_account`` is false: unix sockets never use ``sk_forward_alloc`` and
  never call ``__sk_mem_raise_allocated`` / ``mem_cgroup_sk_charge``. Their
  buffers are limited by ``sk_wmem_alloc`` against ``sk_sndbuf`` only
  (``skb_set_owner_w`` / ``sock_wfree``).
* **No kmem charge of the data either.** ``unix_stream_sendmsg`` ->
  ``sock_alloc_send_pskb`` -> ``alloc_skb_with_frags`` allocates the head with
  ``alloc_skb`` and the frag pages with ``alloc_pages`` using ``sk->sk_allocation``
  (``GFP_KERNEL`` from ``sock_init_data``): no ``__GFP_ACCOUNT``, and the skb
  caches are not ``SLAB_ACCOUNT``. A write and its read touch no charge path.
* **The socket objects are charged once.** ``sk_alloc`` takes each ``unix_sock``
  from the protocol's slab, created ``SLAB_ACCOUNT`` by ``proto_register``, so
  ``socketpair`` charges the writer's memcg through ``obj_cgroup_charge`` ->
  ``try_charge_memcg`` and ``close`` gives it back through the obj stock
  (``refill_obj_stock`` -> ``obj_cgroup_uncharge_pages`` -> ``refill_stock``).

So the trace holds, per pair, one ``charge`` of ``object_pages`` at setup on the
task's CPU and one ``uncharge`` at teardown; the transfer itself contributes no
operation whatever its length. The per-CPU obj stock's byte batching is not
modelled: the objects' bytes are rounded up to whole pages once per pair.

>>> from memcglab.trace import to_text
>>> print(to_text(unix_stream(UnixStreamSpec(cpus=4, pairs=2))), end="")
memcglab-trace 1
cpus 4
cgroup 1 0
cgroup 2 1
cgroup 3 1
charge 0 2 1
charge 2 3 1
uncharge 0 2 1
uncharge 2 3 1
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memcglab.trace import MAX_CPUS, OP_CHARGE, OP_UNCHARGE, Trace
from memcglab.workloads.common import (
    SEED_MAX,
    check_int,
    check_tenants,
    from_columns,
    hierarchy,
)
from memcglab.workloads.sockmem import pages_of

__all__ = ["UnixStreamSpec", "unix_stream", "UNIX_SOCK_BYTES"]

#: sizeof(struct unix_sock) on x86-64, rounded to its slab's 1 KiB objects: an estimate.
UNIX_SOCK_BYTES = 1024


@dataclass(frozen=True, slots=True)
class UnixStreamSpec:
    """Parameters of :func:`unix_stream`; each default says where it comes from."""

    #: CPUs of the machine: seed 000's 72-CPU machine.
    cpus: int = 72
    #: concurrent bw_unix instances, one memcg each, the writer of pair i on CPU
    #: 2i and the reader on 2i+1: 36 fills 72 CPUs.
    pairs: int = 36
    #: bytes of socket objects a pair charges at setup: two unix_sock objects.
    object_bytes: int = 2 * UNIX_SOCK_BYTES
    #: shared cgroups between the root and the pairs' memcgs.
    ancestors: int = 1
    #: seed; the trace draws nothing at random, it is kept for a uniform interface.
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("cpus", self.cpus, 1, MAX_CPUS, "the replay contract's limit")
        check_tenants("pairs", self.pairs, self.ancestors)
        check_int("object_bytes", self.object_bytes, 1, 2**30, "bytes")
        check_int("seed", self.seed, 0, SEED_MAX)

    @property
    def object_pages(self) -> int:
        """Pages charged per pair: object_bytes rounded up to whole pages."""
        return pages_of(self.object_bytes)


def unix_stream(spec: UnixStreamSpec = UnixStreamSpec()) -> Trace:
    """The charges of ``pairs`` bw_unix runs (see the module docstring)."""
    head, tenants = hierarchy(spec.pairs, spec.ancestors)
    cpu = (2 * np.arange(spec.pairs, dtype=np.int64)) % spec.cpus
    op = np.repeat(np.array([OP_CHARGE, OP_UNCHARGE], dtype=np.uint8), spec.pairs)
    return from_columns(spec.cpus, head, op, np.tile(cpu, 2), np.tile(tenants, 2),
                        spec.object_pages, "<unix_stream>")
