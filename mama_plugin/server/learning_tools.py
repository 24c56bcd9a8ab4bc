"""The MCP tools that tell what memory learned from outcomes."""

from __future__ import annotations

from ..fence import fenced
from ..schema.learning import ConfidenceInput
from ..services.learning import trajectory
from ..services.learning_views import trajectory_text
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
)
