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


def _profiles(text: str) -> list[str]:
    from .coauthor import profiles_option

    return profiles_option(text)


_PROFILES_HELP = (
    "model profiles (or paths of your own GGUF models) to compare, comma-separated, or all "
    "(default: assist_profile)"
)
_THREADS_HELP = "llama.cpp threads for the model (default: assist_threads; 0: all cores)"


@command("draft", "drafts on labelled transcript turns: extractor alone vs with each model")
@runs_option(1, "runs over the labelled turns (latency only; the scores are the first run's)")
@argument("--profiles", type=_profiles, metavar="P[,P]", help=_PROFILES_HELP)
@argument("--threads", type=threads, metavar="N", help=_THREADS_HELP)
@argument("--limit", type=count, metavar="N", help="the first N labelled turns only")
@argument(
    "--labels",
    type=Path,
    metavar="PATH",
    help="labelled turns (default: benchmarks/data/draft_labels.json)",
)
@figures_option()
def draft(args: argparse.Namespace) -> int:
    from .draft import LABELS, draft_run

    return report(
        args,
        *draft_run(
            args.runs,
            config=args.config,
            profiles=args.profiles,
            threads=args.threads,
            labels=args.labels or LABELS,
            limit=args.limit,
            progress=progress,
        ),
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
@argument(
    "--profile",
    metavar="P",
    help="the servers' model profile or GGUF path (default: assist_profile / assist_model_path)",
)
@figures_option()
def memory(args: argparse.Namespace) -> int:
    from .memory import memory_run

    return report(
        args,
        *memory_run(
            args.sessions,
            config=args.config,
            idle_s=args.idle_s,
            profile=args.profile or "",
            progress=progress,
        ),
    )


@command("links", "link judgements on labelled memory pairs: rules alone vs with each model")
@argument("--profiles", type=_profiles, metavar="P[,P]", help=_PROFILES_HELP)
@argument("--threads", type=threads, metavar="N", help=_THREADS_HELP)
@argument("--limit", type=count, metavar="N", help="the first N labelled pairs only")
@argument(
    "--labels",
    type=Path,
    metavar="PATH",
    help="labelled pairs (default: benchmarks/data/link_pairs.json)",
)
@keyword_only_option()
@figures_option()
def links(args: argparse.Namespace) -> int:
    from .links import LABELS, links_run

    return report(
        args,
        *links_run(
            config=args.config,
            profiles=args.profiles,
            threads=args.threads,
            embedder=embedder(args, one_thread=True),
            labels=args.labels or LABELS,
            limit=args.limit,
            progress=progress,
        ),
    )


@command("stopped", "a checkpoint's where-I-stopped and next-step lines: extractor vs each model")
@argument("--profiles", type=_profiles, metavar="P[,P]", help=_PROFILES_HELP)
@argument("--threads", type=threads, metavar="N", help=_THREADS_HELP)
@argument("--limit", type=count, metavar="N", help="the first N labelled turns only")
@argument(
    "--labels",
    type=Path,
    metavar="PATH",
    help="labelled turns (default: benchmarks/data/stopped_labels.json)",
)
@argument(
    "--timeout-s",
    type=float,
    metavar="S",
    help="assist_timeout_s for the models of this run (default: the setting's, 30)",
)
@figures_option()
def stopped(args: argparse.Namespace) -> int:
    from .stopped import LABELS, stopped_run

    return report(
        args,
        *stopped_run(
            config=args.config,
            profiles=args.profiles,
            threads=args.threads,
            labels=args.labels or LABELS,
            limit=args.limit,
            timeout_s=args.timeout_s,
            progress=progress,
        ),
    )
