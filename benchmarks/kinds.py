"""Every benchmark as a subcommand of ``python -m benchmarks``, each with only its own options.

A handler parses nothing itself: it calls its benchmark's ``*_run`` (imported when the kind
runs, so ``--help`` stays fast and a kind needs only its own dependencies) and hands the text
and figures to :func:`.options.report`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mama_plugin.cli.options import Command, argument, command
from mama_plugin.errors import MamaError

from .kinds_graph import decay, graph
from .kinds_model import contention, draft, links, memory, stopped
from .kinds_recall import adr, recall, recall_bars
from .kinds_relevance import relevance
from .kinds_story import bodies, items, story
from .options import (
    count,
    dataset_option,
    embedder,
    figures_option,
    keyword_only_option,
    progress,
    report,
    runs_option,
    sizes_option,
)
from .team import team


@command("retrieval", "LoCoMo-10 through the product's save and search paths: R@k, MRR, nDCG")
@dataset_option("LoCoMo's locomo10.json", required=True)
@argument(
    "--audit",
    type=Path,
    metavar="PATH",
    help="audit errors (default: locomo_audit_errors.json beside the dataset, if there)",
)
@argument("--depth", type=int, default=50, metavar="N", help="results per question (default 50)")
@argument(
    "--updates",
    type=Path,
    metavar="PATH",
    help="SituatedQA's temp.test.jsonl, for the latest-first rate "
    "(default: situatedqa_temp.test.jsonl beside the dataset, if there)",
)
@keyword_only_option()
@figures_option()
def retrieval(args: argparse.Namespace) -> int:
    from .commands import retrieval as retrieval_run

    model = embedder(args)
    dataset: Path = args.dataset
    audit = args.audit or dataset.with_name("locomo_audit_errors.json")
    changes = args.updates or dataset.with_name("situatedqa_temp.test.jsonl")
    if args.updates and not changes.is_file():
        raise MamaError(f"--updates: no file at {changes}")
    return report(
        args,
        *retrieval_run(
            dataset,
            audit if audit.is_file() else None,
            model,
            depth=args.depth,
            progress=progress,
            updates=changes if changes.is_file() else None,
        ),
    )


@command("latency", "search beside its floor, traversal and save on synthetic stores")
@sizes_option()
@argument("--queries", type=int, default=200, metavar="N", help="searches per size (default 200)")
@keyword_only_option()
@figures_option()
def latency(args: argparse.Namespace) -> int:
    from .commands import latency_run

    # Latency embeds one query at a time, as the MCP server does: with its thread count.
    model = embedder(args, one_thread=True)
    return report(args, *latency_run(args.sizes, model, queries=args.queries, progress=progress))


@command(
    "startup",
    "process start to initialize and tools/list answered, per server and a fresh install's bridge",
)
@runs_option(30, "cold starts of each server")
@figures_option()
def startup(args: argparse.Namespace) -> int:
    from .startup import startup_run

    return report(args, *startup_run(args.runs))


@command("hooks", "hook latency on a large synthetic store and the tokens the hooks inject")
@argument(
    "--size", type=int, default=10_000, metavar="N", help="memories in the store (default 10000)"
)
@runs_option(30, "runs of each hook")
@keyword_only_option()
@figures_option()
def hooks(args: argparse.Namespace) -> int:
    from .hooks import hooks_run

    model = embedder(args)
    return report(args, *hooks_run(args.size, model, runs=args.runs, progress=progress))


@command("exposure", "scripted sessions: is every tool a turn needs on its first request?")
@figures_option()
def exposure(args: argparse.Namespace) -> int:
    from .exposure import exposure_run

    return report(args, *exposure_run(args.config))


@command("warm", "real claude -p sessions: is the index warm when the next session needs it?")
@runs_option(5, "pairs of sessions")
@argument(
    "--wait-for-servers",
    action="store_true",
    help="-p waits for MCP servers (MCP_CONNECTION_NONBLOCKING=false), as a user would",
)
@argument(
    "--plugin-dir",
    type=Path,
    metavar="DIR",
    help="the MAMA checkout Claude Code loads (default: this one)",
)
@figures_option()
def warm(args: argparse.Namespace) -> int:
    from mama_plugin.embeddings import resolve_model

    from .checkout import ROOT
    from .warm import warm_run

    model = resolve_model(args.config).path
    plugin = args.plugin_dir.resolve() if args.plugin_dir else ROOT
    text, data = warm_run(
        args.runs, model, wait=args.wait_for_servers, plugin=plugin, progress=progress
    )
    return report(args, text, data)


@command("integrity", "what checking a store's integrity costs at each size")
@sizes_option()
@runs_option(5, "checks timed at each size")
@figures_option()
def integrity(args: argparse.Namespace) -> int:
    from .integrity import integrity_run

    return report(args, *integrity_run(args.sizes, runs=args.runs, progress=progress))


@command("growth", "simulated sessions through the Stop hook, then gc: DB size, session start")
@argument("--sessions", type=count, default=2000, metavar="N", help="sessions (default 2000)")
@argument("--turns", type=count, default=20, metavar="N", help="turns a session (default 20)")
@argument("--days", type=count, default=200, metavar="N", help="days they span (default 200)")
@runs_option(7, "session starts timed at each point")
@figures_option()
def growth(args: argparse.Namespace) -> int:
    from .growth import growth_run

    return report(
        args,
        *growth_run(args.sessions, args.turns, days=args.days, runs=args.runs, progress=progress),
    )


@command("turns", "real Claude Code: does the Stop checkpoint see the end of its turn?")
@runs_option(200, "turns in each arm")
@figures_option()
def turns(args: argparse.Namespace) -> int:
    from .turns import turns_run

    return report(args, *turns_run(args.runs, progress=progress))


@command("extraction", "the rolling checkpoint's unresolved items and next step, on labelled turns")
@figures_option()
def extraction(args: argparse.Namespace) -> int:
    from .extraction import extraction_run

    return report(args, *extraction_run())


@command("presence", "real claude -p with and without the plugin: is MAMA there, what it costs")
@runs_option(20, "rounds")
@argument(
    "--baseline-plugin",
    type=Path,
    metavar="DIR",
    help="another MAMA checkout (e.g. main's) run as a third arm in the same rounds",
)
@argument(
    "--fresh-projects",
    action="store_true",
    help="a new project in every run (each session its project's first) instead of one "
    "project the runs follow each other in",
)
@argument(
    "--prompt",
    metavar="TEXT",
    help="the prompt of every run instead of the question about the seeded insight (e.g. "
    "hello: a prompt that recalls nothing)",
)
@argument(
    "--floor",
    action="store_true",
    help="also a plugin of MAMA's shape that does nothing (its hooks and server answer at once): "
    "the share of the added time any such plugin costs",
)
@figures_option()
def presence(args: argparse.Namespace) -> int:
    from .presence import PROMPT, presence_run

    baseline = args.baseline_plugin.resolve() if args.baseline_plugin else None
    text, data = presence_run(
        args.runs,
        baseline=baseline,
        progress=progress,
        fresh_projects=args.fresh_projects,
        prompt=args.prompt or PROMPT,
        floor=args.floor,
    )
    return report(args, text, data)


@command("kills", "SIGKILLed writers and servers: is anything acknowledged lost?")
@runs_option(200, "killed writers, and half as many servers")
@figures_option()
def kills(args: argparse.Namespace) -> int:
    from .faults import kills_run

    writers = args.runs
    return report(args, *kills_run(writers, max(1, writers // 2), progress=progress))


@command("fuzz", "random tool calls and garbage lines over one stdio session")
@runs_option(10_000, "tool calls")
@figures_option()
def fuzz(args: argparse.Namespace) -> int:
    from .fuzz import fuzz_run

    return report(args, *fuzz_run(args.runs, progress=progress))


@command("writers", "save latency under 8 concurrent writers against one alone")
@runs_option(200, "saves per writer")
@figures_option()
def writers(args: argparse.Namespace) -> int:
    from .writers import writers_run

    return report(args, *writers_run(args.runs))


@command(
    "duplicates",
    "near-duplicates at save on public data (Stack Overflow duplicates, KLUE-STS): each bar",
)
@argument("--quick", action="store_true", help="the configured model only")
@figures_option()
def duplicates(args: argparse.Namespace) -> int:
    from .duplicates import duplicates_run

    model = embedder(args)
    return report(args, *duplicates_run(args.config, model, quick=args.quick, progress=progress))


@command("secrets", "the secrets corpus through every write path; false positives on prose")
@dataset_option("LoCoMo's locomo10.json, ordinary text for the false positives")
@figures_option()
def secrets(args: argparse.Namespace) -> int:
    from .secrets import secrets_run

    return report(args, *secrets_run(args.dataset, progress=progress))


@command("answers", "the default search answer, session by session, beside the frozen baseline")
@keyword_only_option()
@figures_option()
def answers(args: argparse.Namespace) -> int:
    from .answers import answers_run

    return report(args, *answers_run(embedder(args)))


@command(
    "truth",
    "carries work, passed/failed/unknown and done on labelled real turns, beside the rules before",
)
@argument(
    "--session",
    action="append",
    metavar="NAME",
    help="only this labelled session (repeatable; default: every one)",
)
@argument("--verbose", action="store_true", help="also list every disagreement with the labels")
@figures_option()
def truth(args: argparse.Namespace) -> int:
    from .truth import truth_run

    return report(args, *truth_run(args.session, verbose=args.verbose, progress=progress))


# In the order ``python -m benchmarks --help`` lists them.
@command("share", "mama share both ways: files written, nothing-to-do runs, a teammate's import")
@sizes_option("100,1000")
@runs_option(5, "repeated runs timed at each size")
@figures_option()
def share(args: argparse.Namespace) -> int:
    from .share import share_run

    return report(args, *share_run(args.sizes, runs=args.runs, progress=progress))


@command("view", "mama view's page in headless Chromium: load time for 1k and 10k memories")
@sizes_option("1000,10000")
@figures_option()
def view(args: argparse.Namespace) -> int:
    from .view import view_run

    return report(args, *view_run(args.sizes))


KINDS: tuple[Command, ...] = (
    retrieval,
    latency,
    startup,
    hooks,
    draft,
    contention,
    memory,
    exposure,
    warm,
    integrity,
    growth,
    turns,
    extraction,
    truth,
    presence,
    kills,
    fuzz,
    writers,
    recall,
    adr,
    recall_bars,
    duplicates,
    secrets,
    answers,
    share,
    view,
    team,
    graph,
    links,
    decay,
    stopped,
    relevance,
    story,
    items,
    bodies,
)
