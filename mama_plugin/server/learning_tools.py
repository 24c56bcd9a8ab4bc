"""The MCP tools that tell what memory learned from outcomes, and catch it up."""

from __future__ import annotations

from ..fence import fenced
from ..schema.learning import ConfidenceInput, EvolvePassInput, ProjectContextInput
from ..services.learning.confidence import learn_pass, trajectory
from ..services.learning.hubs import HUB_MIN, hubs
from ..services.learning.living import evolve_pass
from ..services.learning.reports import (
    decay_text,
    evolve_text,
    hubs_text,
    learn_text,
    learned_text,
)
from ..services.learning.staleness import decaying
from ..services.learning.teaching import learned
from ..services.learning.views import trajectory_text
from ..services.saving.project_context import context_text, describe, project_context
from .base import Answer, Env
from .declare import READS, WRITES, tool


@tool(
    "confidence_history",
    "How far one memory can be trusted and why: its confidence now and every move its "
    "outcomes (and the outcomes of what it is linked to) made, with when, from, to and "
    "which memory's outcome caused it.",
    READS,
)
def do_confidence(env: Env, args: ConfidenceInput) -> Answer:
    """A memory's confidence now and every move outcomes made to it, oldest first."""
    memory, changes = trajectory(env.store, args.memory_id)
    data = {
        "id": memory.id,
        "confidence": memory.confidence,
        "outcome": memory.outcome_status,
        "history": [c.as_dict() for c in changes],
    }
    return Answer(fenced(trajectory_text(memory, changes)), data)


STALE_TOLD = 50  # the stale memories a detail=stale answer lists
LESSONS_TOLD = 10
# How out of a stale memory, in the tools' words (mama decay says the commands').
_STALE_WAYS = (
    "A memory that still holds: evolve_outcome with VERIFIED (nothing changed) resets its "
    "clock; one that is wrong now: update_memory or forget_memory (when the user agrees)."
)


@tool(
    "project_context",
    "The project at a glance: its description, key decisions, hubs, stale memories, the "
    "tags it uses and what its outcomes taught (success rate, confidence moves). Give "
    "description to save what the project is; detail=stale, hubs or learned for that part "
    "in full.",
    WRITES,
)
def do_project_context(env: Env, args: ProjectContextInput) -> Answer:
    """The project's context (its description saved first, when one is given), or one part
    of it in full: its stale memories, its hubs, what its outcomes taught."""
    saved = ""
    if args.description:
        saved_id = describe(env.store, env.project, args.description).memory.id
        saved = f"Saved the project's description as {saved_id}.\n"
    if args.detail == "stale":
        stale = decaying(env.store, env.project)[:STALE_TOLD]
        text = decay_text(stale, env.project, aging=False)
        text = fenced(text) + (f"\n{_STALE_WAYS}" if stale else "")
        data = [s.as_dict() | {"content": s.memory.content} for s in stale]
        return Answer(saved + text, {"project": env.project, "stale": data})
    if args.detail == "hubs":
        found = hubs(env.store, env.project)
        text = fenced(hubs_text(found, env.project, HUB_MIN))
        return Answer(saved + text, {"project": env.project, "hubs": [h.as_dict() for h in found]})
    if args.detail == "learned":
        taught = learned(env.store, env.project)
        text = fenced(learned_text(taught, env.project, LESSONS_TOLD))
        return Answer(saved + text, taught.as_dict())
    ctx = project_context(env.store, env.project)
    return Answer(saved + fenced(context_text(ctx)), ctx.as_dict())


@tool(
    "evolve_pass",
    "Catch memory up with what it has not learned yet: apply outcomes recorded without "
    "moving confidences (imported, or by an older MAMA) and give memories the dated notes "
    "their links lack (a later memory builds on this; what this builds on FAILED). Saves "
    "and outcomes do both already: run it after an import or a teammate's sync. Safe to "
    "run again.",
    WRITES,
)
def do_evolve_pass(env: Env, args: EvolvePassInput) -> Answer:
    """Apply the outcomes not applied yet, then write the notes memories lack; both once."""
    learnt = learn_pass(env.store)
    done = evolve_pass(env.store)
    text = f"{learn_text(learnt)}\n{evolve_text(env.store, done)}"
    if learnt.changes:  # confidences the session start tells moved
        env.session.brief_stale(env.project)
    return Answer(fenced(text), {"learn": learnt.as_dict(), "evolve": done.as_dict()})
