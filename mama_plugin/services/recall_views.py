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
import threading
from collections import OrderedDict
from collections.abc import Sequence

from ..storage import MemoryRecord, Store
from .retrieval import EmbeddingModel
from .warm import warm

CACHE_SIZE = 4096  # vectors kept (a 384-float vector: ~1.5 kB in Python lists, ~6 MB)
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


class ViewCache:
    """Vectors of memory views, keyed by (model, text), in front of the store's; thread-safe.

    What this process embedded itself waits in ``fresh`` (with the erasure token it was
    embedded under) until :func:`save_fresh` stores it.
    """

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._lock = threading.Lock()
        self._size = size
        self._vectors: OrderedDict[tuple[str, str], list[float]] = OrderedDict()
        self.fresh: dict[tuple[str, str], tuple[list[float], str | None]] = {}
        self._erased: str | None = None  # the store's erasure token when last looked at

    def watch(self, token: str) -> None:
        """Drop every vector kept when the store's erasure token is not the one last seen
        (text was forgotten, edited or redacted since, perhaps by another process)."""
        with self._lock:
            if token != self._erased:
                if self._erased is not None:
                    self._vectors.clear()
                    self.fresh.clear()
                self._erased = token

    def vectors(
        self,
        embedder: EmbeddingModel,
        wanted: Sequence[tuple[MemoryRecord, str]],
        store: Store | None = None,
        erased: str | None = None,
    ) -> dict[tuple[str, str], list[float]]:
        """(memory id, text) → vector for each wanted view: from this cache, then from
        ``store``, embedding the rest at once.

        ``erased``: the store's erasure token read before ``wanted``'s memories were
        (default: read now); what is embedded here is stored later only while it holds.
        """
        if store is not None:
            now = store.erasure.token()
            self.watch(now)
            erased = now if erased is None else erased
        texts = list(dict.fromkeys(text for _, text in wanted))
        with self._lock:
            known = {
                t: self._vectors[(embedder.name, t)]
                for t in texts
                if (embedder.name, t) in self._vectors
            }
            for t in known:
                self._vectors.move_to_end((embedder.name, t))
        missing = [t for t in texts if t not in known]
        if missing and store is not None:
            try:
                stored = store.vectors.of_texts(embedder.name, missing)
            except Exception:  # a store that cannot answer: embed them here, as before
                stored = {}
            self._keep(embedder.name, stored, fresh=False, erased=erased)
            known.update(stored)
            missing = [t for t in missing if t not in stored]
        if missing:
            made = dict(zip(missing, (list(v) for v in embedder.embed(missing)), strict=True))
            self._keep(embedder.name, made, fresh=True, erased=erased)
            known.update(made)
        return {(m.id, text): known[text] for m, text in wanted}

    def _keep(
        self, model: str, vectors: dict[str, list[float]], *, fresh: bool, erased: str | None
    ) -> None:
        with self._lock:
            if erased is not None and self._erased is not None and erased != self._erased:
                return  # read before text was erased: used for this answer, never kept
            for text, vector in vectors.items():
                self._vectors[(model, text)] = vector
                if fresh and len(self.fresh) < self._size:
                    self.fresh[(model, text)] = (vector, erased)
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)

    def clear(self) -> None:
        """Forget every vector kept, stored or not (their texts may have been forgotten)."""
        with self._lock:
            self._vectors.clear()
            self.fresh.clear()

    def holds_fresh(self, model: str) -> bool:
        """Whether anything embedded with ``model`` waits to be stored."""
        with self._lock:
            return any(m == model for m, _ in self.fresh)

    def take_fresh(self, model: str, erased: str | None = None) -> list[tuple[str, list[float]]]:
        """What this process embedded with ``model`` and has not stored yet (handed over).

        ``erased``: the store's erasure token now; a vector embedded under another is
        dropped (its text may be gone), and the cache with it (:meth:`watch`).
        """
        if erased is not None:
            self.watch(erased)
        with self._lock:
            mine = [(t, v, e) for (m, t), (v, e) in self.fresh.items() if m == model]
            for text, _, _ in mine:
                del self.fresh[(model, text)]
        return [(t, v) for t, v, e in mine if erased is None or e in (None, erased)]


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
