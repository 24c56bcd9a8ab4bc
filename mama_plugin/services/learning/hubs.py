"""Hubs: memories many others rest on. Read-only.

A memory referenced by :data:`HUB_MIN` or more others is a hub: search answers and the
session start flag it (a change to it reaches far), and ``mama hubs`` lists each with what
references it, its confidence, its last use and its staleness; a hub that is aging or worse is
flagged for review before it goes stale.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...storage import MemoryRecord, Store
from .staleness import Staleness, assess

HUB_MIN = 5


def hub_counts(store: Store, memory_ids: Iterable[str]) -> dict[str, int]:
    """The hubs among ``memory_ids``: id → how many memories reference it."""
    return {i: n for i, n in store.references.counts(memory_ids).items() if n >= HUB_MIN}


@dataclass(frozen=True)
class Hub:
    """One hub: the memory, what references it, how stale it is."""

    memory: MemoryRecord
    referrers: tuple[str, ...]
    staleness: Staleness | None  # None for a checkpoint

    @property
    def review(self) -> bool:
        """Aging or worse: about to go stale, with many memories resting on it."""
        return self.staleness is not None and self.staleness.category != "fresh"

    def as_dict(self) -> dict[str, object]:
        m = self.memory
        return {
            **m.fields("id", "type", "topic", "content", "status"),
            "references": len(self.referrers),
            "referenced_by": list(self.referrers),
            "confidence": m.confidence,
            "last_used": m.last_used,
            "staleness": self.staleness.as_dict() if self.staleness else None,
            "review": self.review,
        }


def hubs(store: Store, project: str, *, minimum: int = HUB_MIN) -> list[Hub]:
    """The project's hubs, the most referenced first."""
    counted = store.references.at_least(project, minimum)
    found = store.memories.get_many(i for i, _ in counted)
    stale = assess(store, found.values())
    return [
        Hub(found[i], tuple(store.references.referrers(i)), stale.get(i))
        for i, _ in counted
        if i in found
    ]
