"""``memcglab predict SCENARIO.toml [...]``: the scenario contract's command.

Every file is checked before anything is simulated: a bad file (or a bad option) exits 2
with one line ``SCENARIO: key: what is wrong (valid: ...)`` on standard error and writes
nothing. Then one JSON object per scenario goes to standard output, one per line, in
argument order, or all of them as one JSON list, written atomically, to ``--out``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from memcglab.calibration.files import CalibrationFileError, load_calibration
from memcglab.scenario.output import dumps
from memcglab.scenario.predict import DEFAULT_POINTS, MAX_POINTS, predict_scenario
from memcglab.scenario.spec import ScenarioError, load_scenario

__all__ = ["MAX_SCENARIOS", "add_arguments", "run"]

#: most scenario files one command predicts (each takes up to about 30 s)
MAX_SCENARIOS = 1000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options (the scenario contract's)."""
    parser.add_argument("scenarios", nargs="+", metavar="SCENARIO.toml",
                        help="scenario files (docs/scenario-contract.md)")
    parser.add_argument("--out", metavar="FILE",
                        help="write all predictions to FILE as one JSON list (atomically)")
    parser.add_argument("--points", type=int, default=DEFAULT_POINTS,
                        help=f"parameter points of the uncertainty propagation "
                             f"(default {DEFAULT_POINTS}, at most {MAX_POINTS})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the points and traces")
    parser.add_argument("--draws", metavar="FILE",
                        help="also write every parameter point's change_pct (and weight) to "
                             "FILE as CSV, atomically (contract revision 2)")
    parser.add_argument("--calibration", default="default", metavar="default|none|FILE",
                        help="calibrated inputs: the project's (default), the hardware "
                             "priors alone (none), or a calibration file")


def _fail(message: str) -> int:
    print(message, file=sys.stderr)
    return 2


def _write_atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def run(args: argparse.Namespace) -> int:
    """Check everything, then predict every scenario; the exit status."""
    if not 1 <= args.points <= MAX_POINTS:
        return _fail(f"--points {args.points}: must be between 1 and {MAX_POINTS}")
    if not 0 <= args.seed < 2**32:
        return _fail(f"--seed {args.seed}: must be between 0 and 2^32-1")
    if len(args.scenarios) > MAX_SCENARIOS:
        return _fail(f"{len(args.scenarios)} scenario files: at most {MAX_SCENARIOS} per "
                     "command")
    out = Path(args.out) if args.out else None
    if out is not None and (out.is_dir() or not out.parent.is_dir()):
        return _fail(f"--out {args.out}: must be a file in an existing directory")
    draws = Path(args.draws) if getattr(args, "draws", None) else None
    if draws is not None and (draws.is_dir() or not draws.parent.is_dir()):
        return _fail(f"--draws {args.draws}: must be a file in an existing directory")
    try:
        cal, label = load_calibration(args.calibration)
    except CalibrationFileError as e:
        return _fail(f"--calibration {args.calibration}: {e}")
    scenarios = []
    for f in args.scenarios:
        try:
            scenarios.append(load_scenario(f))
        except ScenarioError as e:
            return _fail(str(e))
    # machine profiles, and what the model cannot price yet, before any simulation too
    from memcglab.scenario.machine import resolve_machine
    from memcglab.scenario.model import unpriced

    for s in scenarios:
        try:
            resolve_machine(s.machine, s.file)
        except ScenarioError as e:
            return _fail(str(e))
        refused = unpriced(s)
        if refused is not None:
            return _fail(str(refused))
    results = []
    collected: list = [] if draws is not None else None
    for s in scenarios:
        obj = predict_scenario(s, args.points, args.seed, cal, label, draws_out=collected,
                               draws_file=None if draws is None else str(draws))
        if out is None:
            sys.stdout.write(dumps(obj) + "\n")
            sys.stdout.flush()
        results.append(obj)
    if out is not None:
        _write_atomic(out, "[" + ",\n".join(dumps(r) for r in results) + "]\n")
    if draws is not None:
        _write_atomic(draws, _draws_csv(args.scenarios, collected))
    return 0


def _draws_csv(files: list[str], collected: list) -> str:
    """One row per scenario and point: its file, the point, change_pct, weight."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["file", "point", "change_pct", "weight"])
    for f, (_, change, weight) in zip(files, collected, strict=True):
        w.writerows([f, i, f"{c:.6g}", f"{x:.6g}"]
                    for i, (c, x) in enumerate(zip(change, weight, strict=True)))
    return buf.getvalue()
