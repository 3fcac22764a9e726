"""Bulk transfer over loopback: netperf TCP_STREAM, TCP_SENDFILE, TCP_MAERTS, SCTP_STREAM_MANY
and lmbench bw_tcp.

Who sends: netperf's TCP_STREAM and TCP_SENDFILE and SCTP_STREAM_MANY send from the
client (netperf) to the server (a netserver child); TCP_MAERTS and lmbench's
bw_tcp send from the server (the netserver child; bw_tcp's ``source()``, a child of
``bw_tcp -s``) to the client. One operation is one send of ``send_size`` (netperf
``-m``) or ``message_bytes`` (bw_tcp ``-m``) bytes: ``send()``, ``sendfile()`` or
``sctp_sendmsg()``.

TCP (v6.18.19). The sender's ``tcp_sendmsg_locked`` appends to the tail skb of the
write queue until it holds ``size_goal`` bytes (one loopback MSS); a new skb is
scheduled (``tcp_stream_alloc_skb`` -> ``sk_wmem_schedule`` of the head's truesize)
and every copy is scheduled and charged (``tcp_wmem_schedule``, ``sk_mem_charge``),
a copy ending at the 32 KiB page frag's end. TCP_SENDFILE's ``splice_to_socket``
calls ``sock_sendmsg`` with ``MSG_SPLICE_PAGES``: the same schedule and charge of
each piece, from page-cache pages instead of the frag, so no frag boundary. Whether
sends coalesce is the ``segments`` alternative, because the source leaves it to
timing: Nagle in Minshall's form (``tcp_nagle_check``, ``tcp_minshall_check``)
holds a partial skb while an earlier sub-MSS segment is unacknowledged, so the
next send appends to it until it is full (``coalesced``); when the previous
segment's ACK was processed before the next ``tcp_push`` (the sender's own
``release_sock`` runs its backlog), each send's tail goes out at once and skbs
end at send boundaries too (``per_send``). Autocorking
(``tcp_should_autocork``) rarely holds anything over loopback, whose
``loopback_xmit`` orphans the clone at once. The new skb is scheduled with
``sk_forced_mem_schedule`` (``__GFP_NOFAIL``) when both queues are empty
(``tcp_rtx_and_write_queues_empty``): the same pages as ``sk_wmem_schedule``. An
skb's clone is received in the softirq on the sender's CPU (``rx`` = softirq) or
from the backlog by the receiver, which holds the lock while it copies (``rx`` =
backlog); the reader frees it ``queue_depth`` sends later on average and its
``tcp_cleanup_rbuf`` ACKs it; the ACK frees the sender's skb on the sender's CPU
(``ack`` = backlog: the sender holds the lock in sendmsg) or in softirq on the
reader's (``ack`` = softirq).

SCTP_STREAM_MANY: one-to-many (``SOCK_SEQPACKET``) sockets, one association per
instance (netperf's default ``num_associations`` 1). A message up to the
fragmentation point is one DATA chunk; the receiver SACKs every second packet
(``sack_freq`` 2) where it processes the DATA: in the receive softirq on the
sender's CPU (``rx`` = softirq) or from its backlog on its own CPU (``rx`` =
backlog, ``sctp_add_backlog`` while it holds the lock in ``sctp_recvmsg``). The
sender processes the SACK from its backlog (it is in ``sctp_sendmsg``: ``ack`` =
backlog) or in softirq on the CPU that sent the SACK (``ack`` = softirq). The
reader's window-update SACK (``sctp_assoc_rwnd_increase`` ->
``sctp_peer_needs_update``: after ``max(sk_rcvbuf >> 4, pathmtu)`` = 64 KiB read on
loopback) carries no cumulative ack the every-second-packet SACKs have not already
sent, except for an odd packet's, and is not modelled.
"""

from __future__ import annotations

import numpy as np

