"""struct page_counter through the 2021-2022 relayouts: the scenario contract's four layouts.

The contract's ``page_counter_layout`` names four layouts (revision 2): ``v5.11``,
``v5.12``, ``v6.1`` and ``aligned``. Each text below is the struct as the kernel
header has it at that point, field for field, with its annotations; only the
kernel's comments are left out. Where no tree of that version is stored, the
header was rebuilt from a stored one and the patch mail's diff, and checked
against the git blob ids the diff names (``git hash-object`` of the rebuilt file
gives the id in the mail's ``index`` line):

* ``v5.11``: blob 85bd413e784e, the preimage of Feng Tang's relayout ("mm:
  page_counter: relayout structure to reduce false sharing", v2 19 Jan 2021,
  1611040814-33449-1-git-send-email-feng.tang@intel.com; posted against
  v5.11-rc1 and merged for v5.12). Rebuilt by reversing that diff on the v5.12
  blob. ``parent`` sits after ``max``, so ``usage``, the four limits and
  ``parent`` share the first 48 bytes. The same order as v5.10
  (Rtoax/linux-5.10.13, a commented copy of v5.10.13).
* ``v5.12``: blob 679591301994, torvalds/linux include/linux/page_counter.h at
  0d3001e2690a as stored (its text hashes to that id). The relayout moved only
  ``parent``, to the end. Its v1 ("[PATCH 1/2]", 29 Dec 2020,
  1609252514-27795-1-git-send-email-feng.tang@intel.com) carries the same diff
  (same index line), so v1 and v2 are one layout. This layout is v5.12 to v6.0.
* ``aligned``: Eric Dumazet's test patch in the "[net] 4890b686f4" thread (27 Jun
  2022, CANn89iLSWm-c4XE79rUsxzOp3VwXVDhOEPTQnWgeQ48UwM=u7Q@mail.gmail.com): on
  the v5.12 blob, ``usage`` and ``min`` each ``____cacheline_aligned_in_smp`` (the
  diff's index line names blob e267be4ba849; the mailer re-flowed its whitespace, so
  that id could not be checked). The whole struct is then 64-byte aligned, as the contract
  says, but ``usage`` also gets a line of its own and the limits start the next
  one: it is not "the era's order, aligned" with the limits beside ``usage``.
  The kernel's text wins; ``memcglab layout page_counter --era aligned`` shows it.
  Feng Tang's follow-ups in that thread measure this patch (the development set's
  "aligned" cases).
* ``v6.1``: blob 78a1c934e416, Shakeel Butt's "[PATCH v2 2/3] mm: page_counter:
  rearrange struct page_counter fields" (25 Aug 2022,
  20220825000506.239406-3-shakeelb@google.com, in "memcg: optimize charge
  codepath"), rebuilt by applying its diff to the v5.12 blob. ``usage`` alone,
  then the protection and legacy fields, then the read-mostly limits and
  ``parent``, each group after a ``PC_PADDING``, the struct
  ``____cacheline_internodealigned_in_smp``. Its v1 (22 Aug 2022,
  20220822001737.4120417-3-shakeelb@google.com) had three paddings (one before
  ``usage``) and no alignment of the struct; v2 is the one merged. "mm:
  deduplicate cacheline padding code" (Shakeel Butt, 26 Aug 2022,
  20220826224812.550793-1-shakeelb@google.com) later renamed ``PC_PADDING`` to
  the identical ``CACHELINE_PADDING`` of include/linux/cache.h: same layout.

Configuration: x86-64, 64-byte lines (``SMP_CACHE_BYTES`` and, without vSMP,
``INTERNODE_CACHE_BYTES``). No field of these four is under ``#ifdef``; the one
option that matters is ``CONFIG_SMP``: without it ``PC_PADDING`` is empty and the
``_in_smp`` alignments vanish, so v6.1 and ``aligned`` shrink to 112 bytes (``aligned``
then packs exactly like v5.12, v6.1 keeps its own order).

>>> from memcglab.layout.catalogue import struct_layout
>>> [struct_layout("page_counter", e).size for e in ("v5.11", "v5.12", "aligned", "v6.1")]
[112, 112, 192, 192]
"""

from __future__ import annotations

from memcglab.layout.kernel_types import EraText

__all__ = ["PAGE_COUNTER_RELAYOUTS", "PC_V5_11", "PC_V5_12", "PC_ALIGNED", "PC_V6_1"]

