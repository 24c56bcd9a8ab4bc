"""Keyword search whose results always say what is current.

A superseded hit never appears alone: the decision that replaced it is placed right above it
(settled decision 3). Read-only.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..storage import MemoryRecord, Store
from .evolution import current_of


@dataclass(frozen=True)
class Hit:
    """One result: the memory, its keyword score (0 when it came in as a successor), the
    memory that stands now in its place (itself when current)."""

    memory: MemoryRecord
    score: float
    current: MemoryRecord

    @property
    def label(self) -> str:
        """``current`` or ``superseded → <id of what replaced it>``."""
        if self.current.id == self.memory.id:
            return self.memory.status
        return f"superseded → {self.current.id}"


def search_text(store: Store, query: str, *, project: str | None, limit: int = 10) -> list[Hit]:
    """Full-text hits, best first, each superseded one preceded by its current successor."""
    hits: list[Hit] = []
    placed: set[str] = set()
    for memory, score in store.search_text(query, project=project, limit=limit):
        if memory.id in placed:
            continue
        head = current_of(store, memory.id) if memory.status == "superseded" else memory
        if head.id not in placed and head.id != memory.id:
            hits.append(Hit(head, 0.0, head))
            placed.add(head.id)
        hits.append(Hit(memory, score, head))
        placed.add(memory.id)
    return hits
