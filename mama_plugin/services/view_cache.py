"""The vectors of memory views one store keeps in front of its own: bounded, thread-safe.

Part of the store's warm state (:mod:`.warm`); :mod:`.search.views` says which views a memory
has and fills this cache, :func:`.search.views.save_fresh` stores what it embedded.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..storage import MemoryRecord, Store

if TYPE_CHECKING:
    from ..embeddings.protocol import EmbeddingModel

CACHE_SIZE = 4096  # vectors kept (a 384-float vector: ~1.5 kB in Python lists, ~6 MB)


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