PC_V5_11 = r"""
/* include/linux/page_counter.h, blob 85bd413e784e (v5.11): the preimage of Feng Tang's
 * relayout, 1611040814-33449-1-git-send-email-feng.tang@intel.com */
struct page_counter {
    atomic_long_t usage;
    unsigned long min;
    unsigned long low;
    unsigned long high;
    unsigned long max;
    struct page_counter *parent;

    unsigned long emin;
    atomic_long_t min_usage;
    atomic_long_t children_min_usage;

    unsigned long elow;
    atomic_long_t low_usage;
    atomic_long_t children_low_usage;

    unsigned long watermark;
    unsigned long failcnt;
};
"""

PC_V5_12 = r"""
/* include/linux/page_counter.h, blob 679591301994 (v5.12 .. v6.0): torvalds/linux
 * 0d3001e2690a; Feng Tang's relayout moved parent to the end */
struct page_counter {
    atomic_long_t usage;
    unsigned long min;
    unsigned long low;
    unsigned long high;
    unsigned long max;

    unsigned long emin;
    atomic_long_t min_usage;
    atomic_long_t children_min_usage;

    unsigned long elow;
    atomic_long_t low_usage;
    atomic_long_t children_low_usage;

    unsigned long watermark;
    unsigned long failcnt;

    struct page_counter *parent;
};
"""

PC_ALIGNED = r"""
/* include/linux/page_counter.h: Eric Dumazet's test patch on the v5.12 blob 679591301994
 * (27 Jun 2022, CANn89iLSWm-c4XE79rUsxzOp3VwXVDhOEPTQnWgeQ48UwM=u7Q@mail.gmail.com) */
struct page_counter {
    atomic_long_t usage ____cacheline_aligned_in_smp;

    unsigned long min ____cacheline_aligned_in_smp;
    unsigned long low;
    unsigned long high;
    unsigned long max;

    unsigned long emin;
    atomic_long_t min_usage;
    atomic_long_t children_min_usage;

    unsigned long elow;
    atomic_long_t low_usage;
    atomic_long_t children_low_usage;

    unsigned long watermark;
    unsigned long failcnt;

    struct page_counter *parent;
};
"""

PC_V6_1 = r"""
/* include/linux/page_counter.h, blob 78a1c934e416 (v6.1): Shakeel Butt's "mm:
 * page_counter: rearrange struct page_counter fields" v2,
 * 20220825000506.239406-3-shakeelb@google.com */
#if defined(CONFIG_SMP)
struct pc_padding {
    char x[0];
} ____cacheline_internodealigned_in_smp;
#define PC_PADDING(name)    struct pc_padding name
#else
#define PC_PADDING(name)
#endif

struct page_counter {
    atomic_long_t usage;
    PC_PADDING(_pad1_);

    unsigned long emin;
    atomic_long_t min_usage;
    atomic_long_t children_min_usage;

    unsigned long elow;
    atomic_long_t low_usage;
    atomic_long_t children_low_usage;

    unsigned long watermark;
    unsigned long failcnt;

    PC_PADDING(_pad2_);

    unsigned long min;
    unsigned long low;
    unsigned long high;
    unsigned long max;
    struct page_counter *parent;
} ____cacheline_internodealigned_in_smp;
"""

_FENG = ('"mm: page_counter: relayout structure to reduce false sharing" (Feng Tang, '
         "v2 19 Jan 2021, 1611040814-33449-1-git-send-email-feng.tang@intel.com)")
_ERIC = ('Eric Dumazet\'s test patch in "[net] 4890b686f4: netperf.Throughput_Mbps -69.4% '
         'regression" (27 Jun 2022, CANn89iLSWm-c4XE79rUsxzOp3VwXVDhOEPTQnWgeQ48UwM=u7Q'
         "@mail.gmail.com)")
_SHAKEEL = ('"mm: page_counter: rearrange struct page_counter fields" (Shakeel Butt, v2 '
            "25 Aug 2022, 20220825000506.239406-3-shakeelb@google.com)")

#: The contract's page_counter_layout values, in its order.
PAGE_COUNTER_RELAYOUTS: dict[str, EraText] = {
    "v5.11": EraText(PC_V5_11, "torvalds/linux include/linux/page_counter.h blob 85bd413e784e: "
                     f"the preimage of {_FENG}", "parent after max: usage, limits and "
                     "parent on one line"),
    "v5.12": EraText(PC_V5_12, "torvalds/linux include/linux/page_counter.h 0d3001e2690a "
                     f"(blob 679591301994): {_FENG}", "parent moved to the end"),
    "v6.1": EraText(PC_V6_1, "torvalds/linux include/linux/page_counter.h blob 78a1c934e416: "
                    f"{_SHAKEEL}", "usage alone; padded groups; struct aligned"),
    "aligned": EraText(PC_ALIGNED, "torvalds/linux include/linux/page_counter.h 0d3001e2690a "
                       "(blob 679591301994) with " + _ERIC,
                       "v5.12 order, usage and min each cacheline aligned"),
}
