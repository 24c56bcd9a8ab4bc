"""The ``relevance`` kind: ranking's factors beside the relevance composite, term by term."""

from __future__ import annotations

import argparse
from pathlib import Path

from mama_plugin.cli.options import argument, command
from mama_plugin.errors import MamaError

from .options import (
    count,
    dataset_option,
    embedder,
    figures_option,
    keyword_only_option,
    progress,
    report,
)


@command(
    "relevance",
    "ranking's factors beside the relevance composite and each of its terms removed, "
    "on LoCoMo and the recall sets",
)
@dataset_option("LoCoMo's locomo10.json (default: shared/bench's)")
@argument("--depth", type=int, default=25, metavar="N", help="results per question (default 25)")
@argument(
    "--only",
    choices=("locomo", "recall"),
    metavar="PART",
    help="locomo or recall alone (default: LoCoMo, then recall)",
)
@argument(
    "--conversations", type=count, metavar="N", help="LoCoMo's first N conversations (default all)"
)
@argument(
    "--every", type=count, default=1, metavar="N", help="one recall prompt in N (default 1: all)"
)
@argument(
    "--quick",
    action="store_true",
    help="no multilingual-e5 reading Korean prompts for MiniLM (the same for every row)",
)
@keyword_only_option()
@figures_option()
def relevance(args: argparse.Namespace) -> int:
    from .recall import LOCOMO
    from .relevance import PARTS, relevance_run

    dataset: Path = args.dataset or LOCOMO
    if not dataset.is_file():
        raise MamaError(f"no LoCoMo file at {dataset}: give --dataset PATH to locomo10.json")
    model = embedder(args)
    return report(
        args,
        *relevance_run(
            args.config,
            model,
            dataset,
            depth=args.depth,
            parts=(args.only,) if args.only else PARTS,
            conversations=args.conversations,
            every=args.every,
            quick=args.quick,
            progress=progress,
        ),
    )
