"""What MAMA asks of an embedding model: a name, a dimension and unit vectors for texts.

Search, recall and the save checks take any object of this shape (the local ``Embedder``,
a test's fake); a model with a query form of its own (EmbeddingGemma's task prompt) offers
``embed_queries`` beside ``embed``. Standard library only.
"""

from __future__ import annotations

from typing import Protocol


class EmbeddingModel(Protocol):
    """What retrieval needs from an embedding model."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...


def query_vectors(embedder: EmbeddingModel, texts: list[str]) -> list[list[float]]:
    """The vectors of texts that search (prompts, queries): the model's query form when it
    has one (``embed_queries``: EmbeddingGemma's task prompt), else its one form."""
    embed = getattr(embedder, "embed_queries", None) or embedder.embed
    return [list(vector) for vector in embed(texts)]


def query_vector_of(embedder: EmbeddingModel, text: str) -> list[float]:
    """The vector of one text that searches (:func:`query_vectors`)."""
    return query_vectors(embedder, [text])[0]
