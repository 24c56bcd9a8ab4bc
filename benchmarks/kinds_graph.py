"""The benchmark of the memory graph's relationship words and passes at size.

Declared as :mod:`.kinds` declares the others (:data:`.kinds.KINDS` lists them in order).
"""

from __future__ import annotations

import argparse

from mama_plugin.cli.options import argument, command

from .options import count, embedder, figures_option, progress, report


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
