"""The relevance composite of the design documents, as an alternative to ranking's factors. Pure.

    composite = 0.3 × recency + 0.2 × frequency + 0.35 × importance + 0.15 × context similarity

Every term is a number from 0 to 1 and the weights sum to 1, so the composite is one too:

- ``recency = 0.5 ** (age_days / 30)``: 1 today, 0.5 at a month (ranking's half-life), from
  the memory's event time to the search's "now".
- ``frequency = min(1, log2(1 + times_used) / 3)``: 0 never used, 1 from seven uses (where
  ranking's ``usage_factor`` reaches its cap).
- ``importance = 0.4 × confidence + 0.3 × outcome + 0.15 × hub + 0.15 × type``: ``outcome``
  SUCCESS 1, PENDING 0.5, PARTIAL 0.33, SUPERSEDED 0.17, FAILED 0 (ranking's outcome factors
  read on 0–1); ``hub`` 1 for a memory referenced by ``hubs.HUB_MIN`` or more others;
  ``type`` decision 1, insight 0.8, context 0.5, checkpoint 0.4.
- ``context similarity``: the memory's relevance to the question over the best candidate's
  (retrieval's fused keyword, vector and session score), 1 for the best match.

Two ways to rank with it (``retrieval.Options.scoring``; both measured by ``python -m
benchmarks relevance`` on LoCoMo and the recall sets beside ranking's factors, with each term
removed in turn):

- ``composite``: ``relevance × (0.5 + composite)``, the composite in place of ranking's
  confidence × outcome × recency × usage factors (at most ×1.5, at least ×0.5);
- ``formula``: the composite alone, as the design documents write it (the question's
  relevance weighs 0.15).

Neither is the default: the ``ranking`` setting stays ``factors`` because both lost on LoCoMo
(turn R@10 held-out 0.764 → 0.730 folded in, 0.142 alone; without recency level, 0.770, no
gain) and prompt recall did not move (README, "Relevance: the composite, measured"). A term is
removed by giving it weight 0 (:meth:`Weights.without`: the others scaled back up to sum 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from .ranking import DAY_MS, OUTCOME_FACTOR, RECENCY_HALF_LIFE_DAYS, Rankable

MODES = ("factors", "composite", "formula")
FREQUENCY_SATURATION = 7  # uses after which frequency is 1
IMPORTANCE_PARTS = {"confidence": 0.4, "outcome": 0.3, "hub": 0.15, "type": 0.15}
TYPE_IMPORTANCE = {"decision": 1.0, "insight": 0.8, "context": 0.5, "checkpoint": 0.4}
_LOW, _HIGH = min(OUTCOME_FACTOR.values()), max(OUTCOME_FACTOR.values())
OUTCOME_IMPORTANCE = {k: (v - _LOW) / (_HIGH - _LOW) for k, v in OUTCOME_FACTOR.items()}
FLOOR = 0.5  # ``composite`` mode multiplies relevance by FLOOR + composite


@dataclass(frozen=True)
class Weights:
    """The composite's four weights (they sum to 1)."""

    recency: float = 0.3
    frequency: float = 0.2
    importance: float = 0.35
    context: float = 0.15

    def total(self) -> float:
        """The sum of the weights."""
        return sum(getattr(self, f.name) for f in fields(self))

    def without(self, term: str) -> Weights:
        """These weights with ``term`` at 0 and the others scaled to sum 1 again.

        Raises ValueError for a name that is not a term."""
        if term not in TERMS:
            raise ValueError(f"unknown term {term!r}; use one of {', '.join(TERMS)}")
        left = replace(self, **{term: 0.0})
        scale = left.total()
        return Weights(*(getattr(left, t) / scale for t in TERMS))


TERMS = tuple(f.name for f in fields(Weights))
WEIGHTS = Weights()


@dataclass(frozen=True)
class Terms:
    """The four terms of one memory's composite, each from 0 to 1."""

    recency: float
    frequency: float
    importance: float
    context: float

    def weighed(self, weights: Weights = WEIGHTS) -> float:
        """The composite: each term times its weight, summed."""
        return sum(getattr(self, t) * getattr(weights, t) for t in TERMS)


def recency(memory: Rankable, now: int) -> float:
    """0.5 ** (age in days / 30): 1 today, 0.5 a month ago."""
    age_days = max(0.0, (now - memory.created_at) / DAY_MS)
    return math.pow(0.5, age_days / RECENCY_HALF_LIFE_DAYS)


def frequency(memory: Rankable) -> float:
    """min(1, log2(1 + times_used) / log2(1 + 7))."""
    return min(1.0, math.log2(1 + memory.times_used) / math.log2(1 + FREQUENCY_SATURATION))


def importance(memory: Rankable, *, hub: bool) -> float:
    """0.4 × confidence + 0.3 × outcome + 0.15 × hub + 0.15 × type (each 0–1)."""
    parts = {
        "confidence": min(1.0, max(0.0, memory.confidence)),
        "outcome": OUTCOME_IMPORTANCE.get(memory.outcome_status, OUTCOME_IMPORTANCE["PENDING"]),
        "hub": 1.0 if hub else 0.0,
        "type": TYPE_IMPORTANCE.get(memory.type, TYPE_IMPORTANCE["context"]),
    }
    return sum(IMPORTANCE_PARTS[k] * v for k, v in parts.items())


def terms(memory: Rankable, similarity: float, now: int, *, hub: bool = False) -> Terms:
    """The four terms of ``memory`` at ``now``; ``similarity``: its relevance over the best."""
    return Terms(
        recency(memory, now),
        frequency(memory),
        importance(memory, hub=hub),
        min(1.0, max(0.0, similarity)),
    )


def composite(
    memory: Rankable,
    similarity: float,
    now: int,
    *,
    hub: bool = False,
    weights: Weights = WEIGHTS,
) -> float:
    """0.3 × recency + 0.2 × frequency + 0.35 × importance + 0.15 × similarity (0–1)."""
    return terms(memory, similarity, now, hub=hub).weighed(weights)


def scored(
    mode: str,
    relevance: float,
    best: float,
    memory: Rankable,
    now: int,
    *,
    hub: bool = False,
    weights: Weights = WEIGHTS,
) -> float:
    """A candidate's final score in ``mode`` ``composite`` or ``formula`` (see the module
    docstring); ``best``: the best candidate's relevance. Raises ValueError for another mode."""
    similarity = relevance / best if best > 0 else 0.0
    value = composite(memory, similarity, now, hub=hub, weights=weights)
    if mode == "composite":
        return relevance * (FLOOR + value)
    if mode == "formula":
        return value
    raise ValueError(f"unknown relevance mode {mode!r}; use composite or formula")


def ceiling(mode: str) -> float:
    """The most :func:`scored` multiplies a positive relevance by (inf: not a multiple of it)."""
    return FLOOR + 1.0 if mode == "composite" else math.inf
