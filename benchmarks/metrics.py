"""Retrieval metrics over ranked lists of ids. Pure functions.

``ranked`` is a retrieval's output, best first; ``gold`` the set of relevant ids.
"""

from __future__ import annotations

import functools
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


Metric = Callable[[Sequence[str], set[str]], float]


def _recall(ranked: Sequence[str], gold: set[str], *, k: int) -> float:
    return recall_at(ranked, gold, k)


def _table(*recall_ks: int) -> dict[str, Metric]:
    """Recall at each k, then R_all@10, MRR and nDCG@10."""
    table: dict[str, Metric] = {f"r{k}": functools.partial(_recall, k=k) for k in recall_ks}
    table["r_all10"] = lambda r, g: all_at(r, g, 10)
    table["mrr"] = reciprocal_rank
    table["ndcg10"] = lambda r, g: ndcg_at(r, g, 10)
    return table


TURN_METRICS = _table(1, 5, 10, 25)
SESSION_METRICS = _table(1, 3, 5, 10)


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean (0 for no values)."""
    return sum(values) / len(values) if values else 0.0
