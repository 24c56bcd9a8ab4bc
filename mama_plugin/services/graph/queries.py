"""Asking the graph: links by a relationship and its synonyms, and what happened after a memory.

A relationship query matches the word asked for, the words recorded under its canonical form
and — with an embedding model — the words within ``EXPAND_THRESHOLD`` by meaning. "What
happened after X" walks forward from X over implementation and temporal links, at most
``AFTER_DEPTH`` hops, keeping only links made within a window after X was saved. Read-only
apart from the word-vector cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...errors import ValidationError
from ...storage import LinkRecord, MemoryRecord, Store
from ...storage.link_tags import LinkTags
from ...storage.relationship_words import RelationshipWords
from .synonyms import EXPAND_THRESHOLD, Similar, checked_word, expand
from .traverse import Step, traverse
from .upkeep import shown

if TYPE_CHECKING:
    from ...embeddings.protocol import EmbeddingModel

DAY_MS = 86_400_000
AFTER_DEPTH = 5
AFTER_WINDOW_DAYS = 7.0
AFTER_CATEGORIES = ("implementation", "temporal")


@dataclass(frozen=True)
class RelationshipMatches:
    """The words a relationship query matched (with their similarity) and the links found."""

    asked: str
    words: list[Similar]
    links: list[LinkRecord]
    tags: dict[int, tuple[str, ...]] = field(default_factory=dict)  # link id → its tags

    def as_dict(self) -> dict[str, object]:
        """Plain data (``--json``, the tool's structured answer)."""
        return {
            "relationship": self.asked,
            "matched_words": [w.as_dict() for w in self.words],
            "links": _with_tags(self.links, self.tags),
        }


@dataclass(frozen=True)
class TaggedLinks:
    """The links carrying one tag, newest first, with all their tags."""

    tag: str
    links: list[LinkRecord]
    tags: dict[int, tuple[str, ...]]

    def as_dict(self) -> dict[str, object]:
        """Plain data (``--json``)."""
        return {"tag": self.tag, "links": _with_tags(self.links, self.tags)}


def links_by_tag(store: Store, tag: str, *, project: str | None, limit: int = 50) -> TaggedLinks:
    """Links carrying ``tag`` (leaving ``project``'s memories), newest first."""
    found = LinkTags(store).tagged(tag, project=project, limit=limit)
    return TaggedLinks(tag.strip(), found, LinkTags(store).of(ln.id for ln in found))


def _with_tags(
    links: list[LinkRecord], tags: dict[int, tuple[str, ...]]
) -> list[dict[str, object]]:
    """Each link's columns, its strength now and its tags."""
    return [shown(ln).as_dict() | {"tags": list(tags.get(ln.id, ()))} for ln in links]


def links_by_relationship(
    store: Store,
    embedder: EmbeddingModel | None,
    word: str,
    *,
    project: str | None,
    threshold: float = EXPAND_THRESHOLD,
    limit: int = 50,
) -> RelationshipMatches:
    """Links whose word is ``word`` or one of its synonyms, newest first (``limit`` at most)."""
    words = expand(store, embedder, word, threshold)
    found = RelationshipWords(store).links_with(
        [w.word for w in words], project=project, limit=limit
    )
    tags = LinkTags(store).of(ln.id for ln in found)
    return RelationshipMatches(checked_word(word), words, found, tags)


@dataclass(frozen=True)
class After:
    """What followed a memory: the steps reached, each with its memory."""

    start: MemoryRecord
    window_days: float
    steps: list[tuple[Step, MemoryRecord]]

    def as_dict(self) -> dict[str, object]:
        """Plain data (``--json``, the tool's structured answer)."""
        return {
            "memory_id": self.start.id,
            "window_days": self.window_days,
            "after": [
                {
                    **m.fields("id", "type", "content", "status"),
                    "depth": s.depth,
                    "relationship": s.link.relationship,
                    "reason": s.link.reason,
                    "came_from": s.came_from,
                    "confidence": round(s.confidence, 3),
                }
                for s, m in self.steps
            ],
        }


def what_happened_after(
    store: Store,
    memory_id: str,
    *,
    window_days: float = AFTER_WINDOW_DAYS,
    depth: int = AFTER_DEPTH,
) -> After:
    """Walk forward from ``memory_id`` over implementation and temporal links made within
    ``window_days`` of it, ``depth`` hops at most (1–5). Raises NotFoundError for an unknown id
    and ValidationError for a window or depth out of range."""
    if not 0 < window_days <= 3650:
        raise ValidationError([f"window is in days, above 0 and at most 3650 (got {window_days})"])
    if not 1 <= depth <= AFTER_DEPTH:
        raise ValidationError([f"depth must be 1 to {AFTER_DEPTH} (got {depth})"])
    start = store.memories.require(memory_id)
    steps = traverse(
        store,
        start.id,
        categories=AFTER_CATEGORIES,
        direction="both",
        max_depth=depth,
        since=start.created_at,
        until=start.created_at + int(window_days * DAY_MS),
    )
    found = store.memories.get_many(s.memory_id for s in steps)
    later = [(s, found[s.memory_id]) for s in steps if s.memory_id in found]
    return After(start, window_days, [(s, m) for s, m in later if m.created_at >= start.created_at])
