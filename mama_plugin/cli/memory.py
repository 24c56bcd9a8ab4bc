"""``mama status``, ``mama show`` and ``mama search``: reading the memory; ``mama verify``:
checking one against the code, or listing every one flagged (``--list``)."""

from __future__ import annotations

import argparse
import os

from ..errors import MamaError
from ..project import project_key
from .options import (
    all_projects_option,
    argument,
    command,
    flag,
    json_option,
    keyword_only_option,
    limit_option,
    project_option,
)
from .shared import open_store, optional_embedder, print_json, project_of, project_or_all


@command(
    "status",
    "database path and size, what `mama gc` would free, schema version, counts by type and project",
)
@json_option()
def cmd_status(args: argparse.Namespace) -> int:
    """Print where the store is, its schema version and what it holds."""
    from ..services.hygiene.gc import plan
    from ..services.hygiene.status import store_status
    from .gc import mb

    with open_store(args) as store:
        info = store_status(store, project=project_key(os.getcwd()))
        info["gc"] = plan(store, args.config.settings).as_dict()
    if args.json:
        print_json(info)
        return 0
    g = info["gc"]
    print(f"database        {info['database']}")
    print(
        f"size            {mb(g['database']['file_bytes'])} (+ {mb(g['database']['wal_bytes'])} "
        f"log), backups {mb(g['backups_bytes'])}; `mama gc` frees about {mb(g['frees_bytes'])}"
        + (" (`mama gc --dry-run` lists it)" if g["frees_bytes"] else "")
    )
    print(f"schema version  {info['schema_version']} (latest {info['schema_latest']})")
    print(f"this project    {info['project']}")
    print(f"memories        {info['memories']}  links {info['links']}")
    e = info["embedding"]
    print(
        f"embeddings      {e['vectors']} vectors ({e['model'] or 'no model yet'}, "
        f"{e['dimensions']} dims), {e['waiting']} waiting (run `mama reindex`)"
    )
    for kind, n in info["by_type"].items():
        print(f"  {kind:<13} {n}")
    for status, n in info["by_status"].items():
        print(f"  {status:<13} {n}")
    if info["by_project"]:
        print("by project")
        for project, n in info["by_project"].items():
            print(f"  {n:>6}  {project}")
    return 0


@command("show", "one memory with its narrative layers and links")
@argument("id", help="memory id")
@json_option()
def cmd_show(args: argparse.Namespace) -> int:
    """Print one memory, its links and, if superseded, what replaced it."""
    from ..services.evolution import current_of
    from ..services.graph.upkeep import shown
    from ..services.learning.living import count_told, told
    from ..services.render import render

    with open_store(args) as store:
        memory = store.memories.require(args.id)
        links = store.links.of(memory.id)
        successor = current_of(store, memory.id) if memory.status == "superseded" else None
        history = store.confidence.of(memory.id)
        if args.json:
            print_json(
                {
                    "memory": memory.as_dict(),
                    "links": [shown(ln).as_dict() for ln in links],
                    "current": successor.id if successor else memory.id,
                    "confidence_history": [c.as_dict() for c in history],
                    "notes": told(store, [memory.id], latest=None).get(memory.id, []),
                }
            )
            return 0
        notes = told(store, [memory.id]).get(memory.id, [])
        print(
            render(
                "memory.md.j2",
                store.home,
                m=memory,
                links=links,
                strengths={ln.id: shown(ln).strength for ln in links},
                successor=successor,
                history=history,
                notes=notes,
                noted=count_told(store, memory.id),
            ),
            end="",
        )
    return 0


