"""What several commands need: the store, the project, JSON output, the optional models."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ..project import project_key


def open_store(args: argparse.Namespace) -> Any:
    """The store at ``--db`` (or the configured one), migrated; use it as a context manager.

    A store damaged only where reads do without opens all the same: a warning line on stderr
    names the damage and the repair, and the command reads as usual (its writes are refused).
    """
    from ..storage import Store

    store = Store.open(args.db, config=args.config)
    if (damage := store.damage) is not None:  # damaged where reads do without: say so first
        print(f"mama: warning: {damage}", file=sys.stderr)
    return store


def project_of(args: argparse.Namespace) -> str:
    """The project a command works on: ``--project DIR``, else the current directory's."""
    return project_key(args.project or os.getcwd())


def project_or_all(args: argparse.Namespace) -> str | None:
    """The project a command works on, or None (every project) under ``--all-projects``."""
    return None if args.all_projects else project_of(args)


def print_json(value: Any) -> None:
    """Print ``value`` as indented JSON (non-JSON values as their ``str``)."""
    print(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def told(args: argparse.Namespace, data: Any, text: str) -> int:
    """Print ``data`` as JSON under ``--json``, else ``text``; the command's status, 0."""
    if args.json:
        print_json(data)
    else:
        print(text)
    return 0


def optional_embedder(args: argparse.Namespace, *, without: str) -> Any:
    """The embedding model unless ``--keyword-only`` or it cannot load (then None).

    A model that cannot load is reported on stderr as ``mama: no embedding model (…); <without>``.
    """
    if getattr(args, "keyword_only", False):
        return None
    from ..embeddings import EmbeddingError, open_embedder

    try:  # the user's model cache (built once from the bundled package)
        return open_embedder(args.config, hold=True)  # a command's process: it exits
    except EmbeddingError as exc:
        print(f"mama: no embedding model ({exc}); {without}", file=sys.stderr)
        return None


def optional_assistant(args: argparse.Namespace) -> Any:
    """The local generative model unless ``--no-model``.

    A missing model is not an error: the assistant then leaves drafting to the extractor.
    """
    if args.no_model:
        return None
    from ..assist.runtime import Assistant

    return Assistant(args.config)
