"""Several views of a memory for prompt-time recall: the best cosine of its narrative, its
decision line and its topic.

A decision is embedded (and stored) as its whole story (:func:`indexing.narrative_text`):
topic, decision, reasoning, outcome, what it replaced. A short prompt about one part of it
("which auth approach should it use under heavy traffic?") sits low against that long text,
and high against the decision's topic ("auth strategy") or its one line. Recall takes the
best of the three (:func:`best_cosines`).

Only the stored narrative has a vector in the store; the other views of the few candidates a
prompt brings are embedded at prompt time, once per memory version and model, and kept in a
bounded cache (:class:`ViewCache`) in the long-running server. A memory with no topic and
no reason has one view (its narrative is its content): nothing more is embedded.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence

from ..storage import MemoryRecord
from .retrieval import EmbeddingModel

CACHE_SIZE = 4096  # vectors kept (a 384-float vector: ~1.5 kB in Python lists, ~6 MB)
VIEW_CHARS = 300


def views(memory: MemoryRecord, narrative: str) -> list[str]:
    """The texts besides ``narrative`` a memory is also compared as (its topic, its line)."""
    out: list[str] = []
    for text in (memory.topic.replace("_", " ").strip(), memory.content.strip()[:VIEW_CHARS]):
        if text and text != narrative.strip() and text not in out:
            out.append(text)
    return out


class ViewCache:
    """Vectors of memory views, keyed by (model, memory id, row version, text); thread-safe."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._lock = threading.Lock()
        self._size = size
        self._vectors: OrderedDict[tuple[str, str, int, str], list[float]] = OrderedDict()

    def vectors(
        self, embedder: EmbeddingModel, wanted: Sequence[tuple[MemoryRecord, str]]
    ) -> dict[tuple[str, str], list[float]]:
        """(memory id, text) → vector for each wanted view, embedding the missing ones at once."""
        keys = [(embedder.name, m.id, m.version, text) for m, text in wanted]
        with self._lock:
            known = {k: self._vectors[k] for k in keys if k in self._vectors}
            for k in known:
                self._vectors.move_to_end(k)
        missing = list(dict.fromkeys(k for k in keys if k not in known))
        if missing:
            fresh = embedder.embed([k[3] for k in missing])
            with self._lock:
                for k, vector in zip(missing, fresh, strict=True):
                    self._vectors[k] = known[k] = list(vector)
                while len(self._vectors) > self._size:
                    self._vectors.popitem(last=False)
        return {(k[1], k[3]): known[k] for k in keys}


CACHE = ViewCache()  # one per process


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def best_cosines(
    embedder: EmbeddingModel,
    prompt_vector: Sequence[float],
    candidates: Sequence[tuple[MemoryRecord, str, float | None]],
    cache: ViewCache = CACHE,
) -> dict[str, float]:
    """Each candidate's best cosine over its narrative (given) and its other views.

    ``candidates``: (memory, narrative text, the narrative's cosine or None when it has no
    vector yet). A memory with neither a vector nor another view is left out.
    """
    wanted = [(m, text) for m, narrative, _ in candidates for text in views(m, narrative)]
    vectors = cache.vectors(embedder, wanted) if wanted else {}
    out: dict[str, float] = {}
    for memory, narrative, known in candidates:
        scores = [] if known is None else [known]
        scores += [cosine(prompt_vector, vectors[(memory.id, t)]) for t in views(memory, narrative)]
        if scores:
            out[memory.id] = max(scores)
    return out
