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
   A day or month the question names (:mod:`dates`) multiplies the relevance of the memories
   dated then by ``1 + DATE_BOOST`` (LoCoMo turn R@10 0.713 → 0.734).
4. Ranking: :mod:`ranking` adjusts each score by confidence, outcome, recency, usage, with
   time measured at ``as_of`` from each memory's event time; memories dated after ``as_of``
   did not exist yet and are left out. A hub (referenced by ``hubs.HUB_MIN`` or more others)
   gains ``HUB_BOOST``. ``Options.scoring`` can put :mod:`relevance`'s composite in place of
   the factors (measured in ``python -m benchmarks relevance``; off: it lost on LoCoMo).
5. Signals (:mod:`signals`): a later version of the same fact ranks above the older one, which
   is marked as updated; optionally, links to the top result and type pairs.
``Options`` holds every choice the ablation in the ``retrieval`` benchmark measures; ``DEFAULT``
is what the figures kept. Read-only. :mod:`answers` turns the ranked memories into what the
search tools answer (the graph expansion and the story to read).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...embeddings.protocol import EmbeddingModel, query_vector_of
from ...storage import MemoryRecord, RankFields, Scope, Store, now_ms
from ...text import PREFIX, content_words
from ..learning.hubs import HUB_MIN
from . import dates, ranking, signals, vector_index
from .options import (
    DEFAULT,
    SCALES,
    Options,
)
from .relevance import ceiling as composite_ceiling
from .relevance import scored as composite_scored

RETRIEVERS = ("keyword", "vector")
HUB_DEPTH = 400  # the most relevant candidates whose hub status ranking reads
# search_by_context leaves out guesses by default: below even odds. (The design documents say
# 0.6, but v1.0 stored 0.5 for every memory saved without a confidence, its column default:
# at 0.6 the search tool silently hid most imported v1.0 decisions.)
MIN_CONFIDENCE = 0.5


@dataclass(frozen=True)
class Scored:
    """A retrieved memory with its fused relevance, its final score and per-retriever ranks.

    ``updated_by`` names a later memory stating the same fact (``signals.later_versions``).
    """

    memory: MemoryRecord
    relevance: float
    score: float
    ranks: dict[str, int]
    updated_by: str | None = field(default=None)


