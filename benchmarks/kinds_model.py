"""The benchmarks of the local generative model: drafting, contention with the hooks, memory.

Declared as :mod:`.kinds` declares the others (:data:`.kinds.KINDS` lists them in order).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mama_plugin.cli.options import argument, command

from .options import (
    count,
    embedder,
    figures_option,
    keyword_only_option,
    progress,
    report,
    runs_option,
    threads,
)


@command("draft", "drafting with the local model on recorded transcripts: time and grounding")
@runs_option(3, "runs over the transcripts")
@argument(
    "--transcripts",
    type=Path,
    metavar="DIR",
    help="a folder of Claude Code transcripts (default: tests/fixtures/transcripts)",
)
@argument(
    "--threads",
    type=threads,
    metavar="N",
    help="llama.cpp threads for the model (default: assistthreads; 0: all cores)",
)
@figures_option()
def draft(args: argparse.Namespace) -> int:
    from .draft import draft_run

    return report(
        args,
        *draft_run(args.runs, folder=args.transcripts, config=args.config, threads=args.threads),
    )


@command("contention", "a prompt's hook timed with and without a model draft running")
@argument(
    "--prompts",
    type=count,
    default=60,
    metavar="N",
    help="prompts per mode and round (default 60)",
)
@argument(
    "--rounds",
    type=count,
    default=4,
    metavar="N",
    help="rounds of the modes, each starting with the next mode (default 4)",
)
@argument(
    "--size", type=count, default=1000, metavar="N", help="memories in the store (default 1000)"
)
@argument(
    "--gap-ms", type=float, default=50.0, metavar="MS", help="between two prompts (default 50)"
)
@keyword_only_option()
@figures_option()
def contention(args: argparse.Namespace) -> int:
    from .contention import contention_run

    model = embedder(args, one_thread=True)
    return report(
        args,
        *contention_run(
            args.prompts,
            config=args.config,
            embedder=model,
            size=args.size,
            rounds=args.rounds,
            gap_ms=args.gap_ms,
            progress=progress,
        ),
    )


@command("memory", "RSS of concurrent mama serve processes: at rest, after a draft, when idle")
@argument("--sessions", type=count, default=4, metavar="N", help="servers at once (default 4)")
@argument(
    "--idle-s",
    type=float,
    metavar="S",
    help="assist_idle_s for the servers (default: the setting's, 60)",
)
@figures_option()
def memory(args: argparse.Namespace) -> int:
    from .memory import memory_run

    return report(
        args, *memory_run(args.sessions, config=args.config, idle_s=args.idle_s, progress=progress)
    )
