"""``python -m benchmarks story``: resume point and open items of every session start;
``bodies``: what the model reads from MAMA over ten real Claude Code sessions."""

from __future__ import annotations

import argparse
from pathlib import Path

from mama_plugin.cli.options import argument, command
from mama_plugin.errors import MamaError

from .options import count, figures_option, progress, report


@command(
    "story",
    "labelled multi-session sequences: is each start's resume point and open work right?",
)
@argument(
    "--baseline-plugin",
    type=Path,
    metavar="DIR",
    help="another MAMA checkout (e.g. an older commit's) replayed on the same sequences, "
    "its figures beside today's",
)
@argument("--limit", type=count, metavar="N", help="only the first N sequences (default: all)")
@argument(
    "--verbose", action="store_true", help="also print every start judged wrong, with its text"
)
@figures_option()
def story(args: argparse.Namespace) -> int:
    from .story import story_run

    baseline = args.baseline_plugin.resolve() if args.baseline_plugin else None
    if baseline is not None and not (baseline / "mama_plugin").is_dir():
        raise MamaError(f"--baseline-plugin {baseline}: not a MAMA checkout (no mama_plugin/)")
    text, data = story_run(baseline, limit=args.limit, verbose=args.verbose, progress=progress)
    return report(args, text, data)


@command(
    "bodies", "ten real claude -p sessions: MAMA's tokens in every request body Claude Code sent"
)
@figures_option()
def bodies(args: argparse.Namespace) -> int:
    from .bodies import bodies_run

    return report(args, *bodies_run(progress=progress))
