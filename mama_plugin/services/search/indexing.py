"""Embedding after the write: drain the queue of memories that have no vector yet.

Saving never waits for a model; the long-running server drains the queue in the background
(a save in the server wakes it at once) and before it exits, and ``mama reindex`` drains it
(or rebuilds every vector for a new model) on demand.

A decision is embedded as its narrative (:func:`narrative_text`): topic, decision, reasoning,
outcome, and the decisions it replaced with what happened to them, or what replaced it; a
prompt about "auth under heavy traffic" then lands on the Redis-sessions decision whose text
says the JWT one it replaced failed under load. Other memories are embedded as their topic,
content and reason.
"""

from __future__ import annotations

import time

from ...embeddings.protocol import EmbeddingModel
from ...storage import MemoryRecord, Store
from ..evolution import current_of
from .views import index_views, save_fresh

NARRATIVE_CHARS = 1200  # an embedding model reads ~256 tokens; the rest would be cut anyway


def drain(
    store: Store, embedder: EmbeddingModel, *, batch_size: int = 64, limit: int | None = None
) -> int:
    """Embed queued memories in batches until the queue is empty (or ``limit``); return how many."""
    store.vectors.check_model(embedder.name, embedder.dim)
    done = 0
    while limit is None or done < limit:
        size = batch_size if limit is None else min(batch_size, limit - done)
        embedded = embed_batch(store, embedder, size)
        if not embedded:
            save_fresh(store, embedder.name)
            break
        done += embedded
    return done


def drain_until(
    store: Store, embedder: EmbeddingModel, deadline: float, *, project: str, batch_size: int = 8
) -> int:
    """Embed ``project``'s queued memories until none is left or ``deadline`` passes.

    ``deadline`` is a :func:`time.monotonic` instant, checked between batches: small batches
    keep the overrun short (one batch of ~10 ms an embedding). Returns how many were embedded.
    Raises the store's mismatch error when the model is not the one the vectors came from.
    """
    store.vectors.check_model(embedder.name, embedder.dim)
    done = 0
    while time.monotonic() < deadline:
        embedded = embed_batch(store, embedder, batch_size, project=project)
        if not embedded:
            save_fresh(store, embedder.name)  # views the prompts of this process embedded
            break
        done += embedded
    return done


def embed_batch(
    store: Store, embedder: EmbeddingModel, size: int, *, project: str | None = None
) -> int:
    """Embed up to ``size`` queued memories (``project``'s only, when given); return how many.

    0 means nothing of that kind is queued. The caller checks the model first
    (:func:`vectors.check_model`): a batch does not.
    """
    batch = store.vectors.pending(size, project=project)
    if batch:
        records = store.memories.get_by_seq(seq for seq, _ in batch)
        texts = [
            narrative_text(store, records[seq]) if seq in records else text for seq, text in batch
        ]
        vectors = embedder.embed(texts)
        store.vectors.put(list(zip((seq for seq, _ in batch), vectors, strict=True)))
        # Their short views too (topic, one line), which prompt-time recall also compares with.
        told = zip((seq for seq, _ in batch), texts, strict=True)
        index_views(store, embedder, [(records[seq], text) for seq, text in told if seq in records])
    return len(batch)


def reindex(store: Store, embedder: EmbeddingModel, *, batch_size: int = 64) -> int:
    """Re-embed every memory; a different model or dimension replaces the whole index."""
    name, dim = store.vectors.recorded_model()
    if name != embedder.name or dim != embedder.dim or name is None:
        store.vectors.reset(embedder.name, embedder.dim)
    else:
        with store.transaction():
            store.vectors.queue_all()
    return drain(store, embedder, batch_size=batch_size)


def narrative_text(store: Store, memory: MemoryRecord) -> str:
    """The text ``memory`` is embedded as: for a decision, its story; else topic, content, why."""
    reason = str(memory.reasoning.get("primary") or "")
    parts = [memory.topic.replace("_", " "), memory.content, reason]
    if memory.type == "decision":
        details = str(memory.outcome.get("details") or "")
        if memory.outcome_status not in ("PENDING", "SUPERSEDED"):
            parts.append(f"{memory.outcome_status}: {details}".rstrip(": "))
        if memory.status == "superseded":
            head = current_of(store, memory.id)
            if head.id != memory.id:
                parts.append(f"replaced by: {head.content}")
        replaced = [
            link.to_id
            for link in store.links.of(memory.id, direction="out")
            if link.relationship == "supersedes"
        ]
        for old in store.memories.get_many(replaced).values():
            told = str(old.outcome.get("details") or old.reasoning.get("primary") or "")
            parts.append(f"replaces: {old.content} ({old.outcome_status}: {told})")
    text = ". ".join(p.strip() for p in parts if p and p.strip())
    return text[:NARRATIVE_CHARS]
