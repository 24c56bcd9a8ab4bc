"""``mama draft``, ``mama links`` and ``mama stats``: the assist features on the command line.

Nothing heavy is imported until a command runs.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..config import Config
from ..errors import MamaError
from .options import (
    argument,
    command,
    flag,
    json_option,
    keyword_only_option,
    limit_option,
    no_model_option,
    project_option,
)
from .shared import open_store, optional_assistant, print_json, project_of, told


@command("draft", "draft a decision's narrative from a session (saves nothing)")
@argument("decision", help="what was decided, e.g. 'Use PostgreSQL for the job queue'")
@argument("--transcript", help="a Claude Code session transcript (.jsonl) to read")
@argument("--context", help="notes or a conversation excerpt to draft from")
@argument("--topic", help="the topic (default: made from the decision)")
@no_model_option("the deterministic extractor only")
@json_option()
def cmd_draft(args: argparse.Namespace) -> int:
    """Draft a decision's narrative from a transcript and notes; save nothing."""
    from ..assist.draft import draft_narrative
    from ..assist.models import draft_layers
    from ..schema import parse
    from ..schema.assist import DraftRequest
    from ..transcript import Digest, read_transcript

    if args.transcript and not os.path.isfile(args.transcript):
        raise MamaError(
            f"no transcript at {args.transcript!r}: pass a Claude Code session's "
            "JSONL (~/.claude/projects/<project>/<session>.jsonl)"
        )
    request = parse(
        DraftRequest,
        {
            "decision": args.decision,
            "topic": args.topic or "",
            "context": args.context or "",
            "draft": True,
        },
    )
    digest = read_transcript(args.transcript) if args.transcript else Digest()
    layers, skipped = draft_layers(args.config)
    draft = draft_narrative(
        request, digest, assistant=optional_assistant(args), layers=layers, skipped=skipped
    )
    return told(args, draft.as_data(), draft.as_text(args.config.home))


@command("links", "link suggestions: list, find for a memory, accept, reject")
@argument(
    "action",
    nargs="?",
    default="list",
    choices=("list", "suggest", "accept", "reject"),
    help="list (default); suggest MEMORY_ID; accept N; reject N",
)
@argument("target", nargs="?", help="a memory id (suggest) or a suggestion number")
@argument(
    "--relationship",
    help="accept: use this relationship instead; list: links by this word and its synonyms",
)
@argument("--after", metavar="ID", help="list: what followed this memory (implementation, time)")
@argument("--tag", help="list: links carrying this tag")
@argument("--window", type=float, default=7.0, help="--after: within this many days (default 7)")
@argument("--reason", help="accept: use this reason instead")
@project_option()
@flag("--all", "list every verdict, not only pending")
@limit_option(20, "to list")
@no_model_option("suggest: rules only, no model")
@keyword_only_option()
@json_option()
def cmd_links(args: argparse.Namespace) -> int:
    """List, find, accept or reject link suggestions."""
    from ..assist import suggest
    from ..assist.models import link_judge

    with open_store(args) as store:
        if args.action in ("accept", "reject"):
            if args.target is None or not args.target.lstrip("#").isdigit():
                raise MamaError(f"links {args.action} needs a suggestion number (see `mama links`)")
            number = int(args.target.lstrip("#"))
            if args.action == "reject":
                record = suggest.reject(store, number, decided_by="user")
                print(f"Rejected suggestion #{record.id}; it will not be proposed again.")
                return 0
            record, link = suggest.accept(
                store,
                number,
                decided_by="user",
                relationship=args.relationship,
                reason=args.reason,
            )
            print(
                f"Linked {link.from_id} --{link.relationship}--> {link.to_id} "
                f"(link #{link.id}, reason by {link.created_by}): {link.reason}"
            )
            return 0
        if args.action == "list" and (args.relationship or args.after or args.tag):
            from .graph import list_links

            return list_links(store, args)
        project = project_of(args)
        if args.action == "suggest":
            if not args.target:
                raise MamaError("links suggest needs a memory id (see `mama search`)")
            memory = store.memories.require(args.target)
            project = memory.project
            made = suggest.suggest_for(
                store,
                memory.id,
                assistant=link_judge(args.config, optional_assistant(args)),
                embedder=_embedder(args.config),
            )
            print(f"Judged candidates for {memory.id}: {len(made)} new suggestion(s).")
        status = None if args.all else "pending"
        rows = store.suggestions.of_project(project, status=status, limit=args.limit)
        if args.json:
            print_json([r.as_dict() for r in rows])
            return 0
        if not rows:
            print(
                "No pending link suggestions in this project."
                if status
                else "No link suggestions in this project."
            )
            return 0
        found = store.memories.get_many([i for r in rows for i in (r.from_id, r.to_id)])
        for r in rows:
            newer, older = found.get(r.from_id), found.get(r.to_id)
            print(
                f"#{r.id} [{r.status}] {r.from_id} --{r.relationship}--> {r.to_id} "
                f"(judged by {r.judged_by}; {', '.join(r.sources)})"
            )
            if r.reason:
                print(f"    why: {r.reason}")
            print(
                f"    newer: {newer.content if newer else '?'}\n    older: "
                f"{older.content if older else '?'}"
            )
    return 0


@command("stats", "narrative quality, outcomes, link reasons, acceptance rate")
@project_option()
@json_option()
def cmd_stats(args: argparse.Namespace) -> int:
    """Print the project's quality metrics."""
    from ..services.hygiene.stats import project_stats
    from ..services.render import render

    with open_store(args) as store:
        stats = project_stats(store, project_of(args))
    return told(args, stats.as_dict(), render("stats.txt.j2", args.config.home, s=stats).rstrip())


def _embedder(config: Config) -> Any:
    """The embedding model for link candidates, or None (keyword candidates only)."""
    try:
        from ..embeddings import open_embedder

        return open_embedder(config, hold=True)
    except MamaError:
        return None
