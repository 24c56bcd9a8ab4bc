"""``mama demo``, ``serve``, ``hook``, ``models`` and ``reindex``: running MAMA and its models."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .options import (
    argument,
    command,
    flag,
    json_option,
    keyword_only_option,
    no_model_option,
    project_option,
)
from .shared import open_store, optional_assistant, optional_embedder, print_json


@command("demo", "play the JWT → FAILED → sessions story on a temporary store")
@flag("--keep", "keep the temporary store and print its path")
@keyword_only_option()
@no_model_option("no generative model (the extractor drafts)")
def cmd_demo(args: argparse.Namespace) -> int:
    """Play the demo story with the user's models (or without them) and print it."""
    from ..demo import run_demo

    # The user's model caches, not the demo's: a missing model only narrows what the demo shows.
    embedder = optional_embedder(args, without="the demo searches by keywords")
    assistant = optional_assistant(args)
    print(run_demo(keep=args.keep, embedder=embedder, assistant=assistant), end="")
    return 0


@command("serve", "run the MCP server on stdin/stdout (Claude Code starts it)")
@project_option("project directory (default: $CLAUDE_PROJECT_DIR or here)")
@flag("--sdk", "the mcp SDK's server (slower to start; speaks the 2026-07-28 protocol too)")
def cmd_serve(args: argparse.Namespace) -> int:
    """Serve MCP on stdin/stdout until the client closes it."""
    db = Path(args.db) if args.db else None
    if args.sdk:
        from ..server.app import serve as serve_sdk

        serve_sdk(db=db, cwd=args.project)
        return 0
    from ..server.front import serve

    serve(db=db, cwd=args.project)  # exits the process


@command("models", "show the embedding model in use; build it if missing")
@json_option()
def cmd_models(args: argparse.Namespace) -> int:
    """Print the embedding model in use, where it comes from and its size."""
    from ..embeddings.kinds import chosen, kind_of

    say = (lambda _: None) if args.json else (lambda line: print(line, flush=True))
    model = kind_of(chosen(args.config)).provide(args.config, say)
    path = model.path
    files = [p for p in path.iterdir() if p.is_file()] if path.is_dir() else [path]
    info: dict[str, Any] = {
        "embedding_model": model.name,
        "path": str(path),
        "source": model.source,
        "dimensions": model.dim,
        "bytes": sum(f.stat().st_size for f in files),
    }
    if args.json:
        print_json(info)
        return 0
    print(f"embedding model  {model.name} ({model.dim} dimensions), {model.how}")
    print(f"                 {info['path']} ({info['bytes'] / 1e6:.1f} MB)")
    return 0


@command(
    "reindex", "embed memories waiting for a vector (every one after a model change or with --all)"
)
@flag("--all", "re-embed every memory (after a model change)")
def cmd_reindex(args: argparse.Namespace) -> int:
    """Embed the queued memories (or every memory) and print the rate."""
    import time

    from ..embeddings import open_embedder
    from ..services.search.indexing import drain, reindex

    with open_store(args) as store:
        embedder = open_embedder(args.config, hold=True)
        started = time.perf_counter()
        # After a model change only a whole re-embedding helps (the queue's vectors would not
        # fit beside the old ones): the mismatch error tells the user to run this command.
        name, dim = store.vectors.recorded_model()
        everything = args.all or (name is not None and (name, dim) != (embedder.name, embedder.dim))
        count = reindex(store, embedder) if everything else drain(store, embedder)
        seconds = time.perf_counter() - started
    rate = count / seconds if seconds else 0.0
    what = "every memory" if everything else "queued memories"
    print(f"embedded {count} {what} with {embedder.name} in {seconds:.1f} s ({rate:.0f}/s)")
    return 0


@command("hook", "run a Claude Code command hook (event JSON on stdin)")
@argument("event", choices=("session-start",), help="which hook")
def cmd_hook(args: argparse.Namespace) -> int:
    """Run one command hook: event JSON on stdin, the hook's answer on stdout."""
    from ..hooks.runner import run

    return run(args.event, sys.stdin, sys.stdout)
