"""How prompt recall reads each embedding model's cosines: its ranking and relevance scale.

A cosine means something different for each model: where its unrelated texts sit (the
floor), whether meaning alone may carry a memory and how far above the bar, where a one-line
pointer starts, how far a Korean prompt's words must be above the bar, and the cosine's weight
in the candidates' ranking. Each model's figures are on its card (:class:`~mama_plugin.
embeddings.cards.Scale`, read off the calibration half of ``python -m benchmarks recall``; the
held-out half reports them); an unknown model is read as plain cosines, its words always
needed.
"""

from __future__ import annotations

from dataclasses import replace

from ...embeddings.cards import scale
from ..search.options import DEFAULT, Options


def ranking_of(model: str, base: Options = DEFAULT) -> Options:
    """How prompt recall ranks its candidates with ``model``'s vectors: as ``base`` (search's
    ranking) does, with the model's own cosine and BM25 weights when its scale sets them
    (``Scale.ranking_weight``, ``Scale.keyword_weight``)."""
    read = scale(model)
    if read.ranking_weight is not None:
        base = replace(base, vector_weight=read.ranking_weight)
    if read.keyword_weight is not None:
        base = replace(base, keyword_weight=read.keyword_weight)
    return base


def relevance(cosine: float, model: str) -> float:
    """A cosine on the 0–1 scale ``relevance_bar`` is set on, for ``model``."""
    floor = scale(model).floor
    return (cosine - floor) / (1.0 - floor)
