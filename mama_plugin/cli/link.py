"""``mama link``: one link with its strength now, down-voted or deleted by a person.

A link's strength is its stored confidence faded by the days since it was last used
(``services/graph/decay.py``); a down-vote halves the stored confidence, a delete removes the
link for good. ``mama graph prune`` / ``archived`` / ``restore`` handle the weak ones.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import MamaError
from .options import argument, command, json_option
from .shared import open_store, print_json, project_of, told


@command("link", "one link with its strength now; down-vote or delete it")
@argument(
    "action",
    choices=("show", "down", "delete"),
    help="show ID; down ID (halve its confidence); delete ID (remove it for good)",
)
@argument("link_id", metavar="ID", help="the link's number (#12 or 12), as links are listed")
@json_option()
def cmd_link(args: argparse.Namespace) -> int:
    """Show, down-vote or delete one link."""
    from ..services.graph.upkeep import judge_link, shown
    from ..storage.link_state import LinkState

    text = str(args.link_id).lstrip("#")
    if not text.isdigit():
        raise MamaError(f"a link id is a number, e.g. 12 or #12 (got {args.link_id!r})")
    link_id = int(text)
    with open_store(args) as store:
        if args.action == "show":
            link = shown(LinkState(store).get(link_id))
            return told(args, link.as_dict(), link.line())
        judged = judge_link(store, link_id, "down" if args.action == "down" else "delete")
    return told(args, judged.as_dict(), judged.summary())


def link_upkeep(store: Any, args: argparse.Namespace) -> int:
    """``mama graph prune|tidy [--dry-run]``, ``archived`` and ``restore ID``."""
    from ..services.graph import upkeep

    if args.action == "archived":
        found = upkeep.archived(store, project_of(args))
        if args.json:
            print_json([a.as_dict() for a in found])
            return 0
        if not found:
            print("No archived links in this project.")
        for a in found:
            ln = a.link
            print(
                f"#{ln.id} {ln.from_id} --{ln.relationship}--> {ln.to_id} "
                f"(confidence {ln.confidence:.2f}), archived {_day(a.archived_at)}: {a.why}"
            )
        return 0
    if args.action == "restore":
        if len(args.words) != 1 or not args.words[0].lstrip("#").isdigit():
            raise MamaError(
                "graph restore needs one archived link's number (`mama graph archived` lists them)"
            )
        link, restored = upkeep.restore(store, int(args.words[0].lstrip("#")))
        if args.json:
            print_json({"restored": restored, "link": link.as_dict()})
        elif restored:
            print(f"Restored {link.line()}")
        else:
            print(f"That link had been made again; it stays: {link.line()}")
        return 0
    result = upkeep.prune(store, dry_run=args.dry_run)
    if args.json:
        print_json(result.as_dict())
        return 0
    for line in result.lines():
        print(line)
    return 0


def _day(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d")
