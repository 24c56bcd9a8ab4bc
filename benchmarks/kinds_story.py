"""``python -m benchmarks story``: resume point and open items of every session start;
``items``: whether two of those items are one, and whether a later session closes one;
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

    baseline = _checkout(args.baseline_plugin)
    text, data = story_run(baseline, limit=args.limit, verbose=args.verbose, progress=progress)
    return report(args, text, data)


@command(
    "bodies", "ten real claude -p sessions: MAMA's tokens in every request body Claude Code sent"
)
@figures_option()
def bodies(args: argparse.Namespace) -> int:
    from .bodies import bodies_run

    return report(args, *bodies_run(progress=progress))


def _checkout(path: Path | None) -> Path | None:
    """``--baseline-plugin``'s checkout, resolved, or a clear error when it is not one."""
    baseline = path.resolve() if path else None
    if baseline is not None and not (baseline / "mama_plugin").is_dir():
        raise MamaError(f"--baseline-plugin {baseline}: not a MAMA checkout (no mama_plugin/)")
    return baseline


def _profiles(text: str) -> list[str]:
    from .coauthor import profiles_option

    return profiles_option(text)


@command(
    "items",
    "are two items of open work one, and does a later session close one? rules, the "
    "embedding, each model",
)
@argument(
    "--profiles",
    type=_profiles,
    default=[],
    metavar="P[,P]",
    help="model profiles (or GGUF paths) asked for a verdict on each pair, comma-separated, or "
    "all (default: none)",
)
@argument(
    "--baseline-plugin",
    type=Path,
    metavar="DIR",
    help="a checkout whose starts add their pairs (one from before the rules merged items, "
    "e.g. e9cf2b2: this checkout's starts hold only the pairs its rules left apart)",
)
@figures_option()
def items(args: argparse.Namespace) -> int:
    from .items import same_items_run

    baseline = _checkout(args.baseline_plugin)
    return report(args, *same_items_run(args.config, args.profiles, baseline, progress=progress))
