"""An outcome as an event: the verdict on the memory, a dated insight saying it, a link back.

Composes :func:`~.judging.judge` (the verdict, the confidences it moves, the notes on what
builds on it) and :func:`~.memories.save_insight` in one transaction, so the memory's outcome
and the event that tells it are written together or not at all; then the files the memory
cites are recorded as they are now (VERIFIED does only that and the event: checked against
the code, the outcome unchanged). The event is for finding the verdict (its words are
indexed) and dating it; the memory carries the verdict itself, so neither the event's link
reason nor the answers that find the event repeat it (:func:`~.evolution.outcome_events`).
Raises :class:`~mama_plugin.errors.ValidationError` (nothing written) for an unknown memory
or invalid input.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...schema import VERIFIED, OutcomeInput
from ...storage import MemoryRecord, Store
from ...storage.confidence import ConfidenceChange
from ...storage.notes import Note
from ..evolution import current_of
from ..learning.judging import judge
from ..learning.verify import record as record_files
from .memories import save_insight

TAG = "outcome"  # every outcome event carries it


@dataclass(frozen=True)
class OutcomeEvent:
    """What recording an outcome wrote, and what stands now in the memory's place."""

    memory: MemoryRecord  # the memory the outcome was recorded on, as updated
    event: MemoryRecord  # the insight that tells the outcome (linked outcome_of the memory)
    current: MemoryRecord  # the head of its evolution chain (the memory itself when current)
    changes: tuple[ConfidenceChange, ...] = ()  # the confidences it moved, the memory's first
    notes: tuple[Note, ...] = ()  # the notes its evolution pass wrote (.living)


def record_outcome_event(store: Store, args: OutcomeInput) -> OutcomeEvent:
    """Record the outcome on the memory and as an event insight linked to it (outcome_of)."""
    with store.transaction():
        judged = judge(store, args)
        target = judged.memory
        content = f"Outcome {args.outcome} of '{target.content[:200]}': {args.details}"
        if args.outcome == VERIFIED:
            content = f"Verified '{target.content[:200]}' against the code: {args.details}"
        lesson = "; ".join(args.learned)
        if args.expected:
            content += f" Expected: {args.expected}."
        if lesson:
            content += f" Learned: {lesson}"
        if args.would_repeat:
            content += f" Would repeat: {args.would_repeat.replace('_', ' ')}."
        if args.next_time:
            content += f" Next time: {'; '.join(args.next_time)}"
        link = {
            "to_id": target.id,
            "relationship": "outcome_of",
            "reason": f"the {args.outcome} outcome, recorded as an event",
        }
        event = save_insight(
            store,
            target.project,
            {
                "topic": target.topic,
                "content": content,
                "tags": [TAG],
                "evidence": list(args.evidence),
                "links": [link],
            },
        )
    # Judged or verified: the files it cites are recorded as they are now, so what changed
    # before this verdict is no longer told as a change.
    record_files(store, target)
    head = current_of(store, target.id)
    return OutcomeEvent(target, event.memory, head, judged.changes, judged.notes)