from memcglab.workloads.catalogue.events import Events, fifo
from memcglab.workloads.catalogue.net_rr import sctp_chunks
from memcglab.workloads.catalogue.rows import (
    SK_RECLAIM,
    SK_SCHEDULE,
    TCP_FORCED,
    TCP_RECV,
    TCP_SEND,
    AccountingRow,
    Cite,
    kcite,
)
from memcglab.workloads.catalogue.sizes import (
    SIZEOF_SK_BUFF,
    SKB_FRAG_PAGE_SIZE,
    TCP_SKB_HEAD_TRUESIZE,
    sctp_chunk_truesize,
    tcp_mss,
)
from memcglab.workloads.common import bounded_delay

__all__ = ["SENDERS", "STREAM_ROWS", "stream_events", "stream_layout"]

#: test -> (sending role, receiving role)
SENDERS = {"TCP_STREAM": ("client", "server"), "TCP_SENDFILE": ("client", "server"),
           "TCP_MAERTS": ("server", "client"), "bw_tcp": ("server", "client"),
           "SCTP_STREAM_MANY": ("client", "server")}

_H = TCP_SKB_HEAD_TRUESIZE
_SOCK = "GFP_KERNEL (gfp_memcg_charge() in task context)"
_SOFT = "GFP_ATOMIC (gfp_memcg_charge() in softirq)"
_OMNI = Cite("HewlettPackard/netperf", "src/nettest_omni.c",
             "afc51ff9764741da4ed6702651fba9d9c23f8557", "send_omni_inner / recv_omni")
_SENDFILE = Cite("HewlettPackard/netperf", "src/nettest_bsd.c",
                 "afc51ff9764741da4ed6702651fba9d9c23f8557", "sendfile_tcp_stream")
_BW_TCP = Cite("intel/lmbench", "src/bw_tcp.c", "941a0dcc0e7bdd9bb0dee05d7f620e77da8c43af",
               "source / loop_transfer")
_SCTP_MANY = Cite("HewlettPackard/netperf", "src/nettest_sctp.c",
                  "afc51ff9764741da4ed6702651fba9d9c23f8557",
                  "send_sctp_stream_1toMany / recv_sctp_stream_1toMany")
_SPLICE = kcite("fs/splice.c", "splice_to_socket")
_RCV = kcite("net/ipv4/tcp_input.c", "tcp_rcv_established / tcp_data_queue")
_BACKLOG = kcite("net/core/sock.c", "__release_sock / __sk_flush_backlog")
_ACK = kcite("net/ipv4/tcp_input.c", "tcp_ack / tcp_clean_rtx_queue")
_LO = kcite("drivers/net/loopback.c", "loopback_xmit")
_NAGLE = kcite("net/ipv4/tcp_output.c", "tcp_nagle_check / tcp_minshall_update")
#: skbs per send: coalesced, send_size / size_goal; per_send, ceil(send_size / size_goal)
_PER_SKB = "send_size / size_goal (segments = coalesced), ceil of it (per_send)"


