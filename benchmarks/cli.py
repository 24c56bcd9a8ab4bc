"""``python -m benchmarks``: run one benchmark and print its report.

A command of its own, not a ``mama`` subcommand: the product never ships or imports its
benchmarks (the wheel holds ``mama_plugin`` alone), so an installed ``mama`` must not offer a
command that cannot run without a checkout. The process is built as ``mama``'s is: one strict
``Config`` for the run, MAMA's files private; a MamaError is one ``benchmarks: error: …`` line
(exit 1), a usage error exits 2, anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from mama_plugin.cli import reader_gone
from mama_plugin.config import Config, mama_home
from mama_plugin.errors import MamaError
from mama_plugin.home import keep_private

from .kinds import KINDS
from .tables import tables

__all__ = ["build_parser", "main"]

PROG = "python -m benchmarks"


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser: one subcommand per benchmark (also used by the docs test)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="MAMA's benchmarks, run from a source checkout: each prints its figures.",
    )
    sub = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    for kind in KINDS:
        kind.add_to(sub)
    tables.add_to(sub)  # not a benchmark: renders benchmarks/README.md's tables from their JSON
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m benchmarks``; a reader that closes the pipe early (``… |
    head``) ends it quietly, as it ends ``mama`` (:func:`mama_plugin.cli.reader_gone`)."""
    try:
        try:
            return _run(argv)
        finally:  # also after --help or a usage error, which leave through SystemExit
            sys.stdout.flush()
    except BrokenPipeError:
        return reader_gone()


def _run(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    keep_private(mama_home())  # new files 0600, as under ``mama``
    try:
        args.config = Config()
        _ = args.config.settings  # every key parsed now, so no benchmark fails halfway
        return int(args.handler(args))
    except MamaError as exc:
        print(f"benchmarks: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
