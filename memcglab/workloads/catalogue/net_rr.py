"""Request/response over loopback: netperf TCP_RR, UDP_RR, SCTP_RR and lmbench lat_tcp.

One transaction: the client (netperf, or lmbench's ``lat_tcp``) sends a request,
the server (a netserver child, or a ``lat_tcp -s`` child) reads it and sends a
response, the client reads that. netperf's omni test (``send_omni_inner``,
``recv_omni``: src/nettest_omni.c) and lat_tcp (``doclient``/``doserver``) both
write and read one message per turn; no socket option changes the accounting
(no ``-s``/``-S``, no ``TCP_NODELAY``, which a 1-byte ping-pong never waits on).

What each message does to the sockets (v6.18.19, rows below):

* **TCP.** ``tcp_sendmsg_locked`` finds both queues empty (the peer's last
  message acknowledged everything), so ``tcp_stream_alloc_skb`` forces the skb
  head's truesize in (``sk_forced_mem_schedule``), then ``tcp_wmem_schedule``
  covers the copy into the page frag. ``loopback_xmit`` -> ``__netif_rx`` queues
  the clone on the sending CPU, whose receive softirq runs ``tcp_v4_rcv``: the
  peer waits in ``sk_wait_data`` without the socket lock, so
  ``tcp_rcv_established`` runs there, and its ACK frees the peer's own previous
  message (the pingpong delayed ACK rides on the data). The reader's
  ``tcp_eat_recv_skb`` -> ``sock_rfree`` gives the truesize back.
* **UDP.** The send path charges nothing (``ip_make_skb`` ->
  ``sock_alloc_send_skb`` counts ``sk_wmem_alloc`` only). The receive softirq's
  ``__udp_enqueue_schedule_skb`` schedules the truesize and ``udp_rmem_release``
  keeps up to a page: after the first datagram nothing reaches the memcg.
* **SCTP.** ``sctp_sendmsg_to_asoc`` schedules the message length and
  ``sctp_set_owner_w`` charges the chunk skb's truesize; the peer's SACK, bundled
  before its DATA, frees it (``sctp_wfree``). ``sctp_ulpevent_make_rcvmsg``
  schedules the chunk length and ``sctp_skb_set_owner_r`` charges ``rmem_len``
  (data + ``sizeof(struct sk_buff)``); ``sctp_sock_rfree`` gives it back.

A message longer than one skb (TCP: ``size_goal``, SCTP: the fragmentation point)
is sent as several; the ACK that frees a previous multi-skb message is given as one
``sk_mem_uncharge`` of their sum (the kernel frees each skb in turn: the same
pages, possibly in fewer calls).
"""

from __future__ import annotations

import numpy as np

from memcglab.workloads.catalogue.events import Events
from memcglab.workloads.catalogue.rows import (
    SK_RECLAIM,
    SK_SCHEDULE,
    TCP_FORCED,
    TCP_RECV,
    TCP_SEND,
    UDP_RECV,
    AccountingRow,
    Cite,
    kcite,
)
from memcglab.workloads.catalogue.sizes import (
    SIZEOF_SK_BUFF,
    SKB_FRAG_PAGE_SIZE,
    TCP_SKB_HEAD_TRUESIZE,
    alloc_skb_truesize,
    sctp_chunk_truesize,
    tcp_mss,
)

__all__ = ["RR_ROWS", "rr_events", "udp_truesize", "tcp_skbs", "sctp_chunks"]

_RCV = kcite("net/ipv4/tcp_input.c", "tcp_rcv_established / tcp_data_queue")
_LO = kcite("drivers/net/loopback.c", "loopback_xmit")
_ACCEPT = kcite("net/ipv4/af_inet.c", "__inet_accept")
_SCTP_SEND = kcite("net/sctp/socket.c", "sctp_sendmsg_to_asoc / sctp_set_owner_w")
_SCTP_FREE = kcite("net/sctp/socket.c", "sctp_wfree")
_SCTP_RX = kcite("net/sctp/ulpevent.c", "sctp_ulpevent_make_rcvmsg")
_SCTP_READ = kcite("net/sctp/socket.c", "sctp_sock_rfree")
_SCTP_OWNER = kcite("include/net/sctp/sctp.h", "sctp_skb_set_owner_r")
_SCTP_INPUT = kcite("net/sctp/input.c", "sctp_rcv / sctp_add_backlog")
_BACKLOG = kcite("net/core/sock.c", "__release_sock / __sk_flush_backlog")
_NETPERF = Cite("HewlettPackard/netperf", "src/nettest_omni.c",
                "afc51ff9764741da4ed6702651fba9d9c23f8557", "send_omni_inner / recv_omni")
