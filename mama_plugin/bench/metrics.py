"""Retrieval metrics over ranked lists of ids. Pure functions.

``ranked`` is a retrieval's output, best first; ``gold`` the set of relevant ids.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence


def recall_at(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """|gold ∩ top-k| / |gold|."""
    return len(gold & set(ranked[:k])) / len(gold) if gold else 0.0


def all_at(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """1.0 when every gold id is in the top k (R_all@k), else 0.0."""
    return 1.0 if gold and gold <= set(ranked[:k]) else 0.0


def reciprocal_rank(ranked: Sequence[str], gold: set[str]) -> float:
    """1 / rank of the first gold id (0 when none was retrieved)."""
    for rank, item in enumerate(ranked, start=1):
        if item in gold:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: set[str], k: int) -> float:
    """Binary-relevance nDCG@k: DCG over the top k divided by the ideal DCG."""
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / ideal if ideal else 0.0


def distinct(items: Sequence[str]) -> list[str]:
    """The items in first-seen order, each once (turns mapped to sessions)."""
    return list(dict.fromkeys(items))


TURN_METRICS: dict[str, Callable[[Sequence[str], set[str]], float]] = {
    "r1": lambda r, g: recall_at(r, g, 1),
    "r5": lambda r, g: recall_at(r, g, 5),
    "r10": lambda r, g: recall_at(r, g, 10),
    "r25": lambda r, g: recall_at(r, g, 25),
    "r_all10": lambda r, g: all_at(r, g, 10),
    "mrr": reciprocal_rank,
    "ndcg10": lambda r, g: ndcg_at(r, g, 10),
}
SESSION_METRICS: dict[str, Callable[[Sequence[str], set[str]], float]] = {
    "r1": lambda r, g: recall_at(r, g, 1),
    "r3": lambda r, g: recall_at(r, g, 3),
    "r5": lambda r, g: recall_at(r, g, 5),
    "r10": lambda r, g: recall_at(r, g, 10),
    "r_all10": lambda r, g: all_at(r, g, 10),
    "mrr": reciprocal_rank,
    "ndcg10": lambda r, g: ndcg_at(r, g, 10),
}


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean (0 for no values)."""
    return sum(values) / len(values) if values else 0.0
