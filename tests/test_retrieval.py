"""search_by_context: fusion, labelling, chains, ranking formula, scoping, model mismatch.

The fusion and ranking logic is tested with a small deterministic bag-of-words embedder, so a
failure points at our code; the real GGUF model is exercised in test_embeddings.py and by the
benchmark.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mama_plugin.services.saving.memories import (
    record_outcome,
    save_checkpoint,
    save_decision,
    save_insight,
)
from mama_plugin.services.search import ranking
from mama_plugin.services.search.indexing import drain, reindex
from mama_plugin.services.search.options import VECTOR_WEIGHT
from mama_plugin.services.search.retrieval import retrieve
from mama_plugin.services.story.answers import search_by_context
from mama_plugin.services.story.browsing import search_by_topic, search_recent
from mama_plugin.storage import RankFields, Store
from mama_plugin.storage.vectors import EmbeddingMismatchError

DAY = 86_400_000


class BagOfWords:
    """A deterministic embedder: hashed word counts, L2-normalised."""

    def __init__(self, dim: int = 32, name: str = "bag-of-words") -> None:
        self.dim, self.name = dim, name

    def embed(self, texts: list[str]) -> list[list[float]]:
        out = []
        for text in texts:
            v = [0.0] * self.dim
            for word in re.findall(r"\w+", text.lower()):
                v[int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dim] += 1.0
            norm = math.sqrt(sum(x * x for x in v)) or 1.0
            out.append([x / norm for x in v])
        return out


def decide(store: Store, project: str, text: str, **extra) -> str:
    data = {
        "topic": extra.pop("topic", "t"),
        "decision": text,
        "reasoning": extra.pop("why", "because"),
    }
    return save_decision(store, project, {**data, **extra}).memory.id


def test_keyword_search_works_before_anything_is_embedded(store: Store, project: str) -> None:
    m = decide(store, project, "Use PostgreSQL for orders")
    assert store.vectors.count_pending() == 1
    result = search_by_context(store, "postgresql orders", embedder=BagOfWords(), project=project)
    assert result.ids() == [m] and result.retrievers == ["keyword"]


def test_queue_is_drained_and_vectors_found(store: Store, project: str) -> None:
    ids = [decide(store, project, f"decision number {w}") for w in ("alpha", "beta", "gamma")]
    assert drain(store, BagOfWords(), batch_size=2) == 3
    assert store.vectors.count_pending() == 0 and store.vectors.count() == 3
    result = search_by_context(store, "zzz gamma", embedder=BagOfWords(), project=project,
                               retrievers=("vector",))  # fmt: skip
    assert result.ids()[0] == ids[2] and result.retrievers == ["vector"]
    store.memories.update(ids[0], content="rewritten text")
    assert store.vectors.count_pending() == 1  # an edit queues a fresh embedding


def test_fusion_prefers_what_both_retrievers_found(store: Store, project: str) -> None:
    both = decide(store, project, "redis session store latency")
    keyword_only = decide(store, project, "redis")
    embedder = BagOfWords(dim=8)
    drain(store, embedder)
    query = "redis session store latency"
    hits = retrieve(store, query, embedder=embedder, project=project)
    assert hits[0].memory.id == both and set(hits[0].ranks) == {"keyword", "vector"}
    # relevance = bm25 / best bm25 + VECTOR_WEIGHT × cosine (no session: no session context)
    distance = dict(store.vectors.knn(embedder.embed([query])[0], 5, project=project))
    expected = 1.0 + VECTOR_WEIGHT * (1.0 - distance[store.memories.require(both).seq])
    assert hits[0].relevance == pytest.approx(expected, rel=1e-5)
    assert keyword_only in [h.memory.id for h in hits]


def test_session_neighbours_share_relevance(store: Store, project: str) -> None:
    """An answer saved right after its question is found by the question's words."""
    turns = ["Caroline: what did you paint last weekend?", "Melanie: a lake sunrise, in oils",
             "Caroline: lovely", "Melanie: thanks", "Caroline: see you", "Melanie: bye"]  # fmt: skip
    ids = [save_insight(store, project, {"content": t, "session_id": "s1"}, created_at=1000 + i).memory.id
           for i, t in enumerate(turns)]  # fmt: skip
    loner = save_insight(store, project, {"content": "an unrelated note"}).memory.id
    hits = retrieve(store, "paint weekend", project=project, k=10)
    order = [h.memory.id for h in hits]
    assert order[:2] == [ids[0], ids[1]]  # the question, then the answer that shares no word
    assert loner not in order  # no session, no keyword match: nothing lends it relevance
    sessionless = save_insight(store, "/solo", {"content": "paint weekend plans"}).memory.id
    solo = retrieve(store, "paint weekend", project="/solo")
    assert [h.memory.id for h in solo] == [sessionless] and solo[0].relevance == pytest.approx(1.0)