def retrieve(
    store: Store,
    query: str,
    *,
    embedder: EmbeddingModel | None = None,
    project: Scope = None,
    k: int = 10,
    retrievers: Sequence[str] = RETRIEVERS,
    min_confidence: float = 0.0,
    as_of: int | None = None,
    tags: Sequence[str] = (),
    query_vector: Sequence[float] | None = None,
    options: Options = DEFAULT,
    exclude_types: Sequence[str] = (),
    neighbours: Sequence[tuple[int, float]] | None = None,
    words: Sequence[str] | None = None,
) -> list[Scored]:
    """The ``k`` best memories for ``query``, best first (no graph expansion).

    ``exclude_types``: memories of these types are left out before the cut at ``k`` (they
    still lend relevance to their session's neighbours).

    ``as_of`` is the search's "now" in ms (default: the wall clock): recency is measured at it
    and memories dated after it are left out. ``tags``: only memories carrying every one.
    ``query_vector`` is ``query`` already embedded by ``embedder`` (it is not embedded again);
    ``neighbours``, its nearest memories as :func:`.vector_index.knn` gives them, at least as
    deep as the vector search reads (they are not searched again); ``words``, ``query``'s
    terms already read (:func:`~mama_plugin.storage.fts.query_words`: not read again).
    """
    unknown = set(retrievers) - set(RETRIEVERS)
    if options.scale not in SCALES:
        raise ValueError(f"unknown scale {options.scale!r}; use {SCALES}")
    if unknown:
        raise ValueError(f"unknown retrievers {sorted(unknown)}; use {RETRIEVERS}")
    found: dict[str, list[tuple[int, float]]] = {}
    if "keyword" in retrievers:
        depth = max(options.keyword_depth, 4 * k)
        asked = query if words is None else words
        hits = store.search.text_ranks(asked, project=project, limit=depth)
        top = max((score for _, score in hits), default=0.0) or 1.0
        scaled = _minmax(hits) if options.scale == "minmax" else [(s, v / top) for s, v in hits]
        found["keyword"] = [(seq, options.keyword_weight * score) for seq, score in scaled]
    if "vector" in retrievers and embedder is not None and query.strip():
        store.vectors.check_model(embedder.name, embedder.dim)
        if vector_index.has_vectors(store):
            if query_vector is None:
                query_vector = query_vector_of(embedder, query)
            depth = max(options.vector_depth, 4 * k)
            if neighbours is not None:
                hits = list(neighbours[:depth])
            else:
                hits = vector_index.knn(store, query_vector, depth, project=project)
            cosines = [(seq, 1.0 - dist) for seq, dist in hits]
            scaled = _minmax(cosines) if options.scale == "minmax" else cosines
            found["vector"] = [(seq, options.vector_weight * cosine) for seq, cosine in scaled]
    relevance: dict[int, float] = {}
    for scored in found.values():
        for seq, value in scored:
            relevance[seq] = relevance.get(seq, 0.0) + value
    if options.expand_terms and "keyword" in retrievers and relevance:
        _expand(store, query, relevance, project, options)
    fields = store.search.rank_fields(relevance)  # kept in memory between searches
    relevance = _session_context(store, relevance, fields, project, options)
    now = as_of if as_of is not None else now_ms()
    size = max(2 * k, 20)  # the window near the cut at k, which the signals may reorder
    fields, scores, bar = _scored(
        store,
        query,
        relevance,
        fields,
        size,
        now,
        min_confidence=min_confidence,
        tags=tags,
        exclude_types=exclude_types,
        options=options,
    )
    # Best score first; ties go to the newer memory, then the later row: one order for the
    # cut at k and for the answer. Only scores at the window's lowest can be in it.
    near = [seq for seq, score in scores.items() if score >= bar]
    order = sorted(near, key=lambda seq: (-scores[seq], -fields[seq].created_at, -seq))
    window = order[:size]
    if options.links or options.type_pairs:
        signals.boost_linked(store, window, scores, fields, now, options.links, options.type_pairs)
    updated: dict[int, int] = {}
    if options.updates:
        # The question's words as the index read them (a Korean stem without its prefix mark).
        said = content_words(query) if words is None else [w.removesuffix(PREFIX) for w in words]
        updated = signals.later_versions(store, said, window, scores, fields)
    final = sorted(window, key=lambda seq: (-scores[seq], -fields[seq].created_at, -seq))[:k]
    memories = store.memories.get_by_seq([*final, *(updated[s] for s in final if s in updated)])
    ranks = _ranks(found, final)
    return [
        Scored(
            memories[seq],
            relevance[seq],
            scores[seq],
            ranks.get(seq, {}),
            memories[updated[seq]].id if seq in updated and updated[seq] in memories else None,
        )
        for seq in final
        if seq in memories
    ]


