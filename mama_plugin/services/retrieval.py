"""Retrieval that tells the story: hybrid search, then the chain of how each answer came to be.

1. Candidates: FTS5 BM25 over topic, content and reasoning, and sqlite-vec KNN over the
   memories' embeddings, each ``CANDIDATES`` deep (vectors only when an embedder is given and
   vectors exist; memories not embedded yet are still found by keywords).
2. Fusion: ``bm25 / best bm25 + VECTOR_WEIGHT × cosine``. Score fusion, not reciprocal rank
   fusion: with MiniLM far weaker than BM25 on conversational recall, RRF's equal votes
   dragged results below BM25 alone (LoCoMo turn R@10 0.574 vs 0.607), while the weighted
   scores keep the keyword evidence and add the semantic one (0.657).
3. Session context: relevance flows to neighbouring memories of the same session and to the
   session's other memories (``_session_context``; 0.657 → 0.714).
4. Ranking: :mod:`ranking` adjusts each score by confidence, outcome, recency, usage.
Read-only. :mod:`answers` turns the ranked memories into what the search tools answer (the
graph expansion and the story to read).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ..storage import MemoryRecord, Store, now_ms
from . import ranking, vector_index

RETRIEVERS = ("keyword", "vector")
# Measured on LoCoMo-10 (docs/architecture.md, "Retrieval"): see the module docstring.
CANDIDATES = 400
VECTOR_WEIGHT = 2.0
NEIGHBOUR_WINDOW = 2
NEIGHBOUR_WEIGHT = 0.3
SESSION_WEIGHT = 0.2


class EmbeddingModel(Protocol):
    """What retrieval needs from an embedding model."""

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...


@dataclass(frozen=True)
class Scored:
    """A retrieved memory with its fused relevance, its final score and per-retriever ranks."""

    memory: MemoryRecord
    relevance: float
    score: float
    ranks: dict[str, int]


def retrieve(
    store: Store,
    query: str,
    *,
    embedder: EmbeddingModel | None = None,
    project: str | None = None,
    k: int = 10,
    retrievers: Sequence[str] = RETRIEVERS,
    min_confidence: float = 0.0,
    now: int | None = None,
    query_vector: Sequence[float] | None = None,
) -> list[Scored]:
    """The ``k`` best memories for ``query``, best first (no graph expansion).

    ``query_vector`` is ``query`` already embedded by ``embedder`` (it is not embedded again).
    """
    unknown = set(retrievers) - set(RETRIEVERS)
    if unknown:
        raise ValueError(f"unknown retrievers {sorted(unknown)}; use {RETRIEVERS}")
    depth = max(CANDIDATES, 4 * k)
    found: dict[str, list[tuple[int, float]]] = {}
    if "keyword" in retrievers:
        hits = store.search.text_ranks(query, project=project, limit=depth)
        top = max((score for _, score in hits), default=0.0) or 1.0
        found["keyword"] = [(seq, score / top) for seq, score in hits]
    if "vector" in retrievers and embedder is not None and query.strip():
        store.vectors.check_model(embedder.name, embedder.dim)
        if vector_index.has_vectors(store):
            if query_vector is None:
                query_vector = embedder.embed([query])[0]
            hits = vector_index.knn(store, query_vector, depth, project=project)
            found["vector"] = [(seq, VECTOR_WEIGHT * (1.0 - dist)) for seq, dist in hits]
    relevance: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for name, scored in found.items():
        for rank, (seq, value) in enumerate(scored, start=1):
            relevance[seq] = relevance.get(seq, 0.0) + value
            ranks.setdefault(seq, {})[name] = rank
    relevance = _session_context(store, relevance, project)
    fields = store.search.rank_fields(relevance)
    now = now if now is not None else now_ms()
    # Best score first; ties go to the newer memory, then the later row: one order for the
    # cut at k and for the answer.
    final = sorted(
        (
            (ranking.adjusted(relevance[seq], f, now), -f.created_at, seq)
            for seq, f in fields.items()
            if f.confidence >= min_confidence
        ),
        key=lambda row: (-row[0], row[1], -row[2]),
    )[:k]
    memories = store.memories.get_by_seq(seq for _, _, seq in final)
    return [
        Scored(memories[seq], relevance[seq], score, ranks.get(seq, {}))
        for score, _, seq in final
        if seq in memories
    ]


def _session_context(
    store: Store, relevance: dict[int, float], project: str | None
) -> dict[int, float]:
    """Let memories lend relevance to their neighbours in the same session.

    A memory saved next to a relevant one in the same session shares its context (an answer
    follows its question; a decision sits among the checkpoints that led to it). Each
    candidate adds ``NEIGHBOUR_WEIGHT × 0.5^(d-1) × its relevance`` to the memories ``d ≤ 2``
    places before and after it in its session; then every memory gains
    ``SESSION_WEIGHT × the best relevance in its session``.
    """
    sessions = store.search.session_order(relevance, project=project)
    if not sessions:
        return relevance
    where: dict[int, tuple[str, int]] = {
        seq: (session, i) for session, seqs in sessions.items() for i, seq in enumerate(seqs)
    }
    out = dict(relevance)
    for seq, value in relevance.items():
        if seq not in where:
            continue
        session, i = where[seq]
        members = sessions[session]
        for d in range(1, NEIGHBOUR_WINDOW + 1):
            share = NEIGHBOUR_WEIGHT * 0.5 ** (d - 1) * value
            for j in (i - d, i + d):
                if 0 <= j < len(members):
                    out[members[j]] = out.get(members[j], 0.0) + share
    best: dict[str, float] = {}
    for seq, value in out.items():
        if seq in where:
            session = where[seq][0]
            best[session] = max(best.get(session, 0.0), value)
    return {
        seq: value + (SESSION_WEIGHT * best[where[seq][0]] if seq in where else 0.0)
        for seq, value in out.items()
    }
