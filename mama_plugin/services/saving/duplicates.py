"""Near-duplicates at save time: the existing memory a new one says again, by cosine.

A new decision, insight or context whose vector sits at or above its model's bar (its card's)
from an existing memory of the same type and project is answered with that memory's id, so
Claude can update or link it instead of keeping a copy. The bars are measured by
``python -m benchmarks duplicates`` on public data (Stack Overflow questions closed as
duplicates, KLUE-STS pairs scored by people) and set for few false claims: a wrong "this is a
duplicate" costs more than a miss. A model without a measured bar claims nothing.

Never blocks a save on a model: with no warm embedder (``None``: still loading, or none), a
store whose vectors come from another model, or Korean text and a model that cannot read it
(:func:`~mama_plugin.embeddings.cards.reads_korean`), nothing is checked. The memories
compared with are those already embedded; one still queued for its vector is not seen.
Read-only.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from ...embeddings.cards import card_named, reads_korean
from ...embeddings.protocol import EmbeddingModel
from ...storage import MemoryRecord, Store
from ...text import hangul
from ..evolution import outcome_events
from ..search import vector_index
from ..search.indexing import narrative_text

KINDS = ("decision", "insight", "context")  # checkpoints and outcome events are not checked
DEPTH = 20  # the vector neighbours read: other types may come first


@dataclass(frozen=True)
class Near:
    """The existing memory nearest a new text, and their cosine."""

    memory: MemoryRecord
    cosine: float

    def as_dict(self) -> dict[str, object]:
        return {"id": self.memory.id, "cosine": round(self.cosine, 3)}


def bar(model: str, *, korean: bool = False) -> float | None:
    """The cosine ``model``'s duplicates are claimed at (its card's), for a text in Hangul when
    ``korean``; None: never (not measured, or a model of the user's own)."""
    card = card_named(model)
    if card is None:
        return None
    return card.korean_duplicate_bar if korean else card.duplicate_bar


def nearest(
    store: Store,
    embedder: EmbeddingModel,
    *,
    project: str,
    kind: str,
    text: str,
    skip: Collection[str] = (),
) -> Near | None:
    """The embedded memory of ``kind`` in ``project`` nearest ``text`` (any cosine), or None.

    Left out: the ids in ``skip``, superseded decisions (deciding an old choice again is not
    a copy), outcome events, and memories in Hangul when the model cannot read it.
    """
    if not _usable(store, embedder) or (hangul(text) and not reads_korean(embedder.name)):
        return None
    vector = embedder.embed([text])[0]
    found = vector_index.knn(store, vector, DEPTH, project=project)
    records = store.memories.get_by_seq(seq for seq, _ in found)
    candidates = [
        (records[seq], 1.0 - distance)
        for seq, distance in found
        if seq in records and _comparable(records[seq], kind, skip, embedder.name)
    ]
    events = outcome_events(store, (m for m, _ in candidates))
    for memory, cosine in candidates:
        if memory.id not in events:
            return Near(memory, cosine)
    return None


def duplicate_of(
    store: Store,
    embedder: EmbeddingModel | None,
    saved: MemoryRecord,
    *,
    skip: Collection[str] = (),
) -> Near | None:
    """The existing memory ``saved`` says again (at or above the model's bar), or None.

    ``embedder`` None (not loaded yet) checks nothing. ``skip``: memories the save already
    relates it to (the decisions it replaces or refines, the links it was given).
    """
    if embedder is None or saved.type not in KINDS or saved.rolling:
        return None
    text = narrative_text(store, saved)
    at = bar(embedder.name, korean=hangul(text))
    if at is None:
        return None
    near = nearest(
        store, embedder, project=saved.project, kind=saved.type, text=text, skip={saved.id, *skip}
    )
    return near if near is not None and near.cosine >= at else None


def _usable(store: Store, embedder: EmbeddingModel) -> bool:
    """Whether the store's vectors come from ``embedder`` (else cosines mean nothing)."""
    name, dim = store.vectors.recorded_model()
    return name == embedder.name and dim == embedder.dim


def _comparable(memory: MemoryRecord, kind: str, skip: Collection[str], model: str) -> bool:
    if memory.type != kind or memory.id in skip or memory.status == "superseded":
        return False
    return reads_korean(model) or not hangul(f"{memory.topic} {memory.content}")
