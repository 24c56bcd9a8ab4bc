"""``mama confidence`` and ``mama learn``: what outcomes taught the memory, and replaying them."""

from __future__ import annotations

import argparse

from .options import argument, command, json_option
from .shared import open_store, print_json


@command("confidence", "one memory's confidence now and every move outcomes made to it")
@argument("id", help="memory id")
@json_option()
def cmd_confidence(args: argparse.Namespace) -> int:
    """Print a memory's confidence trajectory: when, from, to, why, triggered by which memory."""
    from ..services.learning import trajectory
    from ..services.learning_views import trajectory_text

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
    from ..services.learning import learn_pass
    from ..services.learning_views import arrow, when

    with open_store(args) as store:
        done = learn_pass(store)
    if args.json:
        print_json(done.as_dict())
        return 0
    since = f"since {when(done.since)}" if done.since is not None else "first pass"
    print(
        f"Learn pass ({since}): {done.considered} judged memor"
        f"{'y' if done.considered == 1 else 'ies'} considered, {len(done.applied)} outcome"
        f"{'' if len(done.applied) == 1 else 's'} applied, {len(done.changes)} confidence"
        f"{'' if len(done.changes) == 1 else 's'} recorded."
    )
    for c in done.changes:
        print(f"  {c.memory_id}  {arrow(c)}  {c.why}")
    return 0
