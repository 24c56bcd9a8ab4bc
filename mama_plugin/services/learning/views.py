"""What memory learned, told in a few lines: a confidence trajectory, the moves of a verdict.

The same words in ``mama confidence``, the ``confidence_history`` tool and the answer of
``evolve_outcome``. Read-only; memory text appears clipped to one line, as data.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ...storage import MemoryRecord
from ...storage.confidence import ConfidenceChange
from ..render import clip, confidence

MOVES_TOLD = 3  # linked memories an outcome's answer names (the rest are counted)


def when(ms: int) -> str:
    """A millisecond timestamp as ``YYYY-MM-DD HH:MM`` (UTC)."""
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(ms / 1000))


def arrow(change: ConfidenceChange) -> str:
    """``0.8 → 0.84`` (or ``0.8 (unchanged)``)."""
    if change.to_value == change.from_value:
        return f"{confidence(change.from_value)} (unchanged)"
    return f"{confidence(change.from_value)} → {confidence(round(change.to_value, 4))}"


def trajectory_text(memory: MemoryRecord, changes: Sequence[ConfidenceChange]) -> str:
    """A memory's confidence now and every move that brought it there, oldest first."""
    head = (
        f"{memory.id} ({memory.type}, {memory.outcome_status}) '{clip(memory.content, 100)}': "
        f"confidence {confidence(round(memory.confidence, 4))} now"
    )
    if not changes:
        return head + "; no outcome has moved it yet."
    lines = [head + f", {len(changes)} change{'s' if len(changes) != 1 else ''}:"]
    for c in changes:
        lines.append(f"  {when(c.at)}  {arrow(c)}  {c.why}")
    return "\n".join(lines)


def moves_text(changes: Sequence[ConfidenceChange]) -> str:
    """What an outcome moved, in one sentence ("" when it moved nothing)."""
    if not changes or not any(c.delta for c in changes):
        return ""
    judged, linked = changes[0], [c for c in changes[1:] if c.delta]
    text = f"Confidence {arrow(judged)}"
    if linked:
        told = [f"{c.memory_id} {arrow(c)}" for c in linked[:MOVES_TOLD]]
        more = len(linked) - MOVES_TOLD
        text += "; built on it: " + ", ".join(told) + (f" and {more} more" if more > 0 else "")
    return text + "."