def test_model_mismatch_says_run_reindex(store: Store, project: str) -> None:
    decide(store, project, "something")
    drain(store, BagOfWords(dim=32, name="model-a"))
    with pytest.raises(EmbeddingMismatchError, match="run `mama reindex`"):
        search_by_context(store, "something", embedder=BagOfWords(dim=16, name="model-b"))
    assert reindex(store, BagOfWords(dim=16, name="model-b")) == 1
    assert store.vectors.recorded_model() == ("model-b", 16)
    assert search_by_context(store, "something", embedder=BagOfWords(16, "model-b")).retrievers == [
        "keyword",
        "vector",
    ]


def test_superseded_hit_brings_its_successor_above_it(store: Store, project: str) -> None:
    jwt = decide(store, project, "JWT tokens for gateway auth", topic="auth")
    record_outcome(store, {"memory_id": jwt, "outcome": "FAILED", "details": "p99 307 ms",
                           "learned": "refresh paths hit the DB"})  # fmt: skip
    sessions = decide(
        store, project, "Redis sessions", topic="auth", supersedes=jwt, why="refresh load"
    )
    result = search_by_context(store, "JWT gateway", project=project)
    assert result.ids()[:2] == [sessions, jwt]
    first, second = result.primary_results[:2]
    assert (first.status, first.role) == ("current", "advice")
    assert (second.status, second.current_id, second.role) == (
        "superseded",
        sessions,
        "lesson",
    )
    chain = result.evolution[0]
    assert [s.id for s in chain.steps] == [jwt, sessions]
    assert chain.steps[0].failure_reason == "p99 307 ms" and chain.steps[0].led_to == sessions
    assert result.learned_patterns == ["refresh paths hit the DB"]
    assert (
        "JWT tokens for gateway auth (FAILED: p99 307 ms) → Redis sessions"
        in result.narrative_summary
    )
    # The chain tells the failure; the story does not tell it twice.
    assert result.narrative_summary.count("p99 307 ms") == 1


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(plan=st.lists(st.tuples(st.integers(0, 9), st.sampled_from(["cache", "auth", "queue"])), min_size=1, max_size=12),
       query=st.sampled_from(["cache", "auth", "queue", "cache auth", "decision"]), k=st.integers(1, 6))  # fmt: skip
def test_a_superseded_decision_never_appears_without_its_successor(
    store: Store, plan, query, k
) -> None:
    project = f"/prop/{len(store.memories.counts()['by_project'])}"
    made: list[str] = []
    for target, word in plan:
        data = {"topic": word, "decision": f"{word} decision {len(made)}", "reasoning": "r"}
        if made and target % 2:
            candidate = made[target % len(made)]
            if store.memories.require(candidate).status == "current":  # a replaced one is refused
                data["supersedes"] = candidate
        made.append(save_decision(store, project, data).memory.id)
    results = search_by_context(store, query, project=project, k=k).primary_results
    assert len(results) <= k
    seen: set[str] = set()
    for item in results:
        if item.status == "superseded":
            assert item.current_id in seen, "successor must come first"
            assert store.memories.require(item.current_id).status == "current"
        seen.add(item.id)


def test_implementation_neighbours_come_with_a_decision(store: Store, project: str) -> None:
    d = decide(store, project, "adopt event sourcing")
    cp = save_checkpoint(
        store, project, {"summary": "event store wired", "implements": [d]}
    ).memory.id
    item = search_by_context(store, "event sourcing", project=project).primary_results[0]
    assert item.id == d
    assert [(r.id, r.relationship, r.direction) for r in item.related or []] == [
        (cp, "implements", "in")
    ]


def test_layers_are_included_on_request(store: Store, project: str) -> None:
    decide(
        store,
        project,
        "adopt kafka",
        evidence=["bench/kafka.txt:1-9"],
        tension={"risks": ["ops load"]},
    )
    full = search_by_context(store, "kafka", project=project).primary_results[0]
    assert full.evidence and (full.tension or {})["risks"] == ["ops load"]
    bare = search_by_context(store, "kafka", project=project, include_evidence=False,
                             include_tensions=False, include_evolution=False)  # fmt: skip
    assert bare.primary_results[0].evidence is None and bare.primary_results[0].tension is None


