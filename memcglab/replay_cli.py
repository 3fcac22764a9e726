"""``memcglab replay``: the command of the replay contract.

Exit status 0 on success (the JSON on standard output), 2 for bad arguments or a
malformed trace (a message on standard error, ``TRACE:LINE: what is wrong`` for
the trace), 1 when ``--check`` finds a broken invariant. Nothing reaches standard
output on failure. Arguments are checked before the trace is read.

``--model`` and ``--policy`` take any name of :mod:`memcglab.registry`, plugins
included (``MEMCGLAB_PLUGINS``, docs/extending.md). ``--policy`` is an extension of the
contract: it replaces a ``multi*`` model's victim policy and adds a ``policy`` key to
the output; without it the output is the contract's, byte for byte. A model or policy
the compiled engine cannot run is refused by name, exit 2.
"""

from __future__ import annotations

import argparse
import re
import sys

from memcglab import registry
from memcglab.models import (
    REFILLS,
    check_options,
    nested_allowed,
    per_memcg_bound,
    stock_slots,
)
from memcglab.trace import TraceError, read_trace

__all__ = ["add_arguments", "run"]

_DIGITS = re.compile(r"[0-9]+\Z")
_RANGES = {"slots": "1 and 2^24", "seed": "0 and 2^64-1", "batch": "1 and 524287"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``memcglab replay`` (the replay contract's command line)."""
    parser.add_argument("trace", metavar="TRACE", help="trace file ('-' reads standard input)")
    try:
        models = ", ".join(registry.MODEL_NAMES)
        policies = ", ".join(registry.POLICIES)
    except registry.PluginError as exc:  # reported when the command runs
        models = policies = f"(cannot list: {exc})"
    parser.add_argument("--model", default="multi",
                        help=f"stock model: {models} (default multi)")
    parser.add_argument("--policy", default=None,
                        help=f"victim policy of a multi* model in place of its own: {policies} "
                             "(adds a policy key to the output)")
    parser.add_argument("--slots", default="7", help="slots per CPU for multi* (1..2^24)")
    parser.add_argument("--seed", default="0", help="seed of the victim stream (0..2^64-1)")
    parser.add_argument("--batch", default="64", help="MEMCG_CHARGE_BATCH (1..524287)")
    parser.add_argument("--refill", default="always", choices=REFILLS,
                        help="stock refill variant of try_charge_memcg (scenario contract): "
                             "always (default), not-in-irq, never")
    parser.add_argument("--check", action="store_true",
                        help="verify the conservation invariant after every operation")
    parser.add_argument("--engine", default="faithful", choices=("faithful", "compiled"),
                        help="faithful Python port (default) or the compiled engine")


def _integer(name: str, text: str) -> int:
    if not _DIGITS.match(text):
        raise ValueError(f"--{name}={text[:40]!r}: must be a decimal integer")
    significant = text.lstrip("0") or "0"
    # int() refuses strings past sys.get_int_max_str_digits(); every bound has at most
    # 20 digits, so a longer value is only reported out of range, by its length.
    if len(significant) > 20:
        raise ValueError(f"--{name}: a {len(significant)}-digit value; must be between "
                         f"{_RANGES[name]}")
    return int(significant)


def _fail(message: str, status: int) -> int:
    sys.stderr.write(f"memcglab replay: {message}\n")
    return status


def run(args: argparse.Namespace) -> int:
    """Run ``memcglab replay``; the exit status the replay contract defines."""
    try:
        slots = _integer("slots", args.slots)
        seed = _integer("seed", args.seed)
        batch = _integer("batch", args.batch)
        check_options(args.model, slots, seed, batch)
        registry.resolve_policy(args.model, args.policy)
        if args.engine == "compiled":
            registry.check_compiled(args.model, args.policy, hint="use --engine faithful")
    except ValueError as exc:
        return _fail(f"error: {exc}", 2)
    if args.engine == "compiled":
        from memcglab.engine import native

        try:  # the C core, built on first use: a missing or failing compiler is exit 2
            if not callable(registry.model(args.model).compiled):  # a plugin's own engine
                native.load()
        except native.BuildError as exc:
            return _fail(f"error: {exc}; use --engine faithful", 2)
        # The compiled reader gives the same trace and the same errors, vectorised.
        from memcglab.engine import replay_compiled as replay_fn
        from memcglab.engine.textread import read_trace_fast as reader
    else:
        from memcglab.replay import replay as replay_fn
        reader = read_trace
    try:
        trace = reader(args.trace, single=not nested_allowed(args.model),
                       slots=stock_slots(args.model, slots),
                       per_memcg=per_memcg_bound(args.model))
    except TraceError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    from memcglab.replay import InvariantViolation, dumps

    try:
        result = replay_fn(trace, model=args.model, slots=slots, seed=seed, batch=batch,
                           check=args.check, refill=args.refill, policy=args.policy)
    except InvariantViolation as exc:
        sys.stderr.write(f"{args.trace}:{exc.line}: {exc.message}\n")
        return 1
    sys.stdout.write(dumps(result))
    return 0
