"""The relevance composite: its weights, worked examples, and each term moving a result its way."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from mama_plugin.cli import main
from mama_plugin.schema.queries import instant_ms
from mama_plugin.services.learning.hubs import HUB_MIN
from mama_plugin.services.saving.memories import save_context, save_decision, save_insight
from mama_plugin.services.search import relevance
from mama_plugin.services.search.options import DEFAULT, Options, options_for
from mama_plugin.services.search.relevance import TERMS, WEIGHTS, Terms
from mama_plugin.services.search.retrieval import retrieve
from mama_plugin.storage import RankFields, Store

DAY = 86_400_000
T0 = instant_ms("2024-01-01")
COMPOSITE = replace(DEFAULT, scoring="composite", updates=False)
FORMULA = replace(DEFAULT, scoring="formula", updates=False)


def fields(**extra: object) -> RankFields:
    base: dict[str, object] = {
        "seq": 1,
        "confidence": 0.8,
        "outcome_status": "SUCCESS",
        "status": "current",
        "created_at": T0,
        "times_used": 3,
        "type": "decision",
    }
    return RankFields(**(base | extra))  # type: ignore[arg-type]


def test_the_weights_sum_to_one_and_a_removed_term_leaves_the_rest_summing_to_one() -> None:
    assert (WEIGHTS.recency, WEIGHTS.frequency, WEIGHTS.importance, WEIGHTS.context) == (
        0.3,
        0.2,
        0.35,
        0.15,
    )
    assert WEIGHTS.total() == pytest.approx(1.0)
    assert sum(relevance.IMPORTANCE_PARTS.values()) == pytest.approx(1.0)
    for term in TERMS:
        left = WEIGHTS.without(term)
        assert getattr(left, term) == 0.0 and left.total() == pytest.approx(1.0)
    # Without recency, the other three keep their proportions: 0.2 / 0.7, 0.35 / 0.7, 0.15 / 0.7.
    left = WEIGHTS.without("recency")
    assert [getattr(left, t) for t in TERMS] == pytest.approx([0.0, 2 / 7, 0.5, 3 / 14])
    with pytest.raises(ValueError, match="unknown term 'age'"):
        WEIGHTS.without("age")


def test_a_worked_example_term_by_term() -> None:
    # A SUCCESS decision at confidence 0.8, used 3 times, a month old, half as relevant as
    # the best candidate.
    memory = fields()
    now = T0 + 30 * DAY
    terms = relevance.terms(memory, 0.5, now)
    assert terms.recency == pytest.approx(0.5)  # one half-life
    assert terms.frequency == pytest.approx(2 / 3)  # log2(4) / log2(8)
    assert terms.importance == pytest.approx(0.4 * 0.8 + 0.3 * 1.0 + 0.15 * 0 + 0.15 * 1.0)
    assert terms.context == 0.5
    expected = 0.3 * 0.5 + 0.2 * (2 / 3) + 0.35 * 0.77 + 0.15 * 0.5
    assert relevance.composite(memory, 0.5, now) == pytest.approx(expected)  # 0.6278
    assert relevance.scored("composite", 2.0, 4.0, memory, now) == pytest.approx(
        2.0 * (0.5 + expected)
    )
    assert relevance.scored("formula", 2.0, 4.0, memory, now) == pytest.approx(expected)
    # A hub: importance gains 0.15, the composite 0.35 × 0.15.
    assert relevance.composite(memory, 0.5, now, hub=True) == pytest.approx(expected + 0.35 * 0.15)
    with pytest.raises(ValueError, match="unknown relevance mode"):
        relevance.scored("factors", 1.0, 1.0, memory, now)


@pytest.mark.parametrize("term", TERMS)
def test_each_term_moves_the_composite_by_its_weight(term: str) -> None:
    low = Terms(0.2, 0.2, 0.2, 0.2)
    high = replace(low, **{term: 0.7})
    assert high.weighed() - low.weighed() == pytest.approx(0.5 * getattr(WEIGHTS, term))
    assert high.weighed(WEIGHTS.without(term)) == pytest.approx(low.weighed(WEIGHTS.without(term)))


def test_each_term_is_at_most_one_and_at_least_zero() -> None:
    best = fields(confidence=1.0, times_used=500, created_at=T0)
    assert relevance.composite(best, 3.0, T0, hub=True) == pytest.approx(1.0)
    worst = fields(confidence=0.0, times_used=0, outcome_status="FAILED", type="checkpoint")
    assert relevance.terms(worst, -1.0, T0 + 10_000 * DAY).context == 0.0
    assert relevance.composite(worst, 0.0, T0 + 10_000 * DAY) == pytest.approx(0.15 * 0.4 * 0.35)


def _twins(
    store: Store, project: str, text: str, older: dict[str, object] | None = None,
    newer: dict[str, object] | None = None,
) -> tuple[str, str]:  # fmt: skip
    """Two memories saying ``text``: the second a day newer; each with its own fields."""
    a = save_context(store, project, {"content": text, **(older or {})}, created_at=T0)
    b = save_context(store, project, {"content": text, **(newer or {})}, created_at=T0 + DAY)
    return a.memory.id, b.memory.id


def _scores(store: Store, project: str, query: str, options: Options, now: int) -> dict[str, float]:
    hits = retrieve(store, query, project=project, as_of=now, options=options)
    return {h.memory.id: h.score for h in hits}


def test_recency_ranks_the_newer_memory_higher_and_only_it(store: Store, project: str) -> None:
    old, new = _twins(store, project, "the deploy window is Tuesday")
    now = T0 + 2 * DAY
    with_it = _scores(store, project, "deploy window", COMPOSITE, now)
    assert with_it[new] > with_it[old]
    without = _scores(
        store, project, "deploy window", replace(COMPOSITE, weights=WEIGHTS.without("recency")), now
    )
    assert without[new] == pytest.approx(without[old])


def test_frequency_ranks_the_memory_used_more_higher(store: Store, project: str) -> None:
    used, unused = _twins(store, project, "the staging database is db-stage-2")
    for _ in range(7):
        store.memories.touch([used])
    now = T0 + 2 * DAY
    query = "staging database"
    with_it = retrieve(store, query, project=project, as_of=now, options=COMPOSITE)
    assert [h.memory.id for h in with_it] == [used, unused]
    plain = retrieve(
        store, query, project=project, as_of=now,
        options=replace(COMPOSITE, weights=WEIGHTS.without("frequency")),
    )  # fmt: skip
    assert [h.memory.id for h in plain] == [unused, used]  # the newer one, recency alone


def test_importance_ranks_the_confident_memory_and_the_hub_higher(
    store: Store, project: str
) -> None:
    sure, unsure = _twins(
        store, project, "queue retries back off exponentially", {"confidence": 0.95},
        {"confidence": 0.3},
    )  # fmt: skip
    now = T0 + 2 * DAY
    query = "queue retries back off"
    assert [h.memory.id for h in retrieve(store, query, project=project, as_of=now,
                                          options=COMPOSITE)] == [sure, unsure]  # fmt: skip
    no_importance = replace(COMPOSITE, weights=WEIGHTS.without("importance"))
    hits = retrieve(store, query, project=project, as_of=now, options=no_importance)
    assert [h.memory.id for h in hits] == [unsure, sure]


def test_a_hub_ranks_higher_in_the_composite_and_with_the_hub_boost(
    store: Store, project: str
) -> None:
    hub = save_decision(
        store,
        project,
        {"topic": "alpha", "decision": "Cache sessions in Redis",
         "reasoning": {"primary": "p99 307 ms at 10K req/s"}},
    ).memory.id  # fmt: skip
    other = save_decision(
        store,
        project,
        {"topic": "beta", "decision": "Cache sessions in Redis",
         "reasoning": {"primary": "p99 307 ms at 10K req/s"}},
    ).memory.id  # fmt: skip
    for i in range(HUB_MIN):
        save_insight(
            store,
            project,
            {
                "topic": f"reader {i}",
                "content": f"service {i} reads the session store",
                "links": [{"to_id": hub, "relationship": "depends_on", "reason": "reads it"}],
            },
        )
    seqs = [store.memories.require(i).seq for i in (hub, other)]
    assert store.references.hub_seqs(seqs, HUB_MIN) == {seqs[0]}
    query = "Cache sessions in Redis"
    # Ties go to the newer memory: without the hub, the other one comes first.
    plain = replace(DEFAULT, updates=False, hub_boost=0.0)
    factors = retrieve(store, query, project=project, options=plain)
    assert [h.memory.id for h in factors][:2] == [other, hub]
    boosted = retrieve(store, query, project=project, options=replace(DEFAULT, updates=False))
    assert DEFAULT.hub_boost == 0.2  # hubs rank higher by default
    assert [h.memory.id for h in boosted][:2] == [hub, other]
    assert boosted[0].score == pytest.approx(1.2 * factors[1].score)
    composite = retrieve(store, query, project=project, options=COMPOSITE)
    assert [h.memory.id for h in composite][:2] == [hub, other]


def test_context_similarity_ranks_the_better_match_higher(store: Store, project: str) -> None:
    close = save_context(
        store, project, {"content": "rotate the signing keys every 90 days"}, created_at=T0
    ).memory.id
    far = save_context(
        store, project, {"content": "the signing ceremony is on Friday"}, created_at=T0
    ).memory.id
    query = "rotate signing keys every 90 days"
    now = T0 + DAY
    with_it = _scores(store, project, query, FORMULA, now)
    assert with_it[close] > with_it[far]
    # The formula without context similarity: the question no longer tells them apart.
    blind = _scores(
        store, project, query, replace(FORMULA, weights=WEIGHTS.without("context")), now
    )
    assert blind[close] == pytest.approx(blind[far])


def test_the_ranking_setting_chooses_the_scoring(mama_home: object) -> None:
    assert options_for("factors") is DEFAULT
    assert options_for("composite").scoring == "composite"
    assert main(["config", "set", "ranking", "composite"]) == 0
    assert main(["config", "set", "ranking", "weighted"]) == 1


def test_search_reads_the_ranking_setting(store: Store, project: str, capsys) -> None:  # type: ignore[no-untyped-def]
    save_context(store, project, {"content": "the release train leaves on Mondays"})
    store.close()
    assert main(["config", "set", "ranking", "formula"]) == 0
    capsys.readouterr()
    assert main(["search", "release train", "--project", project, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    score = found["primary_results"][0]["score"]
    assert 0 < score <= 1  # the composite alone: never above 1


def test_the_best_match_has_context_similarity_one(store: Store, project: str) -> None:
    only = save_context(
        store, project, {"content": "the build cache lives on the CI runner"}, created_at=T0
    ).memory
    now = T0 + DAY
    (hit,) = retrieve(store, "build cache on the CI runner", project=project, as_of=now,
                      options=FORMULA)  # fmt: skip
    assert hit.memory.id == only.id
    assert hit.score == pytest.approx(relevance.composite(only, 1.0, now))