def _tcp_rows(test: str) -> dict[str, AccountingRow]:
    s, r = SENDERS[test]
    app = {"TCP_SENDFILE": _SENDFILE, "bw_tcp": _BW_TCP}.get(test, _OMNI)
    via = ("sendfile() -> do_splice_direct -> splice_to_socket -> sock_sendmsg "
           "(MSG_SPLICE_PAGES) -> tcp_sendmsg_locked" if test == "TCP_SENDFILE"
           else f"{s} send() -> tcp_sendmsg_locked")
    extra = (_SPLICE,) if test == "TCP_SENDFILE" else ()
    piece = ("skb_splice_from_iter" if test == "TCP_SENDFILE" else "skb_copy_to_page_nocache")
    rx = (f"loopback_xmit -> __netif_rx (the {s}'s CPU) -> NET_RX softirq -> tcp_v4_rcv -> "
          "tcp_rcv_established: tcp_queue_rcv -> skb_set_owner_r -> sk_mem_charge (fast "
          "path), or tcp_data_queue -> tcp_try_rmem_schedule -> sk_rmem_schedule -> "
          "__sk_mem_schedule -> mem_cgroup_sk_charge (truesize > sk_forward_alloc)")
    return {
        "skb": AccountingRow(
            "skb", "sk_schedule",
            f"{via} -> tcp_stream_alloc_skb -> sk_wmem_schedule -> __sk_mem_schedule -> "
            "mem_cgroup_sk_charge (sk_forced_mem_schedule when both queues are empty: "
            "the same pages); tcp_skb_entail -> sk_mem_charge",
            _SOCK + "; | __GFP_NOFAIL when forced", "socket", s, s, "task",
            f"pages of (skb head {_H} B - sk_forward_alloc)",
            (TCP_SEND, SK_SCHEDULE, TCP_FORCED, _NAGLE, app, *extra), per_op=_PER_SKB),
        "copy": AccountingRow(
            "copy", "sk_schedule",
            f"{via} -> tcp_wmem_schedule -> sk_wmem_schedule -> __sk_mem_schedule -> "
            f"mem_cgroup_sk_charge; {piece} -> sk_mem_charge",
            _SOCK, "socket", s, s, "task", "pages of (piece - sk_forward_alloc)",
            (TCP_SEND, SK_SCHEDULE, app, *extra), per_op="1-2 pieces per send"),
        "rx": AccountingRow(
            "rx", "sk_rcv", rx + f" (rx = softirq: the {r} waits without the lock)", _SOFT,
            "socket", r, s, "softirq", f"pages of (skb truesize {_H} B + payload - "
            "sk_forward_alloc)", (_LO, _RCV, SK_SCHEDULE), per_op=_PER_SKB),
        "rx_backlog": AccountingRow(
            "rx_backlog", "sk_rcv",
            f"tcp_v4_rcv ({r} owns the socket) -> tcp_add_backlog; {r}'s release_sock -> "
            "__release_sock -> sk_backlog_rcv -> tcp_v4_do_rcv -> tcp_rcv_established "
            "(as rx)", _SOCK, "socket", r, r, "task",
            f"pages of (skb truesize {_H} B + payload - sk_forward_alloc)",
            (_BACKLOG, _RCV, SK_SCHEDULE), per_op=_PER_SKB + ", if rx = backlog"),
        "read": AccountingRow(
            "read", "sk_uncharge",
            f"{r} recv() -> tcp_recvmsg_locked -> tcp_eat_recv_skb -> __kfree_skb -> "
            "sock_rfree -> sk_mem_uncharge -> sk_mem_reclaim -> mem_cgroup_sk_uncharge -> "
            "refill_stock", "-", "socket", r, r, "task",
            "whole pages of the reserve after the skb truesize comes back",
            (TCP_RECV, SK_RECLAIM, app), per_op=_PER_SKB),
        "ack": AccountingRow(
            "ack", "sk_uncharge",
            f"{r}'s tcp_cleanup_rbuf -> tcp_send_ack -> tcp_v4_rcv ({s} owns the socket) -> "
            f"tcp_add_backlog; {s}'s release_sock / sk_flush_backlog -> tcp_ack -> "
            "tcp_clean_rtx_queue -> tcp_wmem_free_skb -> sk_mem_uncharge -> "
            "mem_cgroup_sk_uncharge -> refill_stock", "-", "socket", s, s, "task",
            "whole pages of the reserve after the skb truesize comes back",
            (_ACK, _BACKLOG, SK_RECLAIM), per_op=_PER_SKB + ", if ack = backlog"),
        "ack_softirq": AccountingRow(
            "ack_softirq", "sk_uncharge",
            f"{r}'s tcp_send_ack -> loopback_xmit -> NET_RX softirq on the {r}'s CPU -> "
            "tcp_v4_rcv -> tcp_ack -> tcp_clean_rtx_queue -> tcp_wmem_free_skb -> "
            "sk_mem_uncharge -> mem_cgroup_sk_uncharge -> refill_stock", "-", "socket", s, r,
            "softirq", "whole pages of the reserve after the skb truesize comes back",
            (_LO, _ACK, SK_RECLAIM), per_op=_PER_SKB + ", if ack = softirq"),
    }


