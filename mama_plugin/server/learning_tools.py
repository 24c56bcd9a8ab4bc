"""The MCP tools that tell what memory learned from outcomes."""

from __future__ import annotations

from ..fence import fenced
from ..schema.learning import ConfidenceInput, ProjectContextInput
from ..services.learning import trajectory
from ..services.learning_views import trajectory_text
from ..services.project_context import context_text, describe, project_context
from .base import Answer, Env, Tool


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


def do_project_context(env: Env, args: ProjectContextInput) -> Answer:
    """The project's context (its description saved first, when one is given)."""
    saved = ""
    if args.description:
        saved_id = describe(env.store, env.project, args.description).memory.id
        saved = f"Saved the project's description as {saved_id}.\n"
    ctx = project_context(env.store, env.project)
    return Answer(saved + fenced(context_text(ctx)), ctx.as_dict())


LEARNING_TOOLS: tuple[Tool, ...] = (
    Tool(
        "confidence_history",
        "How far one memory can be trusted and why: its confidence now and every move its "
        "outcomes (and the outcomes of what it is linked to) made, with when, from, to and "
        "which memory's outcome caused it.",
        ConfidenceInput,
        do_confidence,
        read_only=True,
    ),
    Tool(
        "project_context",
        "The project at a glance: its description, key decisions, hubs, stale memories, the "
        "tags it uses and what its outcomes taught (success rate, confidence moves). Give "
        "description to save what the project is.",
        ProjectContextInput,
        do_project_context,
        read_only=False,
    ),
)