_LAT_TCP = Cite("intel/lmbench", "src/lat_tcp.c", "941a0dcc0e7bdd9bb0dee05d7f620e77da8c43af",
                "doclient / doserver")
_SOCK = "GFP_KERNEL (gfp_memcg_charge() in task context)"
_SOFT = "GFP_ATOMIC (gfp_memcg_charge() in softirq)"
_H = TCP_SKB_HEAD_TRUESIZE


def _tcp_rows(app: Cite) -> dict[str, AccountingRow]:
    rows = {}
    for side, peer, what in (("client", "server", "request"), ("server", "client", "response")):
        p = "req" if side == "client" else "rsp"
        rows[f"{p}_skb"] = AccountingRow(
            f"{p}_skb", "sk_forced",
            f"{side} send() -> tcp_sendmsg_locked -> tcp_stream_alloc_skb (both queues empty) "
            "-> sk_forced_mem_schedule -> mem_cgroup_sk_charge -> try_charge_memcg; "
            "tcp_skb_entail -> sk_mem_charge",
            _SOCK + " | __GFP_NOFAIL", "socket", side, side, "task",
            f"pages of (skb head truesize {_H} B - sk_forward_alloc)",
            (TCP_SEND, TCP_FORCED, app))
        rows[f"{p}_next_skb"] = AccountingRow(
            f"{p}_next_skb", "sk_schedule",
            "tcp_sendmsg_locked -> tcp_stream_alloc_skb (the message's earlier skb is "
            "queued) -> sk_wmem_schedule -> __sk_mem_schedule -> mem_cgroup_sk_charge; "
            "tcp_skb_entail -> sk_mem_charge",
            _SOCK, "socket", side, side, "task",
            f"pages of (skb head truesize {_H} B - sk_forward_alloc)",
            (TCP_SEND, SK_SCHEDULE, app), per_op=f"if the {what} exceeds one skb (size_goal)")
        rows[f"{p}_copy"] = AccountingRow(
            f"{p}_copy", "sk_schedule",
            "tcp_sendmsg_locked -> tcp_wmem_schedule -> sk_wmem_schedule -> __sk_mem_schedule"
            " -> mem_cgroup_sk_charge; skb_copy_to_page_nocache -> sk_mem_charge",
            _SOCK, "socket", side, side, "task",
            f"pages of ({what} bytes - sk_forward_alloc)", (TCP_SEND, SK_SCHEDULE, app))
        rows[f"{p}_rx"] = AccountingRow(
            f"{p}_rx", "sk_rcv",
            f"loopback_xmit -> __netif_rx (the {side}'s CPU) -> NET_RX softirq -> tcp_v4_rcv "
            f"(the {peer} is not the lock owner) -> tcp_rcv_established: fast path "
            "tcp_queue_rcv -> skb_set_owner_r -> sk_mem_charge, then tcp_ack -> "
            "tcp_clean_rtx_queue -> tcp_wmem_free_skb -> sk_mem_uncharge of its previous "
            "message; slow path (truesize > sk_forward_alloc) tcp_ack first, then "
            "tcp_data_queue -> tcp_try_rmem_schedule -> sk_rmem_schedule",
            _SOFT, "socket", peer, side, "softirq",
            f"charge: pages of (truesize {_H} B + {what} bytes - sk_forward_alloc); "
            "uncharge: whole pages of the reserve",
            (_LO, _RCV, SK_SCHEDULE, SK_RECLAIM))
        rows[f"{p}_read"] = AccountingRow(
            f"{p}_read", "sk_uncharge",
            f"{peer} recv() -> tcp_recvmsg_locked -> tcp_eat_recv_skb -> __kfree_skb -> "
            "sock_rfree -> sk_mem_uncharge -> sk_mem_reclaim -> __sk_mem_reduce_allocated -> "
            "mem_cgroup_sk_uncharge -> refill_stock",
            "-", "socket", peer, peer, "task",
            f"whole pages of the reserve after {_H} B + {what} bytes come back",
            (TCP_RECV, SK_RECLAIM, app))
    return rows