def _sctp_rows() -> dict[str, AccountingRow]:
    s, r = SENDERS["SCTP_STREAM_MANY"]
    send = kcite("net/sctp/socket.c", "sctp_sendmsg_to_asoc / sctp_set_owner_w")
    free = kcite("net/sctp/socket.c", "sctp_wfree")
    rx = kcite("net/sctp/ulpevent.c", "sctp_ulpevent_make_rcvmsg")
    sack = kcite("net/sctp/outqueue.c", "sctp_outq_sack")
    return {
        "send": AccountingRow(
            "send", "sk_schedule",
            f"{s} sctp_sendmsg -> sctp_sendmsg_to_asoc -> sk_wmem_schedule(msg_len) -> "
            "__sk_mem_schedule -> mem_cgroup_sk_charge; sctp_set_owner_w -> sk_mem_charge "
            "(each chunk skb's truesize)", _SOCK, "socket", s, s, "task",
            f"pages of (send_size - sk_forward_alloc); chunk truesize "
            f"{sctp_chunk_truesize(16384)} B for 16 KiB", (send, SK_SCHEDULE, _SCTP_MANY)),
        "rx": AccountingRow(
            "rx", "sk_schedule",
            f"NET_RX softirq on the {s}'s CPU -> sctp_rcv -> sctp_ulpevent_make_rcvmsg -> "
            "sk_rmem_schedule(chunk length) -> mem_cgroup_sk_charge; sctp_skb_set_owner_r -> "
            "sk_mem_charge(rmem_len)", _SOFT, "socket", r, s, "softirq",
            f"pages of (16 + data - sk_forward_alloc); rmem_len = data + {SIZEOF_SK_BUFF} B",
            (rx, SK_SCHEDULE), per_op="1 per DATA chunk"),
        "rx_backlog": AccountingRow(
            "rx_backlog", "sk_schedule",
            f"sctp_rcv ({r} owns the socket in sctp_recvmsg) -> sctp_add_backlog; {r}'s "
            "release_sock -> __release_sock -> sctp_backlog_rcv -> sctp_inq_push -> "
            "sctp_ulpevent_make_rcvmsg -> sk_rmem_schedule(chunk length) -> "
            "mem_cgroup_sk_charge; sctp_skb_set_owner_r -> sk_mem_charge(rmem_len)",
            _SOCK, "socket", r, r, "task",
            f"pages of (16 + data - sk_forward_alloc); rmem_len = data + {SIZEOF_SK_BUFF} B",
            (kcite("net/sctp/input.c", "sctp_rcv / sctp_add_backlog"), _BACKLOG, rx,
             SK_SCHEDULE), per_op="1 per DATA chunk, if rx = backlog"),
        "read": AccountingRow(
            "read", "sk_uncharge",
            f"{r} sctp_recvmsg -> sctp_ulpevent_free -> sctp_sock_rfree -> sk_mem_uncharge -> "
            "mem_cgroup_sk_uncharge -> refill_stock", "-", "socket", r, r, "task",
            "whole pages of the reserve after rmem_len comes back",
            (kcite("net/sctp/socket.c", "sctp_sock_rfree"), SK_RECLAIM, _SCTP_MANY),
            per_op="1 per DATA chunk"),
        "ack": AccountingRow(
            "ack", "sk_uncharge",
            f"the {r}'s SACK (every 2nd packet, from the receive softirq on the {s}'s CPU) -> "
            f"sctp_rcv ({s} owns the socket) -> sctp_add_backlog; {s}'s release_sock -> "
            "sctp_backlog_rcv -> sctp_outq_sack -> sctp_wfree -> sk_mem_uncharge",
            "-", "socket", s, s, "task", "whole pages of the reserve after the chunk truesize",
            (sack, free, SK_RECLAIM), per_op="1 per DATA chunk, if ack = backlog"),
        "ack_softirq": AccountingRow(
            "ack_softirq", "sk_uncharge",
            f"the {r}'s SACK -> sctp_rcv in the NET_RX softirq on the {s}'s CPU -> "
            "sctp_outq_sack -> sctp_wfree -> sk_mem_uncharge", "-", "socket", s, s, "softirq",
            "whole pages of the reserve after the chunk truesize",
            (sack, free, SK_RECLAIM), per_op="1 per DATA chunk, if ack = softirq and rx = "
                                             "softirq"),
        "ack_softirq_reader": AccountingRow(
            "ack_softirq_reader", "sk_uncharge",
            f"the SACK the {r} sends from its backlog processing -> loopback_xmit -> NET_RX "
            f"softirq on the {r}'s CPU -> sctp_rcv -> sctp_outq_sack -> sctp_wfree -> "
            "sk_mem_uncharge", "-", "socket", s, r, "softirq",
            "whole pages of the reserve after the chunk truesize",
            (_LO, sack, free, SK_RECLAIM), per_op="1 per DATA chunk, if ack = softirq and "
                                                  "rx = backlog"),
    }


