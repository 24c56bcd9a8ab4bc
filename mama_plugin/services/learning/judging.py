"""Judging a memory: the one path every recorded outcome takes.

:func:`judge` writes the verdict on the memory (VERIFIED: checked against the code, its
outcome unchanged), moves the confidence of the memory and of what is linked to it
(:mod:`.confidence`), and runs the evolution pass for its neighbourhood (:mod:`.living`: what
builds on a FAILED memory gains a dated note), in one transaction. ``record_outcome`` (the
services' and the package's) and the ``evolve_outcome`` tool's event
(:mod:`..saving.outcomes`) both go through it, so no surface records a verdict that teaches nothing.
Raises :class:`~mama_plugin.errors.ValidationError` (nothing written) for an unknown memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ValidationError
from ...schema import VERIFIED, OutcomeInput
from ...storage import MemoryRecord, Store, now_ms
from ...storage.confidence import ConfidenceChange
from ...storage.notes import Note
from .confidence import learn_from, recorded_at
from .living import after_outcome


@dataclass(frozen=True)
class Judged:
    """What a verdict did: the memory as judged, the confidences it moved, the notes it made."""

    memory: MemoryRecord
    changes: tuple[ConfidenceChange, ...] = ()  # the judged memory's move first
    notes: tuple[Note, ...] = ()


def judge(store: Store, o: OutcomeInput) -> Judged:
    """Record ``o`` on its memory, learn from it and run the evolution pass after it."""
    with store.transaction():
        found = store.memories.get(o.memory_id)
        if found is None:
            raise ValidationError([f"unknown memory_id {o.memory_id!r}: no memory has that id"])
        if o.outcome == VERIFIED:  # checked against the code: its outcome stands as it was
            target, when = found, now_ms()
        else:
            taught = {
                "expected": o.expected,
                "would_repeat": o.would_repeat,
                "next_time": o.next_time,
            }
            target = store.memories.set_outcome(
                o.memory_id,
                o.outcome,
                details=o.details,
                evidence=o.evidence,
                learned=o.learned,
                extra={k: v for k, v in taught.items() if v},
            )
            when = recorded_at(target)
        changes = learn_from(store, target, o.outcome, recorded_at=when)
        target = store.memories.require(target.id)
        notes = after_outcome(store, target)
    return Judged(target, tuple(changes), tuple(notes))
