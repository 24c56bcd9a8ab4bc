"""Large synthetic stores quickly: copies of a saved base, and synthetic vectors.

The save path writes ~300 memories a second here (validation, privacy filter, links), so
a 1M store would take an hour. Past the base saved through the product's save path, a store
grows by copying the base's rows (already validated and redacted) under new ids, full-text
rows and queue entries included: posting lists, row sizes and pages grow as they would with
more of the same kind of memories. Links are not copied; traversal is timed on the base.

Vectors: the real model embeds a pool of the store's own texts; every memory gets a blend of
two pool vectors plus a little noise, normalised. Not real embeddings of its text, but spread
between real ones (not ``POOL`` tight clusters), so that a quantised search is judged
against the exact one on a plausible layout. The views prompt recall also compares (topic,
line) get their real vectors (:func:`fill_views`), as saved memories have them. Benchmarks
only (a bench module may use ``store.conn``).
"""

from __future__ import annotations

from typing import Any

from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.storage import Store

POOL = 512
NOISE = 0.02  # per component, before normalising (as the original bench used)
_COLUMNS = (
    "type, project, topic, content, specifics, evidence, reasoning, tension, continuity, "
    "outcome_status, outcome, confidence, tags, status, session_id, metadata, times_used, "
    "last_used, created_at, updated_at, version"
)


def grow(store: Store, n: int) -> int:
    """Copy the store's memories (in seq order) under new ids until it holds ``n``; returns n.

    Copy ``r`` of a memory ``id`` is ``id~r``; its row number is the original's plus the
    largest row number at the start of that round, so rows stay in one contiguous run.
    """
    conn = store.conn
    base = [int(r[0]) for r in conn.execute("SELECT seq FROM memories ORDER BY seq").fetchall()]  # type: ignore[arg-type]
    if not base:
        raise ValueError("grow() copies existing memories: save some first")
    count, round_ = len(base), 0
    with store.transaction():
        while count < n:
            round_ += 1
            take = min(len(base), n - count)
            last = base[take - 1]
            offset = int(conn.execute("SELECT max(seq) FROM memories").fetchall()[0][0])  # type: ignore[arg-type]
            conn.execute(
                f"INSERT INTO memories(seq, id, {_COLUMNS}) SELECT seq + ?, id || '~' || ?, "
                f"{_COLUMNS} FROM memories WHERE seq <= ? ORDER BY seq",
                (offset, round_, last),
            )
            conn.execute(
                "INSERT INTO memories_fts(rowid, topic, content, reasoning) "
                "SELECT rowid + ?, topic, content, reasoning FROM memories_fts WHERE rowid <= ?",
                (offset, last),
            )
            conn.execute(
                "INSERT INTO embedding_queue(seq) SELECT seq + ? FROM memories WHERE seq <= ?",
                (offset, last),
            )
            count += take
    return count


def fill_vectors(store: Store, embedder: EmbeddingModel, *, seed: int = 11) -> Any:
    """Give every queued memory a synthetic vector (see the module docstring); returns the pool."""
    import numpy as np

    store.vectors.check_model(embedder.name, embedder.dim)
    rng = np.random.default_rng(seed)
    texts = [text for _, text in store.vectors.pending(POOL)]
    pool = np.asarray(embedder.embed(texts), dtype=np.float32)
    seqs = store.vectors.queued()
    for start in range(0, len(seqs), 5_000):
        chunk = seqs[start : start + 5_000]
        vectors = blend(pool, len(chunk), rng)
        store.vectors.put(list(zip(chunk, vectors.tolist(), strict=True)))
    return pool


def fill_views(store: Store, embedder: EmbeddingModel) -> int:
    """Store the vectors of the views prompt recall also compares (a memory's topic and its
    line), as a save's embedding does (``indexing.embed_batch``); returns how many were
    embedded. Real embeddings: the copies share their originals' texts, so embedding the
    saved base's views covers them all. Without them, a prompt's first recall of each
    candidate embedded its views on the spot, a cost no real store pays."""
    from mama_plugin.services.search.indexing import narrative_text
    from mama_plugin.services.search.views import index_views

    rows = store.conn.execute("SELECT seq FROM memories WHERE id NOT LIKE '%~%' ORDER BY seq")
    records = store.memories.get_by_seq(int(r[0]) for r in rows.fetchall())  # type: ignore[arg-type]
    return index_views(store, embedder, [(m, narrative_text(store, m)) for m in records.values()])


def blend(pool: Any, n: int, rng: Any) -> Any:
    """``n`` unit vectors, each ``w·a + (1-w)·b + noise`` for two random pool rows a, b."""
    import numpy as np

    a = pool[rng.integers(0, len(pool), n)]
    b = pool[rng.integers(0, len(pool), n)]
    w = rng.uniform(0.0, 1.0, (n, 1)).astype(np.float32)
    out = w * a + (1 - w) * b + rng.normal(0.0, NOISE, a.shape).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out