STREAM_ROWS: dict[str, dict[str, AccountingRow]] = {
    **{t: _tcp_rows(t) for t in ("TCP_STREAM", "TCP_SENDFILE", "TCP_MAERTS", "bw_tcp")},
    "SCTP_STREAM_MANY": _sctp_rows(),
}


def stream_layout(sends: int, size: int, goal: int, frag: bool,
                  per_send: bool = False) -> tuple[np.ndarray, ...]:
    """One instance's byte stream of ``sends`` sends of ``size`` bytes.

    Returns pieces (send, bytes, starts an skb) and skbs (payload, the send that
    completes it). Copies end at send, skb and (``frag``) 32 KiB page-frag boundaries.
    Skbs hold ``goal`` bytes of the stream (``coalesced``), or, with ``per_send``,
    each send starts a new skb (its tail was pushed at once).

    >>> send, piece, starts, skb, done = stream_layout(3, 40, 100, False)
    >>> skb.tolist(), done.tolist()
    ([100, 20], [2, 2])
    >>> stream_layout(3, 40, 100, False, per_send=True)[3].tolist()
    [40, 40, 40]
    """
    total = sends * size
    send_start = np.arange(0, total, size, dtype=np.int64)
    if per_send:
        skb_start = (send_start[:, None]
                     + np.arange(0, size, goal, dtype=np.int64)[None, :]).ravel()
    else:
        skb_start = np.arange(0, total, goal, dtype=np.int64)
    cuts = np.union1d(send_start, skb_start)
    if frag:
        cuts = np.union1d(cuts, np.arange(0, total, SKB_FRAG_PAGE_SIZE, dtype=np.int64))
    ends = np.append(cuts[1:], total)
    skb_end = np.append(skb_start[1:], total)
    return (cuts // size, ends - cuts, np.isin(cuts, skb_start), skb_end - skb_start,
            (skb_end - 1) // size)


def stream_events(ev: Events, test: str, ninst: int, nops: int, size: int, ip: str,
                  alternatives: dict, rng: np.random.Generator) -> None:
    """Add ``nops`` sends of every instance (send ``j`` of each in round ``j``)."""
    depth = int(alternatives["queue_depth"])
    if test == "SCTP_STREAM_MANY":
        _sctp(ev, ninst, nops, size, ip, depth, alternatives["ack"], alternatives["rx"], rng)
        return
    send, piece, starts, skb_len, done = stream_layout(
        nops, size, tcp_mss(ip), test != "TCP_SENDFILE",
        per_send=alternatives["segments"] == "per_send")
    phase = rng.random((ninst, nops))  # when in its round each instance sends

    def at(inst: np.ndarray, j: np.ndarray) -> np.ndarray:
        inside = np.minimum(j, nops - 1)
        return j + 0.5 * phase[inst, inside]

    i = np.repeat(np.arange(ninst, dtype=np.int64), len(send))
    j = np.tile(send, ninst)
    t = at(i, j)
    new = np.tile(starts, ninst)
    ev.add("skb", t[new] + 0.01, i[new], arg=_H)
    ev.add("copy", t + 0.02, i, arg=np.tile(piece, ninst))
    k = np.repeat(np.arange(ninst, dtype=np.int64), len(skb_len))
    jd = np.tile(done, ninst)
    truesize = _H + np.tile(skb_len, ninst)
    sent = at(k, jd) + 0.03
    read = fifo(k, at(k, jd + bounded_delay(rng, len(k), depth)) + 0.04)
    if alternatives["rx"] == "softirq":
        ev.add("rx", sent, k, arg=truesize)
    else:
        ev.add("rx_backlog", read - 0.001, k, arg=truesize)
    ev.add("read", read, k, arg=truesize)
    ev.add("ack" if alternatives["ack"] == "backlog" else "ack_softirq", read + 0.001, k,
           arg=truesize)


def _sctp(ev: Events, ninst: int, nops: int, size: int, ip: str, depth: int, ack: str,
          rx: str, rng: np.random.Generator) -> None:
    chunks = sctp_chunks(size, ip)
    c = np.array(chunks, dtype=np.int64)
    ts = np.array([sctp_chunk_truesize(x) for x in chunks], dtype=np.int64)
    i = np.repeat(np.arange(ninst, dtype=np.int64), nops)
    j = np.tile(np.arange(nops, dtype=np.int64), ninst)
    t = j + 0.5 * rng.random(len(i))
    ev.add("send", t + 0.01, i, sched=size, arg=int(ts.sum()))
    read = fifo(i, j + bounded_delay(rng, len(i), depth) + 0.3 + 0.5 * rng.random(len(i)))
    # the receive: in the softirq of the send, or from the reader's backlog just
    # before it reads (it held the lock, copying, when the packet came)
    got = t if rx == "softirq" else read - 0.03
    for n in range(len(chunks)):
        ev.add("rx" if rx == "softirq" else "rx_backlog", got + 0.02 + 0.001 * n, i,
               sched=16 + int(c[n]), arg=int(c[n]) + SIZEOF_SK_BUFF)
        ev.add("read", read + 0.001 * n, i, arg=int(c[n]) + SIZEOF_SK_BUFF)
    # every second packet's SACK frees the two chunks since the last one, sent where
    # that packet is received and processed when the sender leaves sctp_sendmsg
    # (backlog) or at once (softirq, on the CPU that sent the SACK)
    per = len(chunks)
    packet = np.tile(np.arange(nops * per, dtype=np.int64), ninst)
    inst = np.repeat(np.arange(ninst, dtype=np.int64), nops * per)
    sack = packet | 1  # packets 2m and 2m+1 are freed at packet 2m+1's SACK
    due = sack < nops * per
    then = got[inst[due] * nops + sack[due] // per]  # when the SACK's packet was received
    if ack == "backlog":
        key, delay = "ack", 0.4
        if rx == "backlog":  # the sender's next sctp_sendmsg processes it
            then = np.ceil(then)
    else:
        key, delay = ("ack_softirq" if rx == "softirq" else "ack_softirq_reader"), 0.025
    ev.add(key, then + delay + 0.001 * (packet[due] % 2), inst[due],
           arg=np.tile(ts, ninst * nops)[due])
