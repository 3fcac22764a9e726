"""Buffer sizes the benchmarks' allocations have on x86-64, computed from the kernel's macros.

Every constant is derived here from the macros of the v6.18.19 tree (6952350/linux-6.18.y
at 312d9602fe3e) with the values a distribution kernel builds them with: 64-byte
cache lines, 4 KiB pages, ``LL_MAX_HEADER`` 128, ``MAX_HEADER`` ``LL_MAX_HEADER + 48``
(IP tunnels configured), ``MAX_SKB_FRAGS`` 17. Two are structure sizes read from a
distribution build rather than computed, and marked so.

``LL_MAX_HEADER``: the pinned tree is not a kernel.org copy; its
include/linux/netdevice.h forces 128 (``|| 1`` after the ``CONFIG_WLAN`` and
``CONFIG_MAC80211_MESH`` tests). Mainline gives 128 for ``CONFIG_HYPERV_NET=y`` or
``CONFIG_MAC80211_MESH`` (a module, ``=m``, does not define ``CONFIG_HYPERV_NET``)
and 96 for WLAN without mesh; both make ``MAX_TCP_HEADER`` 320 and the small-head
cache 704 bytes, so every size below is the same. Only a kernel with neither WLAN,
AX.25 nor Hyper-V networking (32) differs: a 640-byte small head, a 896-byte TCP
head truesize.

>>> TCP_SKB_HEAD_TRUESIZE, skb_head_kmalloc(100), skb_head_kmalloc(3776)
(960, 512, 4096)
>>> unix_stream_chunks(65536)
[(3776, 32768), (320, 28672)]
>>> frag_orders(32768), frag_orders(28672)
([3], [2, 1, 0])
"""

from __future__ import annotations

__all__ = [
    "L1_CACHE_BYTES", "PAGE_SIZE", "SIZEOF_SK_BUFF", "SIZEOF_SKB_SHARED_INFO",
    "OBJCG_POINTER", "MAX_HEADER", "MAX_TCP_HEADER", "SKB_SMALL_HEAD_CACHE_SIZE",
    "SKB_SMALL_HEAD_HEADROOM", "TCP_SKB_HEAD_TRUESIZE", "SKBUFF_HEAD_OBJ", "LOOPBACK_MTU",
    "GSO_LEGACY_MAX_SIZE", "SKB_FRAG_PAGE_SIZE", "UNIX_SNDBUF", "UNIX_SKB_FRAGS_SZ",
    "SKB_MAX_HEAD_0", "SCTP_DATA_CHUNK_HEADER", "PIPE_MAX_USAGE", "PIPE_TMP_PAGES",
    "skb_data_align", "skb_head_align", "skb_truesize", "kmalloc_size_roundup",
    "alloc_skb_truesize", "skb_head_kmalloc", "tcp_mss", "unix_stream_chunks",
    "frag_orders", "sctp_chunk_truesize",
]

L1_CACHE_BYTES = 64
PAGE_SIZE = 4096
#: sizeof(struct sk_buff), x86-64 (pahole of a 6.x distribution build; not computed)
SIZEOF_SK_BUFF = 232
#: sizeof(struct skb_shared_info) with MAX_SKB_FRAGS = 17: 48 + 17 * 16
SIZEOF_SKB_SHARED_INFO = 320
#: obj_full_size(): a slab object's charge adds ``sizeof(struct obj_cgroup *)``
OBJCG_POINTER = 8
#: include/linux/netdevice.h: LL_MAX_HEADER 128 + 48 with tunnels
MAX_HEADER = 128 + 48
#: include/net/tcp.h: L1_CACHE_ALIGN(128 + MAX_HEADER)
MAX_TCP_HEADER = (128 + MAX_HEADER + L1_CACHE_BYTES - 1) // L1_CACHE_BYTES * L1_CACHE_BYTES
#: drivers/net/loopback.c: gen_lo_setup(dev, 64 * 1024, ...)
LOOPBACK_MTU = 64 * 1024
#: include/linux/netdevice.h: the GSO size a socket gets on loopback by default
GSO_LEGACY_MAX_SIZE = 65536
#: include/net/sock.h: SKB_FRAG_PAGE_ORDER = get_order(32768): TCP's page frags
SKB_FRAG_PAGE_SIZE = 32768
#: sock_init_data: sk_sndbuf = net.core.wmem_default (212992)
UNIX_SNDBUF = 212992
#: net/unix/af_unix.c: PAGE_SIZE << get_order(32768)
UNIX_SKB_FRAGS_SZ = 32768
#: sizeof(struct sctp_chunkhdr) + sizeof(struct sctp_datahdr)
SCTP_DATA_CHUNK_HEADER = 16
#: fs/pipe.c: PIPE_DEF_BUFFERS, and the two cached pages of pipe->tmp_page[2]
PIPE_MAX_USAGE = 16
PIPE_TMP_PAGES = 2


def skb_data_align(x: int) -> int:
    """``SKB_DATA_ALIGN``: round up to SMP_CACHE_BYTES."""
    return (x + L1_CACHE_BYTES - 1) // L1_CACHE_BYTES * L1_CACHE_BYTES


