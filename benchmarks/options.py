"""The options several benchmarks share, declared once, and what every benchmark does at its end.

Each benchmark is a subcommand of ``python -m benchmarks`` declared with the product CLI's
decorators (``mama_plugin.cli.options``: ``command``, ``argument``) and only the options it
reads; an option two kinds share is declared here once and applied to each, as the ``mama``
command shares ``--json`` or ``--keyword-only``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from mama_plugin.cli.options import Decorator, argument, keyword_only_option
from mama_plugin.embeddings.protocol import EmbeddingModel

__all__ = [
    "count",
    "dataset_option",
    "embedder",
    "figures_option",
    "keyword_only_option",
    "progress",
    "report",
    "runs_option",
    "sizes_option",
    "threads",
]


def count(text: str) -> int:
    """A count: 1 or more."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def threads(text: str) -> int:
    """A thread count: 0 (all cores) or more."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def figures_option() -> Decorator:
    """``--json OUT``: also write every figure to a file (not the ``mama`` flag: a path)."""
    return argument("--json", metavar="OUT", help="also write every figure to this JSON file")


def runs_option(default: int, what: str) -> Decorator:
    """``--runs N``: how many ``what`` to time, ``default`` unless given."""
    return argument(
        "--runs", type=_positive, default=default, metavar="N", help=f"{what} (default {default})"
    )


def sizes_option(default: str = "1000,10000,100000") -> Decorator:
    """``--sizes A,B,…``: the store sizes to build, as a list of ints."""
    return argument(
        "--sizes",
        type=_sizes,
        default=default,
        metavar="N,N,...",
        help=f"store sizes (default {default})",
    )


def dataset_option(help: str, *, required: bool = False) -> Decorator:
    """``--dataset PATH``: a public data set the benchmark reads (never shipped here)."""
    return argument("--dataset", type=Path, required=required, metavar="PATH", help=help)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def _sizes(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def embedder(args: argparse.Namespace, *, one_thread: bool = False) -> EmbeddingModel | None:
    """The configured embedding model, or None with ``--keyword-only`` (for a kind that has it).

    ``one_thread``: embed with one thread unless ``embedding_threads`` is set, as the MCP
    server embeds one query at a time.
    """
    if getattr(args, "keyword_only", False):
        return None
    from mama_plugin.embeddings import open_embedder

    one = one_thread and not args.config.settings.embedding_threads
    model: EmbeddingModel = open_embedder(args.config, threads=1 if one else None, hold=True)
    return model


def progress(line: str) -> None:
    """A progress line, on stderr so the report on stdout stays clean."""
    print(f"  … {line}", file=sys.stderr, flush=True)


def report(args: argparse.Namespace, text: str, data: dict[str, Any]) -> int:
    """Print a benchmark's report; with ``--json OUT``, write its figures there too."""
    print(text, end="")
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