def _udp_rows() -> dict[str, AccountingRow]:
    rows = {}
    for side, peer, what in (("client", "server", "request"), ("server", "client", "response")):
        p = "req" if side == "client" else "rsp"
        rows[f"{p}_rx"] = AccountingRow(
            f"{p}_rx", "udp_enqueue",
            f"{side} sendto() -> udp_sendmsg -> ip_make_skb (no socket charge) -> loopback_xmit"
            f" -> NET_RX softirq on the {side}'s CPU -> udp_queue_rcv_skb -> "
            "__udp_enqueue_schedule_skb -> udp_rmem_schedule -> __sk_mem_schedule -> "
            "mem_cgroup_sk_charge",
            _SOFT, "socket", peer, side, "softirq",
            f"pages of (datagram truesize - sk_forward_alloc): 0 after the first {what}",
            (_LO, UDP_RECV, _NETPERF))
        rows[f"{p}_read"] = AccountingRow(
            f"{p}_read", "udp_release",
            f"{peer} recvmsg() -> __skb_recv_udp -> udp_skb_destructor -> udp_rmem_release "
            "(partial = 1, reader queue empty) -> __sk_mem_reduce_allocated -> "
            "mem_cgroup_sk_uncharge -> refill_stock",
            "-", "socket", peer, peer, "task",
            "(size + sk_forward_alloc - 1) rounded down to pages: 0 while a page stays",
            (UDP_RECV, _NETPERF))
    return rows


def _sctp_rows() -> dict[str, AccountingRow]:
    rows = {}
    for side, peer, what in (("client", "server", "request"), ("server", "client", "response")):
        p = "req" if side == "client" else "rsp"
        rows[f"{p}_send"] = AccountingRow(
            f"{p}_send", "sk_schedule",
            f"{side} sctp_sendmsg -> sctp_sendmsg_to_asoc -> sk_wmem_schedule(msg_len) -> "
            "__sk_mem_schedule -> mem_cgroup_sk_charge; sctp_set_owner_w -> sk_mem_charge "
            "(chunk skb truesize)",
            _SOCK, "socket", side, side, "task",
            f"pages of ({what} bytes - sk_forward_alloc); the reserve then loses the "
            f"chunk's truesize ({sctp_chunk_truesize(1)} B for 1 byte)",
            (_SCTP_SEND, SK_SCHEDULE, _NETPERF))
        rows[f"{p}_sack"] = AccountingRow(
            f"{p}_sack", "sk_uncharge",
            f"NET_RX softirq on the {side}'s CPU -> sctp_rcv -> the SACK bundled before the "
            f"DATA -> sctp_outq_sack -> sctp_chunk_free -> sctp_wfree -> sk_mem_uncharge "
            f"({peer}'s previous chunk)",
            "-", "socket", peer, side, "softirq",
            "whole pages of the reserve after the chunk truesize comes back",
            (_SCTP_FREE, SK_RECLAIM), per_op="1, if rr_rx = softirq")
        rows[f"{p}_rx"] = AccountingRow(
            f"{p}_rx", "sk_schedule",
            f"NET_RX softirq on the {side}'s CPU -> sctp_ulpevent_make_rcvmsg -> "
            "sk_rmem_schedule(chunk length) -> mem_cgroup_sk_charge; sctp_skb_set_owner_r "
            "-> sk_mem_charge(rmem_len)",
            _SOFT, "socket", peer, side, "softirq",
            f"pages of (16 + {what} bytes - sk_forward_alloc); rmem_len = data + "
            f"sizeof(struct sk_buff) ({SIZEOF_SK_BUFF} B)",
            (_SCTP_RX, _SCTP_OWNER, SK_SCHEDULE), per_op="1, if rr_rx = softirq")
        rows[f"{p}_sack_backlog"] = AccountingRow(
            f"{p}_sack_backlog", "sk_uncharge",
            f"sctp_rcv ({peer} holds the lock) -> sctp_add_backlog; {peer}'s release_sock -> "
            "sctp_backlog_rcv -> the bundled SACK -> sctp_outq_sack -> sctp_wfree -> "
            f"sk_mem_uncharge ({peer}'s previous chunk)",
            "-", "socket", peer, peer, "task",
            "whole pages of the reserve after the chunk truesize comes back",
            (_SCTP_INPUT, _BACKLOG, _SCTP_FREE, SK_RECLAIM), per_op="1, if rr_rx = backlog")
        rows[f"{p}_rx_backlog"] = AccountingRow(
            f"{p}_rx_backlog", "sk_schedule",
            f"{peer}'s release_sock -> sctp_backlog_rcv -> sctp_ulpevent_make_rcvmsg -> "
            "sk_rmem_schedule(chunk length) -> mem_cgroup_sk_charge; sctp_skb_set_owner_r "
            "-> sk_mem_charge(rmem_len)",
            _SOCK, "socket", peer, peer, "task",
            f"pages of (16 + {what} bytes - sk_forward_alloc); rmem_len = data + "
            f"sizeof(struct sk_buff) ({SIZEOF_SK_BUFF} B)",
            (_SCTP_INPUT, _BACKLOG, _SCTP_RX, SK_SCHEDULE), per_op="1, if rr_rx = backlog")
        rows[f"{p}_read"] = AccountingRow(
            f"{p}_read", "sk_uncharge",
            f"{peer} sctp_recvmsg -> sctp_ulpevent_free -> sctp_sock_rfree -> sk_mem_uncharge"
            " -> mem_cgroup_sk_uncharge -> refill_stock",
            "-", "socket", peer, peer, "task", "whole pages of the reserve after rmem_len",
            (_SCTP_READ, SK_RECLAIM))
    return rows