def skb_head_align(x: int) -> int:
    """``SKB_HEAD_ALIGN``: the head buffer for ``x`` bytes plus skb_shared_info."""
    return skb_data_align(x) + skb_data_align(SIZEOF_SKB_SHARED_INFO)


def skb_truesize(x: int) -> int:
    """``SKB_TRUESIZE``: a head of ``x`` usable bytes plus the sk_buff and shared info."""
    return x + skb_data_align(SIZEOF_SK_BUFF) + skb_data_align(SIZEOF_SKB_SHARED_INFO)


def kmalloc_size_roundup(size: int) -> int:
    """``kmalloc_size_roundup``: the kmalloc cache (or page order) ``size`` lands in."""
    for cache in (8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192):
        if size <= cache:
            return cache
    pages = PAGE_SIZE
    while pages < size:  # kmalloc_large: PAGE_SIZE << get_order(size)
        pages *= 2
    return pages


#: net/core/skbuff.c: SKB_HEAD_ALIGN(max(MAX_TCP_HEADER, GRO_MAX_HEAD_PAD)), with
#: GRO_MAX_HEAD = MAX_HEADER + 128 and NET_SKB_PAD = 64; not a power of two (704)
SKB_SMALL_HEAD_CACHE_SIZE = skb_head_align(max(MAX_TCP_HEADER, MAX_HEADER + 128 + 64))
SKB_SMALL_HEAD_HEADROOM = SKB_SMALL_HEAD_CACHE_SIZE - skb_data_align(SIZEOF_SKB_SHARED_INFO)
#: SKB_MAX_HEAD(0): SKB_WITH_OVERHEAD(PAGE_SIZE)
SKB_MAX_HEAD_0 = PAGE_SIZE - skb_data_align(SIZEOF_SKB_SHARED_INFO)
#: skbuff_head_cache objects are SLAB_HWCACHE_ALIGN: obj_full_size = 256 + 8
SKBUFF_HEAD_OBJ = skb_data_align(SIZEOF_SK_BUFF) + OBJCG_POINTER


def alloc_skb_truesize(size: int) -> int:
    """``skb->truesize`` of ``alloc_skb(size)`` without __GFP_ACCOUNT (kmalloc_reserve).

    Heads that fit the small-head cache get its headroom; others a kmalloc
    rounded size (or pages past 8 KiB).
    """
    obj = skb_head_align(size)
    if obj <= SKB_SMALL_HEAD_CACHE_SIZE:
        return skb_truesize(SKB_SMALL_HEAD_HEADROOM)
    return skb_truesize(kmalloc_size_roundup(obj) - skb_data_align(SIZEOF_SKB_SHARED_INFO))


#: tcp_stream_alloc_skb: alloc_skb_fclone(MAX_TCP_HEADER), truesize =
#: SKB_TRUESIZE(skb_end_offset): the small-head cache's 384 bytes (960)
TCP_SKB_HEAD_TRUESIZE = alloc_skb_truesize(MAX_TCP_HEADER)


def skb_head_kmalloc(size: int) -> int:
    """The kmalloc size of an skb head of ``size`` bytes allocated with __GFP_ACCOUNT.

    kmalloc_reserve skips the small-head cache for any of KMALLOC_NOT_NORMAL_BITS,
    __GFP_ACCOUNT among them, and takes kmalloc-cg-N.
    """
    return kmalloc_size_roundup(skb_head_align(size))


def tcp_mss(ip: str) -> int:
    """``tcp_current_mss`` on loopback: the MTU less IP, TCP and timestamp headers."""
    return LOOPBACK_MTU - (20 if ip == "ipv4" else 40) - 20 - 12


def unix_stream_chunks(size: int) -> list[tuple[int, int]]:
    """(linear, paged) bytes of each skb ``unix_stream_sendmsg`` makes of one write.

    Each skb takes at most ``min(sk_sndbuf / 2 - 64, SKB_MAX_HEAD(0) +
    UNIX_SKB_FRAGS_SZ)`` bytes, with ``PAGE_ALIGN(size - SKB_MAX_HEAD(0))`` of them paged.
    """
    out = []
    sent = 0
    while sent < size:
        n = min(size - sent, UNIX_SNDBUF // 2 - 64, SKB_MAX_HEAD_0 + UNIX_SKB_FRAGS_SZ)
        data_len = max(0, n - SKB_MAX_HEAD_0)
        data_len = min(n, -(-data_len // PAGE_SIZE) * PAGE_SIZE)
        out.append((n - data_len, data_len))
        sent += n
    return out


def frag_orders(data_len: int, max_order: int = 3) -> list[int]:
    """Page orders ``alloc_skb_with_frags`` allocates for ``data_len`` paged bytes."""
    out = []
    order = max_order
    while data_len > 0:
        while order and -(-data_len // PAGE_SIZE) * PAGE_SIZE < (PAGE_SIZE << order):
            order -= 1
        out.append(order)
        data_len -= min(data_len, PAGE_SIZE << order)
    return out


def sctp_chunk_truesize(data: int) -> int:
    """``truesize`` of the DATA chunk skb ``_sctp_make_chunk`` allocates for ``data`` bytes."""
    chunklen = (SCTP_DATA_CHUNK_HEADER + data + 3) // 4 * 4
    return alloc_skb_truesize(chunklen)