def _minmax(hits: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """``hits``' scores from their lowest (0) to their highest (1); all equal: 1 each."""
    if not hits:
        return []
    low, high = min(v for _, v in hits), max(v for _, v in hits)
    span = high - low
    return [(seq, (value - low) / span if span > 0 else 1.0) for seq, value in hits]


def _ranks(
    found: dict[str, list[tuple[int, float]]], seqs: Sequence[int]
) -> dict[int, dict[str, int]]:
    """Where each of ``seqs`` ranked in each retriever's list (1 = first)."""
    wanted = set(seqs)
    out: dict[int, dict[str, int]] = {}
    for name, scored in found.items():
        for rank, (seq, _) in enumerate(scored, start=1):
            if seq in wanted:
                out.setdefault(seq, {})[name] = rank
    return out


def _scored(
    store: Store,
    query: str,
    relevance: dict[int, float],
    fields: dict[int, RankFields],
    size: int,
    now: int,
    *,
    min_confidence: float,
    tags: Sequence[str],
    exclude_types: Sequence[str],
    options: Options,
) -> tuple[dict[int, RankFields], dict[int, float], float]:
    """The ranking fields of the candidates, the final scores of those that can reach the best
    ``size``, and the lowest score among the best ``size`` (-inf when fewer were scored).

    ``fields`` holds those of the candidates the retrievers found; those session context
    added are read here (all of them again with ``tags``: only the memories carrying them).

    Candidates are scored in order of relevance until the next one's relevance times the most
    ranking can add (:func:`ranking.ceiling`, the hub and date boosts) falls below the ``size``-th
    best score so far: no candidate left could enter the window, so the window is the one
    scoring every candidate gives. (Session context spreads relevance to hundreds of
    memories; most of them never come near the cut.)
    """
    named = dates.spans(query) if options.date_boost else []
    order = sorted(relevance, key=lambda seq: -relevance[seq])
    # Hubs among the candidates ranking can reach (the deepest ones never near the cut).
    hubs = store.references.hub_seqs(order[:HUB_DEPTH], HUB_MIN) if options.needs_hubs() else set()
    if options.scoring == "factors":
        most = ranking.ceiling(last_use=options.last_use, recency_boost=options.recency_boost)
        most *= (1.0 + max(0.0, options.hub_boost)) if hubs else 1.0
    else:
        most = composite_ceiling(options.scoring)
    lift = (1.0 + max(0.0, options.date_boost)) if named else 1.0
    most *= lift
    # The best relevance any candidate can have once dated (context similarity's 1).
    best = relevance[order[0]] * lift if order else 0.0
    if any(t.strip() for t in tags):
        fields = store.search.rank_fields(order, tags=tags)
    elif len(fields) < len(order):
        fields = {**fields, **store.search.rank_fields(s for s in order if s not in fields)}
    scores: dict[int, float] = {}
    kept: list[float] = []  # the best ``size`` scores so far, a min-heap
    for seq in order:
        left = relevance[seq]
        if len(kept) >= size and (left * most if left > 0 else 0.0) < kept[0]:
            break
        f = fields.get(seq)
        if f is None:  # gone, or without the tags asked for
            continue
        if named and dates.within(f.created_at, named):
            relevance[seq] *= 1.0 + options.date_boost
        if f.confidence < min_confidence or f.created_at > now or f.type in exclude_types:
            continue
        score = _score(relevance[seq], best, f, now, seq in hubs, options)
        scores[seq] = score
        if len(kept) < size:
            heapq.heappush(kept, score)
        elif score > kept[0]:
            heapq.heapreplace(kept, score)
    return fields, scores, kept[0] if len(kept) >= size else -math.inf


def _score(
    value: float, best: float, fields: RankFields, now: int, hub: bool, options: Options
) -> float:
    """One candidate's final score: ranking's factors, or the relevance composite."""
    if options.scoring != "factors":
        return composite_scored(
            options.scoring, value, best, fields, now, hub=hub, weights=options.weights
        )
    score = ranking.adjusted(
        value, fields, now, last_use=options.last_use, recency_boost=options.recency_boost
    )
    return score * (1.0 + options.hub_boost) if hub else score


def _session_context(
    store: Store,
    relevance: dict[int, float],
    fields: dict[int, RankFields],
    project: Scope,
    options: Options = DEFAULT,
) -> dict[int, float]:
    """Let memories lend relevance to their neighbours in the same session.

    A memory saved next to a relevant one in the same session shares its context (an answer
    follows its question; a decision sits among the checkpoints that led to it). Each
    candidate adds ``NEIGHBOUR_WEIGHT × 0.5^(d-1) × its relevance`` to the memories ``d ≤ 2``
    places before and after it in its session; then every memory gains
    ``SESSION_WEIGHT × the best relevance in its session`` (with ``options.session_top`` = n:
    the mean of its n best).
    """
    sessions = store.search.sessions(
        (fields[seq].session_id for seq in relevance if seq in fields), project=project
    )
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
        for d in range(1, options.neighbour_window + 1):
            share = options.neighbour_weight * 0.5 ** (d - 1) * value
            for j in (i - d, i + d):
                if 0 <= j < len(members):
                    out[members[j]] = out.get(members[j], 0.0) + share
    tops: dict[str, list[float]] = {}
    for seq, value in out.items():
        if seq in where:
            tops.setdefault(where[seq][0], []).append(value)
    n = max(1, options.session_top)
    best = {session: sum(sorted(v, reverse=True)[:n]) / n for session, v in tops.items()}
    return {
        seq: value + (options.session_weight * best[where[seq][0]] if seq in where else 0.0)
        for seq, value in out.items()
    }


def _expand(
    store: Store, query: str, relevance: dict[int, float], project: Scope, options: Options
) -> None:
    """Pseudo-relevance feedback: query again with the words the best candidates share."""
    best = sorted(relevance, key=lambda seq: -relevance[seq])[: options.expand_docs]
    asked = set(content_words(query))
    counts: dict[str, int] = {}
    for topic, content in store.search.texts(best).values():
        for word in set(content_words(f"{topic} {content}", min_length=3)) - asked:
            counts[word] = counts.get(word, 0) + 1
    shared = sorted((w for w, n in counts.items() if n >= 2), key=lambda w: -counts[w])
    terms = shared[: options.expand_terms]
    if not terms:
        return
    hits = store.search.text_ranks(terms, project=project, limit=options.keyword_depth)
    top = max((score for _, score in hits), default=0.0) or 1.0
    for seq, score in hits:
        relevance[seq] = relevance.get(seq, 0.0) + options.expand_weight * score / top
