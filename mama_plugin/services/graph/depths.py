"""How far each query walks the graph: its own limit, never past the global cap.

One row per query that expands the graph, with what it walks and why that far. Every walk
of these queries reads its depth here; :data:`~.graph.MAX_DEPTH` caps any walk whatever it
asks. What is *current* is not a walk with a depth: a superseded memory is always told with
the decision that stands now, however many replacements away
(:func:`~.evolution.current_of` follows ``supersedes`` to the end).
"""

from __future__ import annotations

from dataclasses import dataclass

from .traverse import MAX_DEPTH


@dataclass(frozen=True)
class DepthLimit:
    """One query's depth: how many hops it walks, along what, and why that far."""

    query: str
    hops: int
    walks: str
    why: str


LIMITS: tuple[DepthLimit, ...] = (
    DepthLimit(
        "search_by_topic",
        3,
        "evolution links from the topic's memories to memories of other topics",
        "a decision re-filed under a new topic is still the topic's story; three "
        "re-filings away it is another question",
    ),
    DepthLimit(
        "search_by_context",
        5,
        "each result's evolution chain, back from the decision that stands now",
        "the chain is the answer's 'how it came to be': five replacements tell the story, "
        "older steps are one load_context away",
    ),
    DepthLimit(
        "load_context",
        2,
        "every link around the memory (the default; a call may ask up to the global cap)",
        "what led to it and what it led to, and one step beyond; more is asked for",
    ),
)
DEPTH: dict[str, int] = {limit.query: min(limit.hops, MAX_DEPTH) for limit in LIMITS}
TOPIC_DEPTH = DEPTH["search_by_topic"]
CONTEXT_DEPTH = DEPTH["search_by_context"]
LOAD_DEPTH = DEPTH["load_context"]
