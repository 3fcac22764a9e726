"""The ``memcglab`` command line: one sub-command per module.

Each sub-command lives in its own module, which provides
``add_arguments(parser)`` and ``run(args) -> int``; this file only dispatches, so
adding a command is one line in ``COMMANDS``. Modules are imported lazily so that
``memcglab replay`` does not pay for numba or papermill.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# command name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "replay": ("memcglab.replay_cli", "replay a trace through a stock model (the replay contract)"),
    "sweep": ("memcglab.sweep.cli", "run a notebook over a parameter grid, resumably, to Parquet"),
    "reproduce": ("memcglab.reproduce", "run every study notebook and write the report"),
    "layout": ("memcglab.layout.cli", "pahole-style layout and cache lines of a kernel struct"),
    "notebooks": ("memcglab.notebooks_cli", "copy the study notebooks into a directory to open"),
    "probe": ("memcglab.probe.cli",
              "measure this machine's cache-line and atomic costs into a machine profile"),
    "predict": ("memcglab.scenario.cli",
                "predict a scenario's change in throughput and perf profile (the scenario "
                "contract)"),
    "validate": ("memcglab.validation.cli",
                 "score predictions of the development set leave-one-source-out"),
}


def version() -> str:
    """The installed distribution's version (the package's own when not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("memcglab")
    except PackageNotFoundError:  # run from a checkout that was never installed
        import memcglab

        return memcglab.__version__


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: ``--version`` and one (help-only) sub-parser per command."""
    parser = argparse.ArgumentParser(
        prog="memcglab",
        description="memcglab: a research lab for the Linux memory-cgroup charge path")
    parser.add_argument("--version", action="version", version=f"memcglab {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (_module, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``memcglab COMMAND ...`` (``argv`` defaults to ``sys.argv[1:]``); the exit status.

    Only the chosen command's module is imported.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        parser = build_parser()
        parser.parse_args(argv)  # prints help or "invalid choice" and exits 2
        return 2
    module = importlib.import_module(COMMANDS[argv[0]][0])
    parser = argparse.ArgumentParser(
        prog=f"memcglab {argv[0]}", description=COMMANDS[argv[0]][1], allow_abbrev=False
    )
    module.add_arguments(parser)
    args = parser.parse_args(argv[1:])
    return int(module.run(args))


if __name__ == "__main__":
    sys.exit(main())
