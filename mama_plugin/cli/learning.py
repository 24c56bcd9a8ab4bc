"""What memory learned: ``mama confidence`` (a trajectory), ``mama learn`` (replaying
outcomes), ``mama decay`` (what is stale for its kind), ``mama hubs`` (what many rest on),
``mama learned`` (what a project's outcomes taught), ``mama context`` (the project at a
glance), ``mama premises`` (the facts decisions rest on), ``mama evolve`` (the dated notes
memories lack)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..errors import MamaError
from .options import (
    all_projects_option,
    argument,
    command,
    flag,
    json_option,
    limit_option,
    project_option,
)
from .shared import open_store, print_json, project_of, project_or_all, told


def _caught_up(
    args: argparse.Namespace, run: Callable[[Any], Any], report: Callable[[Any, Any], str]
) -> int:
    """Run a catch-up pass (``learn``, ``evolve``) on the store; tell its ``report``, or under
    ``--json`` what it did."""
    with open_store(args) as store:
        done = run(store)
        text = report(store, done)
    return told(args, done.as_dict(), text)


@command("confidence", "one memory's confidence now and every move outcomes made to it")
@argument("id", help="memory id")
@json_option()
def cmd_confidence(args: argparse.Namespace) -> int:
    """Print a memory's confidence trajectory: when, from, to, why, triggered by which memory."""
    from ..services.learning.confidence import trajectory
    from ..services.learning.views import trajectory_text

    with open_store(args) as store:
        memory, changes = trajectory(store, args.id)
    if args.json:
        print_json(
            {
                "id": memory.id,
                "confidence": memory.confidence,
                "outcome": memory.outcome_status,
                "history": [c.as_dict() for c in changes],
            }
        )
        return 0
    print(trajectory_text(memory, changes))
    return 0


@command(
    "learn",
    "apply to confidences every outcome recorded since the last pass that has not moved them "
    "yet (imported, or recorded by an older MAMA); safe to run again",
)
@json_option()
def cmd_learn(args: argparse.Namespace) -> int:
    """Replay the outcomes recorded since the last pass, once each; print what moved."""
    from ..services.learning.confidence import learn_pass
    from ..services.learning.reports import learn_text

    return _caught_up(args, learn_pass, lambda _store, done: learn_text(done))


@command(
    "decay",
    "the project's memories that are stale or expired for their kind (performance 7 days, "
    "code behaviour 14, requirements 30, team knowledge 60, API docs and security 90, "
    "architecture and external facts 180), the stalest first",
)
@project_option()
@flag("--aging", "list the aging ones too")
@limit_option(50, "memories")
@json_option()
def cmd_decay(args: argparse.Namespace) -> int:
    """Print the project's stale and expired memories with their figures and what to do."""
    from ..services.learning.reports import decay_text
    from ..services.learning.staleness import decaying

    project = project_of(args)
    with open_store(args) as store:
        found = decaying(store, project, include_aging=args.aging)[: max(args.limit, 0)]
    if args.json:
        print_json([s.as_dict() | {"content": s.memory.content} for s in found])
        return 0
    if not found:
        print(f"nothing stale in {project}" + ("" if args.aging else " (--aging lists more)"))
        return 0
    print(decay_text(found, project, aging=args.aging))
    print(
        "A memory that still holds: `mama verify ID` (its cited files) or record an outcome "
        "(evolve_outcome, VERIFIED when nothing changed); one that is wrong now: `mama forget ID`."
    )
    return 0


@command(
    "hubs",
    "the project's memories referenced by 5 or more others, with what references them, "
    "their confidence, last use and staleness (a hub aging or worse is flagged for review)",
)
@project_option()
@argument("--min", type=int, default=5, help="references that make a hub (default 5)")
@json_option()
def cmd_hubs(args: argparse.Namespace) -> int:
    """Print the project's hubs, the most referenced first."""
    from ..services.learning.hubs import hubs
    from ..services.learning.reports import hubs_text

    if args.min < 1:
        raise MamaError("--min must be 1 or more")
    project = project_of(args)
    with open_store(args) as store:
        found = hubs(store, project, minimum=args.min)
    return told(args, [h.as_dict() for h in found], hubs_text(found, project, args.min))


@command(
    "learned",
    "what the project learned from its outcomes: verdicts and success rate, would-repeat "
    "answers, lessons and next-time notes (newest first), confidence moves, the last learn pass",
)
@project_option()
@all_projects_option("every project's outcomes")
@limit_option(10, "lessons")
@json_option()
def cmd_learned(args: argparse.Namespace) -> int:
    """Print what the project's outcomes taught."""
    from ..services.learning.reports import learned_text
    from ..services.learning.teaching import learned

    project = project_or_all(args)
    with open_store(args) as store:
        found = learned(store, project)
    return told(args, found.as_dict(), learned_text(found, project or "every project", args.limit))


@command(
    "context",
    "the project at a glance: its description, key decisions, hubs, stale memories, tags and "
    "what its outcomes taught; --describe TEXT saves its description",
)
@project_option()
@argument("--describe", metavar="TEXT", help="save TEXT as the project's description first")
@json_option()
def cmd_context(args: argparse.Namespace) -> int:
    """Print the project's context (after saving its description, when given)."""
    from ..services.saving.project_context import context_text, describe, project_context

    project = project_of(args)
    if args.describe is not None and not args.describe.strip():
        raise MamaError("--describe needs the text of the description")
    with open_store(args) as store:
        if args.describe:
            saved = describe(store, project, args.describe.strip()).memory
            if not args.json:
                print(f"Saved the project's description as {saved.id}.")
        ctx = project_context(store, project)
    return told(args, ctx.as_dict(), context_text(ctx))


@command(
    "premises",
    "the project's premises (insights tagged `premise`, with a `domain:NAME` tag) freshest "
    "first: confidence, uses (decisions resting on them), those decisions' success rate and "
    "freshness",
)
@argument("domain", nargs="?", help="only this domain")
@project_option()
@json_option()
def cmd_premises(args: argparse.Namespace) -> int:
    """Print the project's premises with their figures."""
    from ..services.learning.premises import premises

    project = project_of(args)
    with open_store(args) as store:
        found = premises(store, project, args.domain)
    if args.json:
        print_json([p.as_dict() for p in found])
        return 0
    if not found:
        where = f" of domain '{args.domain}'" if args.domain else ""
        print(
            f"no premise{where} in {project}: save one with save_insight, tags "
            "['premise', 'domain:NAME'], and link decisions to it with depends_on"
        )
        return 0
    for p in found:
        print(p.said())
    return 0


@command(
    "evolve",
    "give the memories changed or linked since the last pass the dated notes they lack (a "
    "later memory builds on this; what this builds on FAILED), e.g. after an import or a "
    "teammate's sync; safe to run again",
)
@json_option()
def cmd_evolve(args: argparse.Namespace) -> int:
    """Run an evolve pass; print each note it wrote."""
    from ..services.learning.living import evolve_pass
    from ..services.learning.reports import evolve_text

    return _caught_up(args, evolve_pass, evolve_text)
