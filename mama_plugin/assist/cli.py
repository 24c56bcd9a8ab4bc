"""``mama draft``, ``mama links`` and ``mama stats``: the assist features on the command line.

Kept out of cli.py; nothing heavy is imported until a command runs.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import Any

from ..cli import print_json, project_of
from ..config import Config
from ..errors import MamaError

Command = Callable[[str, Callable[[argparse.Namespace], int], str], argparse.ArgumentParser]


def cmd_draft(args: argparse.Namespace) -> int:
    """Draft a decision's narrative from a transcript and notes; save nothing."""
    from ..schema import parse
    from ..schema.assist import DraftRequest
    from ..services.render import render
    from ..transcript import Digest, read_transcript
    from .draft import draft_narrative
    from .runtime import Assistant

    if args.transcript and not os.path.isfile(args.transcript):
        raise MamaError(f"no transcript at {args.transcript!r}: pass a Claude Code session's "
                        "JSONL (~/.claude/projects/<project>/<session>.jsonl)")  # fmt: skip
    request = parse(DraftRequest, {"decision": args.decision, "topic": args.topic or "",
                                   "context": args.context or "", "draft": True})  # fmt: skip
    digest = read_transcript(args.transcript) if args.transcript else Digest()
    assistant = None if args.no_model else Assistant(Config(strict=False))
    draft = draft_narrative(request, digest, assistant=assistant)
    if args.json:
        print_json(draft.as_data())
        return 0
    print(render("draft.md.j2", p=draft.proposal, sources=draft.sources, model=draft.model,
                 dropped=draft.dropped,
                 proposal_json=json.dumps(draft.proposal, ensure_ascii=False)).strip())  # fmt: skip
    return 0


def cmd_links(args: argparse.Namespace) -> int:
    """List, find, accept or reject link suggestions."""
    from ..storage import Store
    from . import suggest

    with Store.open(args.db) as store:
        if args.action in ("accept", "reject"):
            if args.target is None or not args.target.lstrip("#").isdigit():
                raise MamaError(f"links {args.action} needs a suggestion number (see `mama links`)")
            number = int(args.target.lstrip("#"))
            if args.action == "reject":
                record = suggest.reject(store, number, decided_by="user")
                print(f"Rejected suggestion #{record.id}; it will not be proposed again.")
                return 0
            record, link = suggest.accept(
                store, number, decided_by="user", relationship=args.relationship,
                reason=args.reason,
            )  # fmt: skip
            print(f"Linked {link.from_id} --{link.relationship}--> {link.to_id} "
                  f"(link #{link.id}, reason by {link.created_by}): {link.reason}")  # fmt: skip
            return 0
        project = project_of(args)
        if args.action == "suggest":
            if not args.target:
                raise MamaError("links suggest needs a memory id (see `mama search`)")
            memory = store.require(args.target)
            project = memory.project
            made = suggest.suggest_for(store, memory.id, assistant=_assistant(args),
                                       embedder=_embedder(args))  # fmt: skip
            print(f"Judged candidates for {memory.id}: {len(made)} new suggestion(s).")
        status = None if args.all else "pending"
        rows = store.suggestions(project, status=status, limit=args.limit)
        if args.json:
            print_json([r.as_dict() for r in rows])
            return 0
        if not rows:
            print("No pending link suggestions in this project." if status else
                  "No link suggestions in this project.")  # fmt: skip
            return 0
        found = store.get_many([i for r in rows for i in (r.from_id, r.to_id)])
        for r in rows:
            newer, older = found.get(r.from_id), found.get(r.to_id)
            print(f"#{r.id} [{r.status}] {r.from_id} --{r.relationship}--> {r.to_id} "
                  f"(judged by {r.judged_by}; {', '.join(r.sources)})")  # fmt: skip
            if r.reason:
                print(f"    why: {r.reason}")
            print(f"    newer: {newer.content if newer else '?'}\n    older: "
                  f"{older.content if older else '?'}")  # fmt: skip
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    """Print the project's quality metrics."""
    from ..services.render import render
    from ..services.stats import project_stats
    from ..storage import Store

    with Store.open(args.db) as store:
        stats = project_stats(store, project_of(args))
    if args.json:
        print_json(stats.as_dict())
    else:
        print(render("stats.txt.j2", s=stats).rstrip())
    return 0


def _assistant(args: argparse.Namespace) -> Any:
    if args.no_model:
        return None
    from .runtime import Assistant

    return Assistant(Config(strict=False))


def _embedder(args: argparse.Namespace) -> Any:
    try:
        from ..embeddings import open_embedder

        return open_embedder(Config(strict=False))
    except MamaError:
        return None  # keyword candidates only


def add_assist_commands(command: Command) -> None:
    """Declare ``mama draft``, ``mama links`` and ``mama stats`` through cli.py's helper."""
    p = command("draft", cmd_draft, "draft a decision's narrative from a session (saves nothing)")
    p.add_argument("decision", help="what was decided, e.g. 'Use PostgreSQL for the job queue'")
    p.add_argument("--transcript", help="a Claude Code session transcript (.jsonl) to read")
    p.add_argument("--context", help="notes or a conversation excerpt to draft from")
    p.add_argument("--topic", help="the topic (default: made from the decision)")
    p.add_argument("--no-model", action="store_true", help="the deterministic extractor only")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = command("links", cmd_links, "link suggestions: list, find for a memory, accept, reject")
    p.add_argument("action", nargs="?", default="list",
                   choices=("list", "suggest", "accept", "reject"),
                   help="list (default); suggest MEMORY_ID; accept N; reject N")  # fmt: skip
    p.add_argument("target", nargs="?", help="a memory id (suggest) or a suggestion number")
    p.add_argument("--relationship", help="accept: use this relationship instead")
    p.add_argument("--reason", help="accept: use this reason instead")
    p.add_argument("--project", help="the project's directory (default: here)")
    p.add_argument("--all", action="store_true", help="list every verdict, not only pending")
    p.add_argument("--limit", type=int, default=20, help="how many to list (default 20)")
    p.add_argument("--no-model", action="store_true", help="suggest: rules only, no model")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = command("stats", cmd_stats, "narrative quality, outcomes, link reasons, acceptance rate")
    p.add_argument("--project", help="the project's directory (default: here)")
    p.add_argument("--json", action="store_true", help="print JSON")
