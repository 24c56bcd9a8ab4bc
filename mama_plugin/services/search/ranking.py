"""How a retrieved memory's score is adjusted for what happened to it. Pure functions.

    score = relevance × confidence_factor × outcome_factor × recency_factor × usage_factor

- ``relevance``: keyword and vector scores fused, with session context (see retrieval).
- ``confidence_factor = 0.5 + 0.5 × confidence``: a guess (0) counts half a proven fact (1).
- ``outcome_factor``: SUCCESS 1.15, PENDING 1.0, PARTIAL 0.95, SUPERSEDED 0.9, FAILED 0.85.
  A failed decision still surfaces — as a lesson, labelled so, never as advice.
- ``recency_factor = 1 + 0.1 × 0.5 ** (age_days / 30)``: up to +10% for today, +5% at a
  month, fading towards 1. (It was +25%: measured at the conversations' own dates on LoCoMo,
  +25% pushed older sessions' answers down — turn R@10 0.727 against 0.746 with +10%.)
- ``usage_factor = min(1.3, 1 + 0.1 × log2(1 + times_used))``: memories that proved useful rise.

Relevance dominates: each factor moves a score by at most a third, so a memory must first
match the question before its history can reorder it.

Time is measured at ``as_of`` (the search's "now": the wall clock, or a conversation's own
date), from the memory's event time (``created_at``: when it was said, which imports and
dated saves carry over). The design documents' other signals are options, measured in
``python -m benchmarks retrieval`` (docs/architecture.md, "Retrieval", says which are on):

- ``last_use_factor = 1 / (1 + days_since_last_used / 30)`` (never used: since its event time),
  which would replace ``recency_factor``.
- ``LINK_BOOST`` ×1.5 for memories linked to the top result within depth 2 (links of
  confidence ≥ ``LINK_MIN_CONFIDENCE``), and the ``TYPE_PAIR`` boosts by (top result's type,
  linked memory's type); a boosted memory never passes the top result (capped at 1.0 of it).
"""

from __future__ import annotations

import math
from typing import Protocol


class Rankable(Protocol):
    """What ranking and the composite read of a memory (a MemoryRecord or the lighter
    RankFields)."""

    @property
    def confidence(self) -> float: ...
    @property
    def outcome_status(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def created_at(self) -> int: ...
    @property
    def times_used(self) -> int: ...
    @property
    def last_used(self) -> int | None: ...
    @property
    def type(self) -> str: ...


OUTCOME_FACTOR = {
    "SUCCESS": 1.15,
    "PENDING": 1.0,
    "PARTIAL": 0.95,
    "SUPERSEDED": 0.9,
    "FAILED": 0.85,
}
RECENCY_BOOST = 0.1
RECENCY_HALF_LIFE_DAYS = 30.0
USAGE_WEIGHT = 0.1
USAGE_CAP = 1.3
DAY_MS = 86_400_000
LAST_USE_DAYS = 30.0
LINK_BOOST = 1.5
LINK_DEPTH = 2
LINK_MIN_CONFIDENCE = 0.5
TYPE_PAIR = {
    ("decision", "checkpoint"): 1.2,
    ("insight", "decision"): 1.1,
    ("decision", "decision"): 1.0,
    ("decision", "insight"): 0.9,
    ("checkpoint", "checkpoint"): 0.8,
}


def confidence_factor(memory: Rankable) -> float:
    """0.5 for confidence 0, 1.0 for confidence 1."""
    return 0.5 + 0.5 * memory.confidence


def outcome_factor(memory: Rankable) -> float:
    """The multiplier for the memory's outcome status."""
    return OUTCOME_FACTOR.get(memory.outcome_status, 1.0)


def recency_factor(memory: Rankable, now: int, boost: float = RECENCY_BOOST) -> float:
    """1 + 0.1 × 0.5 ** (age in days / 30) (``boost`` instead of 0.1 when given)."""
    age_days = max(0.0, (now - memory.created_at) / DAY_MS)
    return 1.0 + boost * math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def last_use_factor(memory: Rankable, now: int) -> float:
    """1 / (1 + days since last used / 30); a memory never used counts from its event time."""
    since = memory.last_used if memory.last_used is not None else memory.created_at
    return 1.0 / (1.0 + max(0.0, (now - since) / DAY_MS) / LAST_USE_DAYS)


def type_pair(top_type: str, linked_type: str) -> float:
    """The boost for a memory of ``linked_type`` linked to a top result of ``top_type``."""
    return TYPE_PAIR.get((top_type, linked_type), 1.0)


def usage_factor(memory: Rankable) -> float:
    """min(1.3, 1 + 0.1 × log2(1 + times_used))."""
    return min(USAGE_CAP, 1.0 + USAGE_WEIGHT * math.log2(1 + memory.times_used))


def adjusted(
    relevance: float,
    memory: Rankable,
    now: int,
    *,
    last_use: bool = False,
    recency_boost: float = RECENCY_BOOST,
) -> float:
    """The final score of a memory whose relevance to the question is ``relevance``.

    ``last_use`` measures recency from the last use (``last_use_factor``) instead.
    """
    recency = (
        last_use_factor(memory, now) if last_use else recency_factor(memory, now, recency_boost)
    )
    return (
        relevance
        * confidence_factor(memory)
        * outcome_factor(memory)
        * recency
        * usage_factor(memory)
    )


def ceiling(*, last_use: bool = False, recency_boost: float = RECENCY_BOOST) -> float:
    """The most :func:`adjusted` can multiply a positive relevance by (every factor at its
    largest: confidence 1, the best outcome, today, the usage cap). Retrieval stops reading
    candidates whose relevance times this cannot reach the ones it keeps."""
    recency = 1.0 if last_use else max(1.0, 1.0 + recency_boost)
    return max(1.0, *OUTCOME_FACTOR.values()) * recency * USAGE_CAP


def role(memory: Rankable) -> str:
    """How a result should be read: ``advice`` (current), ``lesson`` (failed), ``history``."""
    if memory.outcome_status == "FAILED":
        return "lesson"
    if memory.status == "superseded":
        return "history"
    return "advice"
