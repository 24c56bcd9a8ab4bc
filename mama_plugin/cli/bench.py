"""``mama bench``: run one benchmark from ``bench/`` and print its report."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import MamaError
from .options import argument, command, keyword_only_option


@command("bench", "benchmarks: retrieval quality on LoCoMo, latency at scale")
@argument(
    "kind",
    choices=(
        "retrieval",
        "latency",
        "startup",
        "hooks",
        "draft",
        "exposure",
        "warm",
        "integrity",
        "turns",
        "extraction",
        "presence",
        "kills",
        "fuzz",
        "writers",
        "recall",
        "secrets",
        "answers",
    ),
    help="which benchmark",
)
@argument(
    "--dataset",
    help="retrieval, recall, secrets: path to LoCoMo's locomo10.json (recall: default "
    "shared/bench's)",
)
@argument("--audit", help="retrieval: audit errors (default: locomo_audit_errors.json beside it)")
@argument("--depth", type=int, default=50, help="retrieval: results per question (default 50)")
@argument(
    "--assist-judge",
    type=int,
    default=0,
    metavar="N",
    help="recall: also judge the candidates of N related and N unrelated held-out prompts "
    "with the assist model (default 0: not run; a verdict takes ~1 s)",
)
@argument(
    "--updates",
    help="retrieval: SituatedQA's temp.test.jsonl, for the latest-first rate "
    "(default: situatedqa_temp.test.jsonl beside the dataset, if there)",
)
@argument(
    "--sizes",
    default="1000,10000,100000",
    help="latency, integrity: store sizes (default 1000,10000,100000)",
)
@argument("--queries", type=int, default=200, help="latency: searches per size (default 200)")
@argument(
    "--runs",
    type=int,
    help="runs to time (default: startup, hooks 30; presence 20; draft 3; warm, integrity 5; "
    "turns 200; kills 200 writers and half as many servers; fuzz 10000 calls; writers: saves "
    "per writer, 200)",
)
@argument(
    "--transcripts", help="draft: a folder of Claude Code transcripts (default: the fixtures)"
)
@argument("--size", type=int, default=10_000, help="hooks: memories in the store (default 10000)")
@argument(
    "--wait-for-servers",
    action="store_true",
    help="warm: -p waits for MCP servers (MCP_CONNECTION_NONBLOCKING=false), as a user would",
)
@argument("--plugin-dir", help="warm: the MAMA checkout Claude Code loads (default: this one)")
@argument(
    "--baseline-plugin",
    metavar="DIR",
    help="presence: another MAMA checkout (e.g. main's) run as a third arm in the same rounds",
)
@argument(
    "--fresh-projects",
    action="store_true",
    help="presence: a new project in every run (each session its project's first) instead of "
    "one project the runs follow each other in",
)
@keyword_only_option()
# Not the shared --json flag: here --json names a file the figures are written to.
@argument("--json", metavar="OUT", help="also write every figure to this JSON file")
def cmd_bench(args: argparse.Namespace) -> int:
    """Run one benchmark and print its report (and write its figures with ``--json``)."""
    from ..bench import commands

    embedder = None
    light = ("startup", "draft", "exposure", "warm", "integrity", "turns", "extraction",
             "presence", "kills", "fuzz", "writers", "secrets")  # fmt: skip
    if not args.keyword_only and args.kind not in light:
        from ..embeddings import open_embedder

        # Latency embeds one query at a time, as the MCP server does: with its thread count.
        one = args.kind == "latency" and not args.config.settings.embedding_threads
        embedder = open_embedder(args.config, threads=1 if one else None)

    def progress(line: str) -> None:
        print(f"  … {line}", file=sys.stderr, flush=True)

    if args.kind == "exposure":
        from ..bench.exposure import exposure_run

        text, data = exposure_run(args.config)
    elif args.kind == "turns":
        from ..bench.turns import turns_run

        text, data = turns_run(args.runs or 200, progress=progress)
    elif args.kind == "answers":
        from ..bench.answers import answers_run

        text, data = answers_run(embedder)
    elif args.kind == "extraction":
        from ..bench.extraction import extraction_run

        text, data = extraction_run()
    elif args.kind == "secrets":
        from ..bench.secrets import secrets_run

        dataset = Path(args.dataset) if args.dataset else None
        text, data = secrets_run(dataset, progress=progress)
    elif args.kind == "startup":
        from ..bench.startup import startup_run

        text, data = startup_run(args.runs or 30)
    elif args.kind == "integrity":
        from ..bench.integrity import integrity_run

        sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
        text, data = integrity_run(sizes, runs=args.runs or 5, progress=progress)
    elif args.kind == "fuzz":
        from ..bench.fuzz import fuzz_run

        text, data = fuzz_run(args.runs or 10_000, progress=progress)
    elif args.kind == "kills":
        from ..bench.faults import kills_run

        writers = args.runs or 200
        text, data = kills_run(writers, max(1, writers // 2), progress=progress)
    elif args.kind == "writers":
        from ..bench.writers import writers_run

        text, data = writers_run(args.runs or 200)
    elif args.kind == "presence":
        from ..bench.presence import presence_run

        baseline = Path(args.baseline_plugin).resolve() if args.baseline_plugin else None
        text, data = presence_run(args.runs or 20, baseline=baseline, progress=progress,
                                  fresh_projects=args.fresh_projects)  # fmt: skip
    elif args.kind == "draft":
        from ..bench.draft import draft_run

        folder = Path(args.transcripts) if args.transcripts else None
        text, data = draft_run(args.runs or 3, folder=folder, config=args.config)
    elif args.kind == "warm":
        from ..bench.warm import ROOT, warm_run
        from ..embeddings import resolve_model

        model = resolve_model(args.config).path
        plugin = Path(args.plugin_dir).resolve() if args.plugin_dir else ROOT
        text, data = warm_run(
            args.runs or 5, model, wait=args.wait_for_servers, plugin=plugin, progress=progress
        )
    elif args.kind == "hooks":
        from ..bench.hooks import hooks_run

        text, data = hooks_run(args.size, embedder, runs=args.runs or 30, progress=progress)
    elif args.kind == "recall":
        from ..bench.recall import recall_run

        dataset = Path(args.dataset) if args.dataset else None
        text, data = recall_run(
            args.config, embedder, dataset, assist_judge=args.assist_judge, progress=progress
        )
    elif args.kind == "retrieval":
        if not args.dataset:
            raise MamaError("bench retrieval needs --dataset PATH (LoCoMo-10's locomo10.json)")
        dataset = Path(args.dataset)
        audit = Path(args.audit) if args.audit else dataset.with_name("locomo_audit_errors.json")
        changes = (
            Path(args.updates) if args.updates else dataset.with_name("situatedqa_temp.test.jsonl")
        )
        if args.updates and not changes.is_file():
            raise MamaError(f"--updates: no file at {changes}")
        text, data = commands.retrieval(
            dataset,
            audit if audit.is_file() else None,
            embedder,
            depth=args.depth,
            progress=progress,
            updates=changes if changes.is_file() else None,
        )
    else:
        sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
        text, data = commands.latency_run(sizes, embedder, queries=args.queries, progress=progress)
    print(text, end="")
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}", file=sys.stderr)
    return 0
