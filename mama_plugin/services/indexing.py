"""Embedding after the write: drain the queue of memories that have no vector yet.

Saving never waits for a model; the long-running server drains the queue in the background
and ``mama reindex`` drains it (or rebuilds every vector for a new model) on demand.
"""

from __future__ import annotations

from ..storage import Store
from .retrieval import EmbeddingModel


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
            break
        done += embedded
    return done


def embed_batch(store: Store, embedder: EmbeddingModel, size: int) -> int:
    """Embed up to ``size`` queued memories; return how many (0: the queue is empty).

    The caller checks the model first (:func:`vectors.check_model`): a batch does not.
    """
    batch = store.vectors.pending(size)
    if batch:
        vectors = embedder.embed([text for _, text in batch])
        store.vectors.put(list(zip((seq for seq, _ in batch), vectors, strict=True)))
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