def test_scoping_and_min_confidence(store: Store, project: str) -> None:
    guess = decide(store, project, "shared word here", confidence=0.2)
    other = decide(store, "/other", "shared word there", confidence=0.9)
    # By default a guess (confidence < 0.5) is left out.
    assert search_by_context(store, "shared word", project=project).ids() == []
    assert search_by_context(store, "shared word").ids() == [other]
    everything = search_by_context(store, "shared word", min_confidence=0.0)
    assert sorted(everything.ids()) == sorted([guess, other])
    assert search_by_context(store, "shared word", project=project, min_confidence=0.0).ids() == [
        guess
    ]
    assert search_by_context(store, "shared word", min_confidence=0.5).ids() == [other]


def test_usage_is_recorded_only_when_asked(store: Store, project: str) -> None:
    m = decide(store, project, "counted memory")
    search_by_context(store, "counted", project=project, record_usage=False)
    assert store.memories.require(m).times_used == 0
    search_by_context(store, "counted", project=project)
    assert store.memories.require(m).times_used == 1


def _same_text_pair(store: Store, project: str, **second) -> tuple[str, str]:
    a = decide(store, project, "identical words for ranking")
    b = decide(store, project, "identical words for ranking", **second)
    return a, b


def test_ranking_failed_is_below_an_equal_success(store: Store, project: str) -> None:
    a, b = _same_text_pair(store, project)
    record_outcome(store, {"memory_id": a, "outcome": "FAILED", "details": "broke"})
    record_outcome(store, {"memory_id": b, "outcome": "SUCCESS", "details": "held"})
    assert search_by_context(store, "identical ranking", project=project).ids() == [b, a]


def test_ranking_confidence_recency_and_usage(store: Store, project: str) -> None:
    low, high = (
        decide(store, project, "same text ranking", confidence=0.3),
        decide(store, project, "same text ranking", confidence=0.9),
    )
    assert retrieve(store, "same text ranking", project=project)[0].memory.id == high
    old = save_insight(store, "/r", {"content": "recency words"}, created_at=1).memory.id
    new = save_insight(store, "/r", {"content": "recency words"}).memory.id
    assert [h.memory.id for h in retrieve(store, "recency words", project="/r")] == [new, old]
    plain = save_insight(store, "/u", {"content": "usage words"}, created_at=5).memory.id
    used = save_insight(store, "/u", {"content": "usage words"}, created_at=5).memory.id
    for _ in range(7):
        store.memories.touch([used])
    assert retrieve(store, "usage words", project="/u")[0].memory.id == used
    assert plain in [h.memory.id for h in retrieve(store, "usage words", project="/u")]
    assert low in [h.memory.id for h in retrieve(store, "same text ranking", project=project)]


def test_ranking_formula_values(store: Store, project: str) -> None:
    m = store.memories.require(decide(store, project, "x", confidence=1.0))
    now = m.created_at
    assert ranking.confidence_factor(m) == 1.0
    assert ranking.recency_factor(m, now) == pytest.approx(1.1)
    assert ranking.recency_factor(m, now + 30 * DAY) == pytest.approx(1.05)
    assert ranking.usage_factor(m) == 1.0
    assert ranking.adjusted(0.5, m, now) == pytest.approx(0.5 * 1.0 * 1.0 * 1.1 * 1.0)
    assert (
        ranking.OUTCOME_FACTOR["FAILED"]
        < ranking.OUTCOME_FACTOR["PENDING"]
        < ranking.OUTCOME_FACTOR["SUCCESS"]
    )


def test_search_by_topic_and_recent(store: Store, project: str) -> None:
    a = decide(store, project, "v1", topic="db")
    b = decide(store, project, "v2", topic="db", supersedes=a)
    decide(store, project, "other", topic="cache")
    chain = search_by_topic(store, "db", project=project)
    assert [(c.id, c.status, c.current_id) for c in chain] == [
        (b, "current", b),
        (a, "superseded", b),
    ]
    assert [m.content for m in search_recent(store, 2, project=project)] == ["other", "v2"]
    assert [m.content for m in search_recent(store, 5, type="checkpoint", project=project)] == []


def test_nothing_found_tells_so(store: Store) -> None:
    result = search_by_context(store, "nothing at all", project="/empty")
    assert (
        result.ids() == []
        and 'Nothing in memory matches "nothing at all".' in result.narrative_summary
    )


