"""Every ranking choice retrieval makes, as one frozen value: ``Options``, and what was kept.

``DEFAULT`` is what the ``retrieval`` benchmark's ablations kept (:mod:`.retrieval`'s
docstring says why each choice); ``TODAY`` and ``MAIN`` are earlier defaults the benchmarks
compare with; :func:`options_for` applies the ``ranking`` setting.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from . import ranking
from .relevance import WEIGHTS, Weights

SCALES = ("best", "minmax")  # Options.scale
# Measured on LoCoMo-10 (docs/architecture.md, "Retrieval"): see retrieval.py's docstring.
CANDIDATES = 400
VECTOR_WEIGHT = 2.0
NEIGHBOUR_WINDOW = 2
NEIGHBOUR_WEIGHT = 0.3
SESSION_WEIGHT = 0.2
DATE_BOOST = 1.0
# Hubs rank ×1.2: the relevance benchmark's sets hold no links, so no loss there and no gain
# to measure (README, "Relevance"); the share is a choice, not a tuned weight.
HUB_BOOST = 0.2


@dataclass(frozen=True)
class Options:
    """Every ranking choice the ``retrieval`` benchmark measures; ``DEFAULT`` is what it kept."""

    vector_weight: float = VECTOR_WEIGHT
    keyword_depth: int = CANDIDATES
    vector_depth: int = CANDIDATES
    neighbour_weight: float = NEIGHBOUR_WEIGHT
    session_weight: float = SESSION_WEIGHT
    # How many of a session's best relevances every member gains a share of (1: the best).
    session_top: int = 1
    updates: bool = True
    links: bool = False
    type_pairs: bool = False
    last_use: bool = False
    recency_boost: float = ranking.RECENCY_BOOST
    keyword_weight: float = 1.0
    # Pseudo-relevance feedback: the ``expand_terms`` words most shared by the ``expand_docs``
    # best candidates query the index again; their matches add ``expand_weight`` × score.
    expand_terms: int = 0
    expand_docs: int = 5
    expand_weight: float = 0.5
    neighbour_window: int = NEIGHBOUR_WINDOW
    # Memories dated on a day or in a month the question names (:mod:`dates`) gain this share.
    date_boost: float = DATE_BOOST
    # How each retriever's scores are put on one scale before they are weighted and added:
    # "best" (BM25 over the best BM25, the cosine as it is) or "minmax" (each list from its
    # lowest, 0, to its highest, 1: a convex combination when the two weights add up to 1).
    scale: str = "best"
    # How the score is made (:mod:`relevance`): ranking's factors, or the relevance composite
    # folded in (``composite``) or alone (``formula``), with these weights.
    scoring: str = "factors"
    weights: Weights = WEIGHTS
    # Hubs (referenced by ``hubs.HUB_MIN`` or more others) gain this share with the factors.
    hub_boost: float = HUB_BOOST

    def needs_hubs(self) -> bool:
        """Whether scoring reads which candidates are hubs."""
        return self.hub_boost > 0 or (self.scoring != "factors" and self.weights.importance > 0)


DEFAULT = Options()
# The ranking before issue 16, and main's default before question dates.
TODAY = Options(updates=False, date_boost=0.0, vector_weight=2.0, hub_boost=0.0)
MAIN = Options(date_boost=0.0, vector_weight=2.0, hub_boost=0.0)


def options_for(scoring: str) -> Options:
    """The default options with the ``ranking`` setting's scoring (``factors``: ``DEFAULT``)."""
    return DEFAULT if scoring == "factors" else replace(DEFAULT, scoring=scoring)