#: test -> its rows (the server rows' memcg is the server_memcg alternative's)
RR_ROWS: dict[str, dict[str, AccountingRow]] = {
    "TCP_RR": _tcp_rows(_NETPERF), "UDP_RR": _udp_rows(), "SCTP_RR": _sctp_rows(),
    "lat_tcp": _tcp_rows(_LAT_TCP),
}
#: every row also cites where the server socket's memcg comes from
ACCEPT_CITE = _ACCEPT


def udp_truesize(size: int, ip: str) -> int:
    """truesize of a UDP datagram of ``size`` bytes on loopback: one linear skb.

    ``__ip_append_data`` -> ``sock_alloc_send_skb(alloclen + hh_len + 15)``, with the
    UDP and IP headers in ``alloclen`` and loopback's 16-byte ``LL_RESERVED_SPACE``.
    """
    return alloc_skb_truesize(size + 8 + (20 if ip == "ipv4" else 40) + 16 + 15)


def tcp_skbs(size: int, ip: str) -> list[list[int]]:
    """The skbs of a ``size``-byte write on an idle connection: each a list of copies.

    An skb holds ``size_goal`` bytes (one loopback MSS: ``tcp_xmit_size_goal``); a
    copy stops at the end of the 32 KiB page frag (``sk_page_frag_refill``).
    """
    goal = tcp_mss(ip)
    skbs, left, frag = [], size, 0
    while left > 0:
        n = min(left, goal)
        pieces, room = [], n
        while room > 0:
            c = min(room, SKB_FRAG_PAGE_SIZE - frag)
            pieces.append(c)
            room -= c
            frag = (frag + c) % SKB_FRAG_PAGE_SIZE
        skbs.append(pieces)
        left -= n
    return skbs


#: SCTP's fragmentation point on loopback: the MTU less IP, SCTP common and DATA
#: chunk headers (sctp_mtu_payload), to a multiple of 4
def sctp_chunks(size: int, ip: str) -> list[int]:
    """Data bytes of each DATA chunk of a ``size``-byte message (``sctp_datamsg_from_user``)."""
    frag = (65536 - (20 if ip == "ipv4" else 40) - 12 - 16) // 4 * 4
    return [min(frag, size - k) for k in range(0, size, frag)]