def test_plans_for_a_superseded_decision_no_longer_remain(store: Store, project: str) -> None:
    old = decide(store, project, "JWT auth for the gateway")
    save_checkpoint(store, project, {"summary": "JWT auth wired in the gateway", "implements": [old],
                                     "next_steps": ["load test the JWT refresh path"]})  # fmt: skip
    result = search_by_context(store, "gateway auth", project=project)
    assert [s.step for s in result.status.next_steps] == ["load test the JWT refresh path"]
    decide(store, project, "sessions for the gateway auth", supersedes=old,
           next_steps=["set up Redis HA"])  # fmt: skip
    result = search_by_context(store, "gateway auth", project=project)
    assert [s.step for s in result.status.next_steps] == ["set up Redis HA"]


@settings(max_examples=200, deadline=None)
@given(
    confidence=st.floats(0.0, 1.0),
    outcome=st.sampled_from([*ranking.OUTCOME_FACTOR, "OTHER"]),
    age_days=st.floats(0.0, 3650.0),
    used=st.integers(0, 10_000),
    boost=st.floats(0.0, 1.0),
    last_use=st.booleans(),
)
def test_the_ceiling_bounds_every_adjustment(
    confidence: float, outcome: str, age_days: float, used: int, boost: float, last_use: bool
) -> None:
    now = 1_800_000_000_000
    fields = RankFields(1, confidence, outcome, "current", now - int(age_days * DAY), used,
                        "decision", None, "/p")  # fmt: skip
    most = ranking.ceiling(last_use=last_use, recency_boost=boost)
    assert ranking.adjusted(1.0, fields, now, last_use=last_use, recency_boost=boost) <= most


def test_reading_candidates_by_relevance_keeps_the_ranking(
    store: Store, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scoring stops at candidates that cannot reach the window: the same results as scoring
    every candidate, with outcomes, use counts, dates, sessions and filters in play."""
    rng = random.Random(7)
    words = ["cache", "queue", "redis", "postgres", "latency", "retry", "billing", "deploy",
             "auth", "token"]  # fmt: skip
    start = 1_700_000_000_000
    for i in range(120):
        text = " ".join(rng.sample(words, 3)) + f" note {i}"
        at = start + rng.randrange(400) * DAY
        if i % 4 == 3:
            save_checkpoint(store, project, {"summary": text, "session_id": f"s{i % 9}"},
                            created_at=at)  # fmt: skip
            continue
        memory_id = save_decision(store, project, {
            "topic": rng.choice(words), "decision": text, "reasoning": "because " + text,
            "confidence": round(rng.random(), 2), "session_id": f"s{i % 9}"},
            created_at=at).memory.id  # fmt: skip
        if i % 5 == 0:
            record_outcome(store, {"memory_id": memory_id,
                                   "outcome": rng.choice(["SUCCESS", "FAILED", "PARTIAL"]),
                                   "details": "measured"})  # fmt: skip
        if i % 7 == 0:
            store.memories.touch([memory_id] * 3)
    embedder = BagOfWords()
    reindex(store, embedder)
    now = start + 500 * DAY
    date = time.strftime("%d %B, %Y", time.gmtime((start + 100 * DAY) / 1000))
    asks = [
        ({"query": "redis cache latency"}),
        ({"query": "billing retry", "min_confidence": 0.5}),
        ({"query": f"what did we deploy on {date}", "k": 3}),
        ({"query": "auth token queue", "exclude_types": ["checkpoint"]}),
        ({"query": "postgres note", "k": 25}),
    ]
    scored: list[int] = []
    real = ranking.adjusted
    ceiling = ranking.ceiling

    def counted(*args: object, **kwargs: object) -> float:
        scored.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ranking, "adjusted", counted)

    def ranked(prune: bool) -> list[list[tuple[str, float, str | None]]]:
        monkeypatch.setattr(ranking, "ceiling", ceiling if prune else lambda **_: math.inf)
        return [[(h.memory.id, h.score, h.updated_by) for h in retrieve(
            store, embedder=embedder, project=project, as_of=now, **ask)] for ask in asks]  # type: ignore[arg-type]  # fmt: skip

    whole = ranked(prune=False)
    scored_whole = len(scored)
    scored.clear()
    assert ranked(prune=True) == whole and all(whole)
    assert len(scored) < scored_whole  # the pruned path ran: fewer candidates scored
