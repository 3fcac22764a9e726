"""The kernel's building-block types, as C text, for the struct catalogue.

Every struct in :mod:`memcglab.layout.catalogue` is laid out from C text parsed by
:func:`memcglab.layout.cparse.parse_c`; this module holds the types they embed:
lists, locks, ``work_struct``, ``timer_list``, ``cgroup_file`` and the writeback
types. Fields are in the kernel's order, with the config switches that add or
remove them; the comment above each type cites where it was read. Sizes they give
on x86-64 (non-debug, !PREEMPT_RT unless said): list_head 16, spinlock_t 4,
struct mutex 24 (32 with ``wait_list``, see ``MEMCGLAB_MUTEX_WAIT_LIST``),
work_struct 32, timer_list 40, cgroup_file 56, lockdep_map 40 (48 with LOCK_STAT).

``MEMCGLAB_MUTEX_WAIT_LIST`` is not a kernel option: it selects the struct mutex
of the trees before the 2026 locking change that replaced ``wait_list`` by
``first_waiter`` (kernel notes section 4.2); the catalogue's eras set it.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["KERNEL_TYPES", "EraText"]

class EraText(NamedTuple):
    """One era of a catalogue struct: its C text and where it was read."""

    text: str
    source: str
    summary: str
    percpu: str = ""  # DEFINE_PER_CPU or DEFINE_PER_CPU_ALIGNED, for per-CPU structs
    defines: tuple[tuple[str, str], ...] = ()  # era-selecting macros (MEMCGLAB_*)

KERNEL_TYPES = r"""
/* include/linux/types.h (torvalds/linux) */
struct list_head { struct list_head *next, *prev; };
struct hlist_node { struct hlist_node *next, **pprev; };

/* include/linux/rbtree_types.h (torvalds/linux) */
struct rb_node {
    unsigned long  __rb_parent_color;
    struct rb_node *rb_right;
    struct rb_node *rb_left;
} __attribute__((aligned(sizeof(long))));
struct rb_root { struct rb_node *rb_node; };
struct rb_root_cached { struct rb_root rb_root; struct rb_node *rb_leftmost; };

/* include/linux/lockdep_types.h (torvalds/linux 06d074298583) */
#ifdef CONFIG_LOCKDEP
struct lockdep_map {
    struct lock_class_key        *key;
    struct lock_class        *class_cache[2];
    const char            *name;
    u8                wait_type_outer;
    u8                wait_type_inner;
    u8                lock_type;
#ifdef CONFIG_LOCK_STAT
    int                cpu;
    unsigned long            ip;
#endif
};
#endif

/* include/asm-generic/qspinlock_types.h (x86 arch_spinlock_t, little endian) */
typedef struct qspinlock {
    union {
        atomic_t val;
        struct { u8 locked; u8 pending; };
        struct { u16 locked_pending; u16 tail; };
    };
} arch_spinlock_t;

/* include/linux/spinlock_types_raw.h (torvalds/linux 31552385f8e9) */
typedef struct raw_spinlock {
    arch_spinlock_t raw_lock;
#ifdef CONFIG_DEBUG_SPINLOCK
    unsigned int magic, owner_cpu;
    void *owner;
#endif
#ifdef CONFIG_DEBUG_LOCK_ALLOC
    struct lockdep_map dep_map;
#endif
} raw_spinlock_t;

/* include/linux/rtmutex.h (torvalds/linux) */
struct rt_mutex_base {
    raw_spinlock_t        wait_lock;
    struct rb_root_cached   waiters;
    struct task_struct    *owner;
};

/* include/linux/spinlock_types.h (torvalds/linux). The !RT union's debug alias
 * { u8 __padding[LOCK_PADSIZE]; struct lockdep_map dep_map; } overlays rlock's own
 * dep_map exactly, so it is left out: it changes no size or offset. */
#ifndef CONFIG_PREEMPT_RT
typedef struct spinlock {
    union {
        struct raw_spinlock rlock;
    };
} spinlock_t;
#else
typedef struct spinlock {
    struct rt_mutex_base    lock;
#ifdef CONFIG_DEBUG_LOCK_ALLOC
    struct lockdep_map    dep_map;
#endif
} spinlock_t;
#endif

/* include/linux/seqlock_types.h (torvalds/linux) */
typedef struct seqcount {
    unsigned sequence;
#ifdef CONFIG_DEBUG_LOCK_ALLOC
    struct lockdep_map dep_map;
#endif
} seqcount_t;

/* include/linux/osq_lock.h (torvalds/linux) */
struct optimistic_spin_queue { atomic_t tail; };

/* include/linux/mutex_types.h (torvalds/linux 25500ba7e77c: first_waiter; the older
 * trees have struct list_head wait_list in its place, kernel notes section 4.2) */
