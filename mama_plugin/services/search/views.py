"""Several views of a memory for prompt-time recall: the best cosine of its narrative, its
decision line and its topic.

A decision is embedded (and stored) as its whole story (:func:`indexing.narrative_text`):
topic, decision, reasoning, outcome, what it replaced. A short prompt about one part of it
("which auth approach should it use under heavy traffic?") sits low against that long text,
and high against the decision's topic ("auth strategy") or its one line. Recall takes the
best of the three (:func:`best_cosines`).

The other views' vectors live in the store's ``text_vectors`` (by model and text): the
indexer embeds a memory's views with its narrative (:func:`index_views`), and views the
prompt path had to embed itself (memories indexed before the table existed) are kept in a
bounded cache with the store's warm state (:class:`ViewCache`, :mod:`.warm`) and written to
the store when the indexer next runs (:func:`save_fresh`), off the prompt's path. A short
``claude -p`` session's first prompt then reads them instead of embedding a dozen texts
while the user waits. A memory with no topic and no reason has one view (its narrative is
its content): nothing more.

Text another process forgot, edited or redacted must not come back from this cache: the
cache drops everything when the store's erasure token (``meta.text_erased``) moves, and each
vector embedded here carries the token read before its memory was (``erased``, read by the
caller before its candidates); :func:`save_fresh` stores only those whose token is still the
store's, read under the write lock.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ...embeddings.protocol import EmbeddingModel
from ...storage import MemoryRecord, Store
from ..view_cache import ViewCache
from ..warm import warm

VIEW_CHARS = 300
# The most of a prompt or narrative that is embedded: past it a sentence model reads nothing more.
EMBED_CHARS = 2000


def views(memory: MemoryRecord, narrative: str) -> list[str]:
    """The texts besides ``narrative`` a memory is also compared as (its topic, its line)."""
    out: list[str] = []
    for text in (memory.topic.replace("_", " ").strip(), memory.content.strip()[:VIEW_CHARS]):
        if text and text != narrative.strip() and text not in out:
            out.append(text)
    return out


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def best_cosines(
    embedder: EmbeddingModel,
    prompt_vector: Sequence[float],
    candidates: Sequence[tuple[MemoryRecord, str, float | None]],
    cache: ViewCache | None = None,
    store: Store | None = None,
    erased: str | None = None,
) -> dict[str, float]:
    """Each candidate's best cosine over its narrative (given) and its other views.

    ``candidates``: (memory, narrative text, the narrative's cosine or None when it has no
    vector yet). A memory with neither a vector nor another view is left out. The views'
    vectors come from ``cache``, then ``store`` (when given), else are embedded now.
    ``erased``: the store's erasure token read before the candidates were
    (:meth:`ViewCache.vectors`).
    """
    if cache is None:
        cache = warm(store).views if store is not None else ViewCache()
    wanted = [(m, text) for m, narrative, _ in candidates for text in views(m, narrative)]
    vectors = cache.vectors(embedder, wanted, store, erased) if wanted else {}
    out: dict[str, float] = {}
    for memory, narrative, known in candidates:
        scores = [] if known is None else [known]
        scores += [cosine(prompt_vector, vectors[(memory.id, t)]) for t in views(memory, narrative)]
        if scores:
            out[memory.id] = max(scores)
    return out


def index_views(
    store: Store,
    embedder: EmbeddingModel,
    memories: Sequence[tuple[MemoryRecord, str]],
    *,
    narratives: bool = False,
) -> int:
    """Embed and store the views of ``memories`` (each with its narrative) that the store
    lacks, with what this process embedded at prompt time (:func:`save_fresh`); returns how
    many texts were stored. Checkpoints are never recalled at prompt time: none of theirs.
    ``narratives``: the narratives too, as :func:`read_with` reads them (a model other than
    the store's, whose vectors the store does not index)."""
    texts = list(
        dict.fromkeys(
            t
            for m, n in memories
            if m.type != "checkpoint"
            for t in [*([n[:EMBED_CHARS]] if narratives else []), *views(m, n)]
        )
    )
    have = store.vectors.of_texts(embedder.name, texts) if texts else {}
    missing = [t for t in texts if t not in have]
    made = list(zip(missing, embedder.embed(missing), strict=True)) if missing else []
    return len(made) + save_fresh(store, embedder.name, made)


def save_fresh(
    store: Store,
    model: str,
    more: Sequence[tuple[str, Sequence[float]]] = (),
    cache: ViewCache | None = None,
) -> int:
    """Store ``more`` and the views ``cache`` embedded with ``model`` at prompt time; returns
    how many of the latter were stored. Those embedded before text was erased are dropped:
    the erasure token is read under the write lock, so a forget cannot land in between."""
    views = cache if cache is not None else warm(store).views
    if not more and not views.holds_fresh(model):
        return 0  # nothing to write: no write lock taken
    with store.transaction():
        fresh = views.take_fresh(model, store.erasure.token())
        if fresh or more:
            store.vectors.put_texts(model, [*more, *fresh])
    return len(fresh)


def read_with(
    reader: EmbeddingModel,
    prompt: str,
    candidates: Sequence[tuple[MemoryRecord, str]],
    store: Store,
    erased: str | None = None,
) -> dict[str, float]:
    """Each candidate's best cosine with ``prompt`` as ``reader`` reads them (its narrative and
    its views): for a model other than the store's, whose vectors the store does not index.
    The narratives' vectors are kept like views' (by model and text), so a memory is embedded
    once a process, and stored for the next by :func:`save_fresh`. ``erased``: as
    :func:`best_cosines` takes it."""
    if not candidates:
        return {}
    asked = reader.embed([prompt[:EMBED_CHARS]])[0]
    wanted = [(m, narrative[:EMBED_CHARS]) for m, narrative in candidates]
    read = warm(store).views.vectors(reader, wanted, store, erased)
    known = [(m, n, cosine(asked, read[(m.id, n[:EMBED_CHARS])])) for m, n in candidates]
    return best_cosines(reader, asked, known, store=store, erased=erased)
