"""Fast reading of the trace text format: whole files, or streamed into an engine.

:func:`parse_text_fast` returns what :func:`memcglab.trace.parse_text` returns (the
same ``Trace``, or the same ``TraceError``) with no Python work per line: the
compiled scanner (:mod:`memcglab.engine.scan`) reads well-formed lines and the
compiled validator checks them. When either refuses a line, the message comes
from ``parse_text`` itself, run on a few-line synthetic document that rebuilds the
checker's state before that line (every memcg created so far, the offlined ones
offlined); only the line number is put back. :func:`replay_text` streams a file of
any size through an :class:`~memcglab.engine.engine.Engine` in blocks.

>>> t = parse_text_fast("memcglab-trace 1\\ncpus 2\\ncgroup 5 0\\ncharge 1 5 3\\n")
>>> t.cpus, t.ops["line"].tolist()
(2, [3, 4])
>>> parse_text_fast("memcglab-trace 1\\ncpus 2\\ncgroup 5 0\\ncharge 2 5 3\\n", "f")
Traceback (most recent call last):
...
memcglab.trace.TraceError: f:4: charge: cpu 2 out of range 0..1
"""

from __future__ import annotations

import codecs
import sys
from collections.abc import Iterator
from typing import BinaryIO

import numpy as np

from memcglab.engine.engine import Engine, check_own_engine, obj_era_code, replay_compiled
from memcglab.engine.scan import (
    ST_BAD_END,
    ST_BAD_LINE,
    ST_BAD_START,
    ST_CPUS,
    ST_CPUS_LINE,
    ST_CPUS_SEEN,
    ST_NODES,
    ST_NODES_SEEN,
    new_scan_state,
    scan,
)
from memcglab.engine.validate import ChunkValidator
from memcglab.events import ChargeEvents
from memcglab.models import check_refill, nested_allowed, per_memcg_bound, stock_slots
from memcglab.trace import (
    HEADER,
    OP_DTYPE,
    Trace,
    TraceError,
    check_stock_slots,
    parse_text,
    read_trace,
)

__all__ = ["parse_text_fast", "read_trace_fast", "replay_text", "BLOCK"]

BLOCK = 1 << 26  # bytes read per streaming step
_HEADER = HEADER.encode()


class _Reader:
    """Scanner state and exact errors for one text; blocks are fed in order."""

    def __init__(self, source: str, single: bool, slots: int | None = None,
                 per_memcg: str | None = None) -> None:
        self.source, self.single, self.slots = source, single, slots
        self.per_memcg = per_memcg
        self.st = new_scan_state()
        self.line = 1  # the header
        self.validator: ChunkValidator | None = None

    def header(self, first: bytes) -> int:
        """Check line 1 in the first block; return the offset just after it."""
        nl = first.find(b"\n")
        raw = first if nl < 0 else first[:nl]
        if raw.removesuffix(b"\r") != _HEADER or nl < 0:
            parse_text(raw + b"\n" if nl >= 0 else first, self.source, single=self.single)
        return nl + 1

    def rows(self, buf: np.ndarray, pos: int, final: bool
             ) -> tuple[np.ndarray, np.ndarray | None, int]:
        """Scan and validate the complete lines of ``buf[pos:]``; return (rows, dense, pos)."""
        out = np.zeros(int(np.count_nonzero(buf[pos:] == 10)) + 1, dtype=OP_DTYPE)
        n, pos, self.line = scan(buf, pos, self.line, final, self.st, out)
        ops = out[:n]
        if self.validator is None and self.st[ST_CPUS_SEEN]:
            # the contract's bound on the machine's stock slots, at the cpus line, first
            check_stock_slots(self.source, int(self.st[ST_CPUS_LINE]), int(self.st[ST_CPUS]),
                              self.slots)
            self.validator = ChunkValidator(int(self.st[ST_CPUS]), self.single, self.source,
                                            self.per_memcg)
        if self.validator is not None:
            self.validator.nodes = int(self.st[ST_NODES])  # the nodes line precedes the ops
        dense = self.validator.check(ops) if self.validator is not None else None
        if self.st[ST_BAD_LINE]:
            self._refuse(bytes(buf[self.st[ST_BAD_START]:self.st[ST_BAD_END]]))
        return ops, dense, pos

    def _refuse(self, raw: bytes) -> None:
        # parse_text's message for this line, given the state the lines before it left.
        lines = [_HEADER]
        v = self.validator
        if v is not None:
            ids, parent = v.ids, v.parent
            lines.append(b"cpus %d" % v.cpus)
            if self.st[ST_NODES_SEEN]:
                lines.append(b"nodes %d" % self.st[ST_NODES])
            lines += [b"cgroup %d %d" % (ids[d], ids[parent[d]]) for d in range(1, len(ids))]
            lines += [b"offline %d" % ids[d] for d in range(len(ids) - 1, 0, -1)
                      if not v.online[d]]
        try:
            parse_text(b"\n".join([*lines, raw]) + b"\n", self.source, single=self.single,
                       per_memcg=self.per_memcg)
        except TraceError as exc:
            if exc.line == len(lines) + 1:
                raise TraceError(self.source, int(self.st[ST_BAD_LINE]), exc.message) from None
        raise RuntimeError(f"{self.source}:{int(self.st[ST_BAD_LINE])}: the fast reader "
                           f"refused {raw!r} but parse_text does not; please report")