def rr_events(ev: Events, test: str, ninst: int, nops: int, req: int, rsp: int, ip: str,
              rng: np.random.Generator, rr_rx: str = "softirq") -> np.ndarray:
    """Add ``nops`` transactions of every instance; returns the time of each transaction
    start (instances interleave at random within each round)."""
    i = np.repeat(np.arange(ninst, dtype=np.int64), nops)
    k = np.tile(np.arange(nops, dtype=np.int64), ninst)
    t = k + 0.5 * rng.random(len(i))  # transaction k of every instance in round k
    first = k == 0
    if test in ("TCP_RR", "lat_tcp"):
        _tcp(ev, t, i, first, req, rsp, ip)
    elif test == "UDP_RR":
        for p, size in (("req", req), ("rsp", rsp)):
            ts = udp_truesize(size, ip)
            base = 0.0 if p == "req" else 0.25
            ev.add(f"{p}_rx", t + base + 0.01, i, arg=ts)
            ev.add(f"{p}_read", t + base + 0.02, i, arg=ts, sched=1)  # reader queue empty
    else:
        _sctp(ev, t, i, first, req, rsp, ip, "" if rr_rx == "softirq" else "_backlog")
    return t


def _tcp(ev: Events, t: np.ndarray, i: np.ndarray, first: np.ndarray, req: int, rsp: int,
         ip: str) -> None:
    truesize = {}
    for p, size in (("req", req), ("rsp", rsp)):
        truesize[p] = [_H + sum(pieces) for pieces in tcp_skbs(size, ip)]
    for p, size, other in (("req", req, "rsp"), ("rsp", rsp, "req")):
        base = 0.0 if p == "req" else 0.25
        skbs = tcp_skbs(size, ip)
        # the ACK in this message frees the peer's previous one (none before the first
        # request; the response always frees the request it answers)
        freed = np.full(len(t), sum(truesize[other]), dtype=np.int64)
        if p == "req":
            freed[first] = 0
        sub = 0.001
        for n, pieces in enumerate(skbs):
            ev.add(f"{p}_skb" if n == 0 else f"{p}_next_skb", t + base + sub, i, arg=_H)
            sub += 0.001
            for c in pieces:
                ev.add(f"{p}_copy", t + base + sub, i, arg=c)
                sub += 0.001
            ev.add(f"{p}_rx", t + base + 0.1 + sub, i, arg=truesize[p][n],
                   freed=freed if n == 0 else 0)
            sub += 0.001
        for n in range(len(skbs)):
            ev.add(f"{p}_read", t + base + 0.2 + 0.001 * n, i, arg=truesize[p][n])


def _sctp(ev: Events, t: np.ndarray, i: np.ndarray, first: np.ndarray, req: int, rsp: int,
          ip: str, where: str) -> None:
    """SCTP's transactions; ``where`` picks the receive rows ("" softirq, "_backlog")."""
    for p, size in (("req", req), ("rsp", rsp)):
        base = 0.0 if p == "req" else 0.25
        chunks = sctp_chunks(size, ip)
        ev.add(f"{p}_send", t + base + 0.01, i, sched=size,
               arg=sum(sctp_chunk_truesize(c) for c in chunks))
        other = sctp_chunks(rsp if p == "req" else req, ip)
        sack = np.full(len(t), sum(sctp_chunk_truesize(c) for c in other), dtype=np.int64)
        if p == "req":
            sack[first] = 0
        ev.add(f"{p}_sack{where}", t + base + 0.02, i, arg=sack)
        for n, c in enumerate(chunks):
            ev.add(f"{p}_rx{where}", t + base + 0.03 + 0.001 * n, i, sched=16 + c,
                   arg=c + SIZEOF_SK_BUFF)
            ev.add(f"{p}_read", t + base + 0.2 + 0.001 * n, i, arg=c + SIZEOF_SK_BUFF)
