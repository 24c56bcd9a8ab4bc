"""The benchmarks of the memory graph: relationship words and passes at size, link decay.

Declared as :mod:`.kinds` declares the others (:data:`.kinds.KINDS` lists them in order).
"""

from __future__ import annotations

import argparse

from mama_plugin.cli.options import argument, command

from .options import (
    count,
    dataset_option,
    embedder,
    figures_option,
    keyword_only_option,
    progress,
    report,
)


@command("graph", "relationship words by meaning (English/Korean) and tidy/health at 10k memories")
@argument("--memories", type=count, default=10_000, metavar="N", help="memories (10,000)")
@argument("--words", type=count, default=100, metavar="N", help="distinct words (100)")
@argument("--quick", action="store_true", help="the configured model only for the words")
@figures_option()
def graph(args: argparse.Namespace) -> int:
    from .graph import graph_run

    model = embedder(args)
    return report(
        args,
        *graph_run(
            args.config,
            model,
            memories=args.memories,
            words=args.words,
            quick=args.quick,
            progress=progress,
        ),
    )


@command("decay", "link decay rates on LoCoMo with time links, and pruning an aged graph")
@dataset_option("LoCoMo's locomo10.json (default: shared/bench's, if there)")
@argument("--conversations", type=count, default=10, metavar="N", help="LoCoMo conversations (10)")
@argument(
    "--memories", type=count, default=10_000, metavar="N", help="aged graph memories (10,000)"
)
@keyword_only_option()
@figures_option()
def decay(args: argparse.Namespace) -> int:
    from .decay import decay_run
    from .recall import LOCOMO

    model = embedder(args)
    dataset = args.dataset or (LOCOMO if LOCOMO.is_file() else None)
    return report(
        args,
        *decay_run(
            dataset,
            model,
            memories=args.memories,
            conversations=args.conversations,
            progress=progress,
        ),
    )