def parse_text_fast(text: str | bytes, source: str = "<memory>", *, single: bool = False,
                    slots: int | None = None, per_memcg: str | None = None) -> Trace:
    """:func:`memcglab.trace.parse_text` (same result, same errors), compiled."""
    if isinstance(text, str):
        try:
            data = text.encode()
        except UnicodeEncodeError:  # lone surrogates: only parse_text knows what they mean
            return parse_text(text, source, single=single, slots=slots, per_memcg=per_memcg)
    else:
        data = bytes(text)
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return parse_text(data, source, single=single)  # raises "not valid UTF-8"
    reader = _Reader(source, single, slots, per_memcg)
    pos = reader.header(data)
    ops, _, _ = reader.rows(np.frombuffer(data, dtype=np.uint8), pos, final=True)
    if reader.validator is None:
        return parse_text(data, source, single=single)  # raises: no cpus line
    return Trace(reader.validator.cpus, ops, source, int(reader.st[ST_NODES]),
                 int(reader.st[ST_CPUS_LINE]))


def read_trace_fast(path: str, *, single: bool = False, slots: int | None = None,
                    per_memcg: str | None = None) -> Trace:
    """:func:`memcglab.trace.read_trace` (``-`` reads standard input), compiled."""
    if path == "-":
        return parse_text_fast(sys.stdin.buffer.read(), path, single=single, slots=slots,
                               per_memcg=per_memcg)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return read_trace(path, single=single)  # raises its "cannot read trace" error
    return parse_text_fast(data, path, single=single, slots=slots, per_memcg=per_memcg)


class _TextStream:
    """Blocks of a file in order: ``(rows, dense column)`` per block, exact errors.

    Invalid UTF-8 anywhere wins over any other error, as in ``parse_text`` (which
    decodes the whole text first): an error found in one block is raised only after
    the rest of the file has been checked.
    """

    def __init__(self, fh: BinaryIO, path: str, single: bool, block: int,
                 slots: int | None = None, per_memcg: str | None = None) -> None:
        self.fh, self.path, self.single, self.block = fh, path, single, block
        self.reader = _Reader(path, single, slots, per_memcg)
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.newlines = 0  # in the blocks before the current one

    def _decode(self, chunk: bytes) -> None:
        if chunk.isascii() and not self.decoder.getstate()[0]:
            self.newlines += chunk.count(b"\n")
            return
        pending = len(self.decoder.getstate()[0])
        try:
            self.decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            line = self.newlines + chunk[:max(0, exc.start - pending)].count(b"\n") + 1
            try:
                parse_text(_HEADER + b"\n\xff\n", self.path)
            except TraceError as err:
                raise TraceError(self.path, line, err.message) from None
        self.newlines += chunk.count(b"\n")

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        try:
            yield from self._blocks()
        except TraceError as exc:
            if exc.message != "not valid UTF-8":
                while chunk := self.fh.read(self.block):
                    self._decode(chunk)
                self._final_decode()
            raise

    def _final_decode(self) -> None:
        try:
            self.decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            self._decode(b"\xff")  # a sequence cut off by the end of the file: raises

    def _blocks(self) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        reader, carry, started = self.reader, b"", False
        while chunk := self.fh.read(self.block):
            self._decode(chunk)
            data = carry + chunk
            pos = 0
            if not started:
                if b"\n" not in data:
                    carry = data
                    continue
                pos, started = reader.header(data), True
            ops, dense, pos = reader.rows(np.frombuffer(data, dtype=np.uint8), pos, False)
            carry = data[pos:]
            yield ops, dense
        self._final_decode()
        if not started:
            reader.header(carry)  # one line, no newline: parse_text raises
            parse_text(carry, self.path, single=self.single)
        ops, dense, _ = reader.rows(np.frombuffer(carry, dtype=np.uint8), 0, True)
        if reader.validator is None:  # header, comments and blank lines only
            lines = self.newlines + (0 if carry.endswith(b"\n") or not carry else 1)
            try:
                parse_text(_HEADER + b"\n", self.path, single=self.single)
            except TraceError as err:
                raise TraceError(self.path, max(lines, 1), err.message) from None
        yield ops, dense


def replay_text(path: str, model: str = "multi", slots: int = 7, seed: int = 0,
                batch: int = 64, check: bool = False, events: bool = False,
                block: int = BLOCK, refill: str = "always", policy: str | None = None,
                obj_stock: str | None = None) -> dict | tuple[dict, ChargeEvents]:
    """Replay a trace file block by block, in bounded memory.

    Same result and same errors as ``replay_compiled(read_trace(path), ...)``.
    Standard input (``-``) is read whole, and so is a trace of a model whose compiled
    implementation is a replay function of its own (it takes a whole trace).
    """
    own = check_own_engine(model, slots, seed, batch, policy)
    check_refill(refill)
    if not own:
        obj_era_code(model, obj_stock)  # argument errors before trace errors
    bound = stock_slots(model, slots)
    single = not nested_allowed(model)
    if path == "-" or own:
        return replay_compiled(read_trace_fast(path, single=single, slots=bound,
                                               per_memcg=per_memcg_bound(model)),
                               model, slots, seed, batch, check, events, refill, policy,
                               obj_stock)
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return replay_compiled(read_trace(path), model, slots, seed, batch, check, events,
                               refill, policy, obj_stock)
    with fh:
        stream = _TextStream(fh, path, single, block, bound, per_memcg_bound(model))
        engine = None
        for ops, dense in stream:
            if dense is None:
                continue
            if engine is None:
                engine = Engine(stream.reader.validator.cpus, model, slots, seed, batch, check,
                                events, path, validator=stream.reader.validator,
                                cpus_line=int(stream.reader.st[ST_CPUS_LINE]), refill=refill,
                                nodes=int(stream.reader.st[ST_NODES]), policy=policy,
                                obj_stock=obj_stock)
            engine.replay(ops, dense)
    assert engine is not None
    return (engine.result(), engine.events()) if events else engine.result()
