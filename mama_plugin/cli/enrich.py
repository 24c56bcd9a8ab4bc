"""``mama enrich``: the decisions imported from MAMA v1.0 that lack narrative, and how to add it."""

from __future__ import annotations

import argparse

from ..services.render import clip
from .options import all_projects_option, command, json_option, project_option
from .shared import open_store, print_json, project_or_all


@command(
    "enrich",
    "the decisions imported from MAMA v1.0 without specifics, alternatives or evidence, each "
    "with what it lacks, a draft read from its own text and the update that adds it",
)
@project_option()
@all_projects_option("every project's imported decisions")
@json_option()
def cmd_enrich(args: argparse.Namespace) -> int:
    """List the imported v1.0 decisions lacking narrative, oldest first."""
    from ..assist.enrich import draft
    from ..services.saving.enrichment import unenriched

    project = project_or_all(args)
    with open_store(args) as store:
        found = unenriched(store, project)
    drafts = {e.memory.id: draft(e.memory, e.missing) for e in found}
    if args.json:
        print_json([e.as_dict() | {"draft": drafts[e.memory.id].as_dict()} for e in found])
        return 0
    if not found:
        where = "any project" if project is None else project
        print(f"no decision imported from MAMA v1.0 lacks narrative in {where}")
        return 0
    print(f"{len(found)} decision(s) imported from MAMA v1.0 lack narrative:")
    for e in found:
        m = e.memory
        print(f"\n{m.id} [{m.topic}] {clip(m.content, 120)}")
        print(f"  lacks: {', '.join(e.missing)}")
        for item in drafts[m.id].specifics:
            print(f"  draft specific (from its own text): {clip(item, 160)}")
        for alt in drafts[m.id].alternatives:
            because = f" — {clip(alt['rejected_because'], 120)}" if alt["rejected_because"] else ""
            print(f"  draft alternative (from its own text): {alt['option']}{because}")
        print(f"  add: mama edit {m.id} (or in Claude Code: {e.call})")
    return 0