#ifndef CONFIG_PREEMPT_RT
struct mutex {
    atomic_long_t        owner;
    raw_spinlock_t        wait_lock;
#ifdef CONFIG_MUTEX_SPIN_ON_OWNER
    struct optimistic_spin_queue osq;
#endif
#ifdef MEMCGLAB_MUTEX_WAIT_LIST
    struct list_head    wait_list;
#else
    struct mutex_waiter    *first_waiter;
#endif
#ifdef CONFIG_DEBUG_MUTEXES
    void            *magic;
#endif
#ifdef CONFIG_DEBUG_LOCK_ALLOC
    struct lockdep_map    dep_map;
#endif
};
#else
struct mutex {
    struct rt_mutex_base    rtmutex;
#ifdef CONFIG_DEBUG_LOCK_ALLOC
    struct lockdep_map    dep_map;
#endif
};
#endif

/* include/linux/local_lock_internal.h (v6.15+ form; torvalds/linux 026659b9774e for
 * local_lock_t; local_trylock_t as merged for v6.15 by "locking/local_lock, mm:
 * Replace localtry_ helpers with local_trylock_t type", Alexei Starovoitov, Apr 2025,
 * with the debug fields inlined as later trees have them: same layout) */
#ifndef CONFIG_PREEMPT_RT
typedef struct {
#ifdef CONFIG_DEBUG_LOCK_ALLOC
    struct lockdep_map    dep_map;
    struct task_struct    *owner;
#endif
} local_lock_t;
typedef struct {
#ifdef CONFIG_DEBUG_LOCK_ALLOC
    struct lockdep_map    dep_map;
    struct task_struct    *owner;
#endif
    u8        acquired;
} local_trylock_t;
#else
typedef spinlock_t local_lock_t;
typedef spinlock_t local_trylock_t;
#endif

/* include/linux/workqueue_types.h (torvalds/linux 918e37d50a2f) */
typedef void (*work_func_t)(struct work_struct *work);
struct work_struct {
    atomic_long_t data;
    struct list_head entry;
    work_func_t func;
#ifdef CONFIG_LOCKDEP
    struct lockdep_map lockdep_map;
#endif
};

/* include/linux/timer_types.h (torvalds/linux 254a14200711) */
struct timer_list {
    struct hlist_node    entry;
    unsigned long        expires;
    void            (*function)(struct timer_list *);
    u32            flags;
#ifdef CONFIG_LOCKDEP
    struct lockdep_map    lockdep_map;
#endif
};

/* include/linux/cgroup-defs.h (torvalds/linux) */
struct cgroup_file {
    struct kernfs_node *kn;
    unsigned long notified_at;
    struct timer_list notify_timer;
};

/* include/linux/percpu_counter.h, CONFIG_SMP form (torvalds/linux; raw_spinlock_t
 * since v6.x, same size as the older spinlock_t) */
struct percpu_counter {
    raw_spinlock_t lock;
    s64 count;
#ifdef CONFIG_HOTPLUG_CPU
    struct list_head list;
#endif
    s32 __percpu *counters;
};

/* include/linux/flex_proportions.h (torvalds/linux 2361f738b67a) */
struct fprop_global {
    struct percpu_counter events;
    unsigned int period;
    seqcount_t sequence;
};

/* include/linux/writeback.h (torvalds/linux) */
struct wb_domain {
    spinlock_t lock;
    struct fprop_global completions;
    struct timer_list period_timer;
    unsigned long period_time;
    unsigned long dirty_limit_tstamp;
    unsigned long dirty_limit;
};

/* include/linux/backing-dev-defs.h (torvalds/linux, two-field form; later trees add
 * timestamps, which grow only the tail of struct mem_cgroup) */
struct wb_completion {
    atomic_t        cnt;
    struct wait_queue_head    *waitq;
};

/* include/linux/llist.h, include/linux/smp_types.h, include/linux/rcuwait.h and
 * include/linux/irq_work.h (torvalds/linux): struct irq_work is 32 bytes */
struct llist_node { struct llist_node *next; };
struct __call_single_node {
    struct llist_node    llist;
    union {
        unsigned int    u_flags;
        atomic_t    a_flags;
    };
    u16 src, dst;
};
struct rcuwait { struct task_struct __rcu *task; };
struct irq_work {
    struct __call_single_node node;
    void (*func)(struct irq_work *);
    struct rcuwait irqwait;
};

/* include/linux/memcontrol.h (intel-lab-lkp/linux 0280fc343c7a) */
struct memcg_cgwb_frn {
    u64 bdi_id;
    int memcg_id;
    u64 at;
    struct wb_completion done;
};
struct mem_cgroup_thresholds {
    struct mem_cgroup_threshold_ary *primary;
    struct mem_cgroup_threshold_ary *spare;
};

/* include/linux/mmzone.h (torvalds/linux) */
struct lru_gen_mm_list {
    struct list_head fifo;
    spinlock_t lock;
};
"""
