"""``python -m benchmarks recall`` and ``adr``: prompt-time recall on public labelled prompts."""

from __future__ import annotations

import argparse

from mama_plugin.cli.options import argument, command
from mama_plugin.errors import MamaError

from .options import dataset_option, embedder, figures_option, keyword_only_option, progress, report


@command(
    "recall",
    "prompt recall on public labelled prompts (KLUE-STS, Stack Overflow, LoCoMo), held-out half",
)
@dataset_option("LoCoMo's locomo10.json (default: shared/bench's, if there)")
@argument(
    "--assist-judge",
    type=int,
    default=0,
    metavar="N",
    help="also judge the candidates of N related and N unrelated held-out prompts with the "
    "assist model (default 0: not run; a verdict takes ~1 s)",
)
@argument(
    "--quick",
    action="store_true",
    help="the configured model only (with multilingual-e5 reading Korean prompts when "
    "installed), without the one-memory stores and the smoke set",
)
@keyword_only_option()
@figures_option()
def recall(args: argparse.Namespace) -> int:
    from .recall import recall_run

    model = embedder(args)
    text, data = recall_run(
        args.config,
        model,
        args.dataset,
        assist_judge=args.assist_judge,
        quick=args.quick,
        progress=progress,
    )
    return report(args, text, data)


@command(
    "adr",
    "prompt recall on architecture decision records of 8 public repositories, halves by repository",
)
@keyword_only_option()
@figures_option()
def adr(args: argparse.Namespace) -> int:
    from .recall_adr import adr_run

    return report(args, *adr_run(embedder(args), progress=progress))


@command(
    "recall-bars",
    "other bars for a prompt-time pointer (relative to each memory, fixed, with words) beside "
    "today's tiers, on the ADR and recall sets",
)
@dataset_option("LoCoMo's locomo10.json (default: shared/bench's, if there)")
@argument(
    "--repositories",
    type=int,
    default=0,
    metavar="N",
    help="the first N ADR repositories only (default: all)",
)
@argument("--adr-only", action="store_true", help="the ADR set alone, not the recall set")
@figures_option()
def recall_bars(args: argparse.Namespace) -> int:
    from .recall import LOCOMO
    from .recall_bars import bars_run

    model = embedder(args)
    if model is None:
        raise MamaError("recall-bars compares bars on the model's relevance: it needs vectors")
    locomo = args.dataset or (LOCOMO if LOCOMO.is_file() else None)
    repositories = args.repositories or None
    text, data = bars_run(
        model, locomo=locomo, repositories=repositories, recall_set=not args.adr_only,
        progress=progress,
    )  # fmt: skip
    return report(args, text, data)