@command("search", "search this project's memories (hybrid, with the story)")
@argument("text", help="words to look for")
@project_option("a directory of the project to search (default: here)")
@all_projects_option("search every project")
@argument(
    "--tag", action="append", default=[], help="only memories with this tag (repeat for several)"
)
@argument("--as-of", help="search as of this date (ISO 8601, e.g. 2025-03-01); default now")
@limit_option(10, "results")
@keyword_only_option()
@json_option()
def cmd_search(args: argparse.Namespace) -> int:
    """Print the best matches with their outcome and the story around them."""
    from ..schema.queries import instant_ms
    from ..services.search.options import options_for
    from ..services.story.answers import search_by_context

    try:
        as_of = instant_ms(args.as_of) if args.as_of else None
    except ValueError as exc:
        raise MamaError(str(exc)) from None
    embedder = optional_embedder(args, without="searching by keywords")
    project = project_or_all(args)
    with open_store(args) as store:
        result = search_by_context(
            store,
            args.text,
            embedder=embedder,
            project=project,
            k=args.limit,
            record_usage=False,
            tags=args.tag,
            as_of=as_of,
            budget=None,  # a person asked for --limit results: no answer budget
            options=options_for(args.config.settings.ranking),
        )
    if args.json:
        print_json(result.as_dict())
        return 0
    if not result.primary_results:
        print("no matching memories" + (" in this project (try --all-projects)" if project else ""))
        return 0
    for rank, item in enumerate(result.primary_results, start=1):
        label = item.mark + (f", updated → {item.updated_by}" if item.updated_by else "")
        topic = f", {item.topic}" if item.topic else ""
        print(f"{rank:>2}. [{label}] {item.id} ({item.type}{topic})")
        print(f"    {item.content}")
        if item.outcome["status"] != "PENDING":
            details = item.outcome.get("details")
            print(f"    outcome: {item.outcome['status']}" + (f" — {details}" if details else ""))
        if item.stale:
            print(f"    {item.stale}")
        if item.hub:
            print(f"    hub: referenced by {item.hub} memories")
        if item.enrich:
            print(f"    imported from MAMA v1.0 without {', '.join(item.enrich)}: mama enrich")
    print()
    print(result.narrative_summary)
    return 0


@command(
    "verify",
    "record that a memory still holds against the files it cites, as they are now; --list: "
    "every memory of the project flagged as changed since it was decided",
)
@argument("id", nargs="?", help="memory id (not with --list)")
@flag("--list", "list the project's memories whose cited files changed since they were recorded")
@project_option("the project whose memories --list checks (default: here)")
@limit_option(50, "flagged memories --list tells (git is asked about these alone)")
@json_option()
def cmd_verify(args: argparse.Namespace) -> int:
    """Record the files a memory cites as they are now; say what had changed since. With
    ``--list``: the project's memories whose files changed, with the commands to act."""
    from ..services.learning.verify import reverify

    if args.list == bool(args.id):
        raise MamaError("give a memory id to verify, or --list to see what is flagged")
    if args.list:
        return _list_flagged(args)
    with open_store(args) as store:
        memory, before, states = reverify(store, args.id)
    if args.json:
        print_json(
            {
                "id": memory.id,
                "changed": [c.said for c in before],
                "files": [s.path for s in states],
            }
        )
        return 0
    if not states:
        print(f"{memory.id} cites no file of its project ({memory.project}): nothing to verify")
        return 0
    files = ", ".join(s.path for s in states)
    print(f"Verified {memory.id} against {files}: recorded as they are now.")
    for change in before:
        print(f"  was: {change.said}")
    return 0


def _list_flagged(args: argparse.Namespace) -> int:
    """``mama verify --list``: what the session start and search answers flag, all at once."""
    from ..services.story.checked import flagged

    project = project_of(args)
    with open_store(args) as store:
        found = flagged(store, project, limit=max(args.limit, 0))
    if args.json:
        print_json(found.as_dict())
        return 0
    if not found.told:
        print(
            f"nothing flagged: the files {found.checked} memories of {project} cite are as recorded"
        )
        return 0
    print(f"{len(found.told) + found.more} memories of {project} cite files changed since:")
    for m, changes in found.told:
        topic = f", {m.topic}" if m.topic else ""
        print(f"  {m.id} ({m.type}{topic}): {m.content[:100]}")
        for change in changes:
            print(f"      {change.said}")
    if found.more:
        print(f"  ({found.more} more: --limit {len(found.told) + found.more} lists them)")
    print(
        "Still holds: `mama verify ID`. Wrong now: record an outcome, `mama edit ID` or "
        "`mama forget ID`."
    )
    return 0
