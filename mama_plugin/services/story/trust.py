"""What the story adds about how far to trust a memory: stale for its kind, a hub, or moved
by another memory's outcome."""

from __future__ import annotations

from collections.abc import Sequence

from ...storage import MemoryRecord, Store
from ..learning.hubs import hub_counts
from ..learning.staleness import assess
from ..render import confidence
from .records import DecisionView
from .results import AnswerItem


def mark_trust(store: Store, items: Sequence[AnswerItem], memories: Sequence[MemoryRecord]) -> None:
    """Set ``stale`` on the stale or expired results and ``hub`` on the hubs. Read-only."""
    stale = assess(store, [m for m in memories if m.status == "current"])
    hubs = hub_counts(store, [i.id for i in items])
    for item in items:
        s = stale.get(item.id)
        if s is not None and s.flagged:
            item.stale = s.said()
        item.hub = hubs.get(item.id)


def mark_decisions(store: Store, decisions: Sequence[DecisionView]) -> None:
    """Set ``hub`` on the hubs and ``learned`` on the decisions whose confidence another
    memory's outcome moved last ("confidence was 0.7 before dec_… FAILED"). Read-only."""
    hubs = hub_counts(store, [d.m.id for d in decisions])
    for d in decisions:
        d.hub = hubs.get(d.m.id, 0)
        moved = [c for c in store.confidence.of(d.m.id) if c.delta]
        last = moved[-1] if moved else None
        if last is not None and last.hops > 0:
            d.learned = (
                f"confidence was {confidence(last.from_value)} before {last.trigger_id} "
                f"{last.outcome}"
            )
