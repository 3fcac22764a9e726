"""``memcglab validate [--out DIR] [--quick]``: the leave-one-source-out scoreboard.

Prints, per development case, the measured change (± its noise) beside the prediction's
median [90%], whether the band holds the measurement widened by its noise, whether the
sign is right, the three baselines and, where the source prints a perf profile, measured
against predicted shares; then the summary per method (``data/validation/rules.md``).
Then the profile comparison against issue 22's factor-of-2 goal
(:mod:`memcglab.validation.profiles`) and the model's build-up, the committed ablation and
the registered tests after it (:mod:`memcglab.validation.buildup`; the build-up takes
hours, so it is read, not run: ``python -m memcglab.validation.ablation`` runs it).
``--out DIR`` writes ``scoreboard.parquet`` (one row per case), ``summary.csv``,
``profiles.parquet`` (with the comparison's columns), ``not_scored.csv`` (the cases
the model refuses to price yet, with the refusal), ``buildup.csv``, the proper-rule
tables and each fold's calibration, each file atomically.
``--calibrate FILE`` instead fits one calibration on every case and writes it to FILE
(how ``data/calibration/default.json`` is made).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from memcglab.scenario.predict import DEFAULT_POINTS, MAX_POINTS

__all__ = ["QUICK_POINTS", "add_arguments", "markdown_table", "run"]

#: points per prediction with --quick (CI): a coarser band, the same calibrations
QUICK_POINTS = 64


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options."""
    parser.add_argument("--out", metavar="DIR", help="write the scoreboard's tables to DIR")
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK_POINTS} points per prediction (a CI-sized run)")
    parser.add_argument("--points", type=int, default=None,
                        help=f"points per prediction (default {DEFAULT_POINTS})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--calibrate", metavar="FILE",
                        help="fit one calibration on every case and write it to FILE")


def markdown_table(frame) -> str:
    """``frame`` (its index first) as a Markdown table, without pandas' ``to_markdown``,
    which needs the optional ``tabulate`` package that memcglab does not depend on.

    >>> import pandas as pd
    >>> print(markdown_table(pd.DataFrame({"cases": [3, 1], "coverage": [0.5, float("nan")]},
    ...                                   index=pd.Index(["a", "b"], name="method"))))
    | method | cases | coverage |
    |---|---|---|
    | a | 3 | 0.5 |
    | b | 1 | nan |
    """
    head = [str(frame.index.name or ""), *map(str, frame.columns)]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for index, values in zip(frame.index, frame.itertuples(index=False), strict=True):
        rows.append("| " + " | ".join(str(v) for v in (index, *values)) + " |")
    return "\n".join(rows)


def _atomic(path: Path, write) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _calibrate(path: Path) -> int:
    from memcglab.calibration.files import dump_calibration
    from memcglab.validation.dataset import case_models
    from memcglab.validation.scoreboard import calibrate_on

    cf = calibrate_on(case_models())
    _atomic(path, lambda p: p.write_text(dump_calibration(cf)))
    cal = cf.calibration
    print(f"calibration of {len(cal.cases)} observations written to {path} "
          f"(converged: {cal.converged})")
    for n in cal.names:
        lo, hi = cal.interval(n)
        print(f"  {n:28s} {cal.mode[n]:11.4g}  [{lo:.4g}, {hi:.4g}]  "
              f"posterior/prior sd {cal.shrinkage()[n]:.2f}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Score, or calibrate; the exit status."""
    points = args.points or (QUICK_POINTS if args.quick else DEFAULT_POINTS)
    if not 1 <= points <= MAX_POINTS:
        print(f"--points {points}: must be between 1 and {MAX_POINTS}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else None
    if out is not None and out.exists() and not out.is_dir():
        print(f"--out {args.out}: exists and is not a directory", file=sys.stderr)
        return 2
    if args.calibrate:
        target = Path(args.calibrate)
        if target.is_dir() or not target.parent.is_dir():
            print(f"--calibrate {args.calibrate}: must be a file in an existing directory",
                  file=sys.stderr)
            return 2
    from memcglab.validation.scoreboard import profile_frame, summary
    from memcglab.validation.scoreboard import run as run_board
    from memcglab.validation.views import case_table

    start = time.monotonic()
    try:
        if args.calibrate:
            return _calibrate(Path(args.calibrate))
        frame, folds = run_board(points=points, seed=args.seed, progress=lambda s: print(
            f"[{time.monotonic() - start:5.0f} s] {s}", file=sys.stderr, flush=True))
    except KeyboardInterrupt:
        print("memcglab validate: interrupted; nothing was written", file=sys.stderr)
        return 130
    table = summary(frame)
    profiles = profile_frame(frame)
    from memcglab.validation.proper import proper_run, proper_text, write_tables

    proper, proper_table = proper_run(frame, folds, points, args.seed)
    from memcglab.validation.buildup import (
        ABLATION_RUN,
        buildup_table,
        follow_ups,
        load_ablation,
    )
    from memcglab.validation.profiles import profile_comparison, profile_text

    comparison = profile_comparison(profiles) if len(profiles) else profiles
    # the build-up is hours of fits: the committed run is shown, not run again
    table_up = buildup_table(load_ablation())
    buildup = pd.concat([table_up, follow_ups(table_up)], ignore_index=True)
    from memcglab.validation.dataset import unpriced_cases

    refused = unpriced_cases()
    # the files first: a failure while printing (a closed pipe) must not lose the run
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        board = frame.drop(columns=["_profile"])
        _atomic(out / "scoreboard.parquet", lambda p: board.to_parquet(p, index=False))
        _atomic(out / "summary.csv", lambda p: table.to_csv(p))
        _atomic(out / "not_scored.csv", lambda p: pd.DataFrame(
            [{"case": c.case_id, "refusal": why} for c, why in refused],
            columns=["case", "refusal"]).to_csv(p, index=False))
        _atomic(out / "profiles.parquet", lambda p: comparison.to_parquet(p, index=False))
        _atomic(out / "buildup.csv", lambda p: buildup.to_csv(p, index=False))
        write_tables(out, proper, proper_table, _atomic, points, args.seed)
        from memcglab.calibration.files import dump_calibration

        for source, fold in folds.items():
            _atomic(out / f"calibration-without-{source}.json",
                    lambda p, f=fold: p.write_text(dump_calibration(f.calibration)))
    print("# Leave-one-source-out scoreboard\n")
    print(case_table(frame))
    if refused:
        print(f"\nNot scored: {len(refused)} development cases the model cannot price yet "
              "(they enter the scoreboard when it can):")
        for case, why in refused:
            print(f"- {case.case_id}: {why.split(': ', 1)[1]}")
    print("\n## Summary\n")
    print(markdown_table(table.round(3)))
    print("\n## Proper scores (rules_addendum_2026-12-02), mean over sources; lower is better\n")
    print(proper_text(proper_table))
    if len(profiles):
        print("\n## Profiles: measured vs predicted share of cycles (%)\n")
        print(profiles.round(2).to_string(index=False))
        print("\n" + profile_text(comparison))
    print(f"\n## The model built up (the committed runs, {ABLATION_RUN} and after)\n")
    print(markdown_table(buildup.set_index("step").round(3)))
    if out is not None:
        print(f"\nwritten to {out}", file=sys.stderr)
    return 0
