"""What a save may contradict or repeat: the topic's standing decision, a near-duplicate."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import DESKTOP, JWT, SESSIONS, connect
from conftest import text_result as text

from mama_plugin.assist import suggest
from mama_plugin.embeddings.embedder import Embedder
from mama_plugin.schema import DecisionInput, InsightInput, parse
from mama_plugin.server.state import State
from mama_plugin.services.evolution import current_of
from mama_plugin.services.saving import duplicates
from mama_plugin.services.saving.checks import decide, learn
from mama_plugin.services.search import indexing
from mama_plugin.storage import Store

LEAK = "Session-scoped pytest fixtures leak database connections between tests"
LEAK_AGAIN = "pytest fixtures with session scope leak DB connections across tests"
CI_KEY = "The CI cache key must include the lockfile hash, or stale wheels are reused"
KO = "캐시 만료 시간은 10분으로 정한다"
KO_AGAIN = "캐시 만료 시간을 10분으로 설정한다"


def _decide(store: Store, project: str, fields: dict[str, Any], embedder: Any = None) -> Any:
    return decide(store, project, parse(DecisionInput, fields), embedder=embedder)


def _learn(store: Store, project: str, content: str, embedder: Any = None) -> Any:
    return learn(store, project, parse(InsightInput, {"content": content}), embedder=embedder)


# -- contradictions ----------------------------------------------------------------------


def test_a_second_decision_on_a_topic_is_kept_and_names_the_current_one(
    store: Store, project: str
) -> None:
    jwt = _decide(store, project, JWT)
    assert jwt.questions == [] and "already has" not in jwt.summary()
    sessions = _decide(store, project, SESSIONS)
    [question] = sessions.questions
    assert question.current.id == jwt.memory.id
    said = sessions.summary()
    assert f"'auth_strategy' already has current decision {jwt.memory.id}" in said
    assert f"evolve_link suggestion_id={question.suggestion_id}" in said
    for choice in ("verdict=accept", "relationship=refines", "verdict=reject"):
        assert choice in said
    # Nothing is lost and nothing is decided for Claude: both stand, the question waits.
    assert store.memories.require(jwt.memory.id).status == "current"
    assert store.memories.require(sessions.memory.id).status == "current"
    [pending] = store.suggestions.of_project(project, status="pending")
    assert (pending.from_id, pending.to_id) == (sessions.memory.id, jwt.memory.id)


def test_accepting_the_question_supersedes_the_current_decision(store: Store, project: str) -> None:
    jwt = _decide(store, project, JWT)
    sessions = _decide(store, project, SESSIONS)
    _, link = suggest.accept(store, sessions.questions[0].suggestion_id, decided_by="claude")
    assert link.relationship == "supersedes" and link.reason == SESSIONS["reasoning"]
    assert store.memories.require(jwt.memory.id).status == "superseded"
    assert current_of(store, jwt.memory.id).id == sessions.memory.id
    third = _decide(store, project, {**SESSIONS, "decision": "Redis sessions, 30 min TTL"})
    assert [q.current.id for q in third.questions] == [sessions.memory.id]


def test_refines_keeps_both_current_and_the_next_save_asks_about_the_refining_one(
    store: Store, project: str
) -> None:
    jwt = _decide(store, project, JWT)
    sessions = _decide(store, project, SESSIONS)
    _, link = suggest.accept(
        store,
        sessions.questions[0].suggestion_id,
        decided_by="claude",
        relationship="refines",
        reason="adds server-side sessions for refresh",
    )
    assert (link.relationship, link.link_category) == ("refines", "evolution")
    assert store.memories.require(jwt.memory.id).status == "current"
    assert store.memories.require(sessions.memory.id).status == "current"
    third = _decide(store, project, {**SESSIONS, "decision": "Redis sessions, 30 min TTL"})
    assert [q.current.id for q in third.questions] == [sessions.memory.id]


def test_reject_keeps_both_and_links_nothing(store: Store, project: str) -> None:
    jwt = _decide(store, project, JWT)
    sessions = _decide(store, project, SESSIONS)
    suggest.reject(store, sessions.questions[0].suggestion_id, decided_by="claude")
    assert store.links.of(sessions.memory.id, direction="out") == []
    assert store.memories.require(jwt.memory.id).status == "current"
    assert store.suggestions.of_project(project, status="pending") == []


@pytest.mark.parametrize(
    ("relation", "relationship", "old_status"),
    [("supersedes", "supersedes", "superseded"), ("refines", "refines", "current")],
)
def test_relation_up_front_links_the_standing_decision_and_asks_nothing(
    store: Store, project: str, relation: str, relationship: str, old_status: str
) -> None:
    jwt = _decide(store, project, JWT)
    sessions = _decide(store, project, {**SESSIONS, "relation": relation.upper()})
    assert sessions.questions == []
    assert [(ln.to_id, ln.relationship) for ln in sessions.links] == [(jwt.memory.id, relationship)]
    assert store.memories.require(jwt.memory.id).status == old_status
    assert store.suggestions.of_project(project, status=None) == []


def test_coexists_or_supersedes_asks_nothing_and_other_topics_are_not_asked(
    store: Store, project: str
) -> None:
    jwt = _decide(store, project, JWT)
    both = _decide(store, project, {**SESSIONS, "relation": "coexists"})
    assert both.questions == [] and both.links == []
    assert store.memories.require(jwt.memory.id).status == "current"
    named = _decide(store, project, {**SESSIONS, "supersedes": both.memory.id})
    assert named.questions == []
    assert _decide(store, project, {**JWT, "topic": "rate_limits"}).questions == []
    assert _decide(store, "/elsewhere", JWT).questions == []


def test_two_standing_decisions_are_each_asked_with_their_own_suggestion(
    store: Store, project: str
) -> None:
    jwt = _decide(store, project, JWT)
    both = _decide(store, project, {**SESSIONS, "relation": "coexists"})
    third = _decide(store, project, {**SESSIONS, "decision": "Opaque tokens in Postgres"})
    assert [q.current.id for q in third.questions] == [both.memory.id, jwt.memory.id]
    said = third.summary()
    for q in third.questions:
        assert f"{q.current.id} '" in said and f"(#{q.suggestion_id})" in said
    assert "suggestion_id=<#>" in said


@pytest.mark.anyio
async def test_the_question_and_each_choice_through_the_tools(state: State) -> None:
    async with connect(state, DESKTOP) as c:
        jwt = (await c.call_tool("save_decision", JWT)).structured_content["id"]  # type: ignore[index]
        saved = await c.call_tool("save_decision", SESSIONS)
        data = saved.structured_content or {}
        assert not saved.is_error and f"already has current decision {jwt}" in text(saved)
        [question] = data["questions"]
        assert question["current_id"] == jwt
        linked = await c.call_tool(
            "evolve_link", {"suggestion_id": question["suggestion_id"], "verdict": "accept"}
        )
        assert not linked.is_error and "--supersedes-->" in text(linked)
        assert state.store.memories.require(jwt).status == "superseded"


# -- near-duplicates ---------------------------------------------------------------------


def _embedded(store: Store, embedder: Embedder) -> None:
    indexing.drain(store, embedder)


def test_a_near_duplicate_insight_is_answered_with_the_existing_one(
    store: Store, project: str, embedder: Embedder
) -> None:
    first = _learn(store, project, LEAK, embedder)
    assert first.duplicate is None  # nothing embedded yet to repeat
    _embedded(store, embedder)
    again = _learn(store, project, LEAK_AGAIN, embedder)
    assert again.duplicate is not None and again.duplicate.memory.id == first.memory.id
    assert again.duplicate.cosine >= duplicates.bar(embedder.name)  # type: ignore[operator]
    said = again.summary()
    assert f"Looks like {first.memory.id} (cosine 0." in said
    assert f"update_memory {first.memory.id} and forget_memory {again.memory.id}" in said
    # Kept all the same: Claude decides.
    assert store.memories.get(again.memory.id) is not None


def test_unrelated_memories_other_types_and_other_projects_are_not_claimed(
    store: Store, project: str, embedder: Embedder
) -> None:
    _learn(store, project, LEAK, embedder)
    _learn(store, "/elsewhere", LEAK_AGAIN, embedder)
    _embedded(store, embedder)
    assert _learn(store, project, CI_KEY, embedder).duplicate is None
    fields = {"topic": "tests", "decision": LEAK_AGAIN, "reasoning": "they hold connections"}
    decision = _decide(store, project, fields, embedder)
    assert decision.duplicate is None  # the insight it repeats is not a decision
    elsewhere = _learn(store, "/third", LEAK_AGAIN, embedder)
    assert elsewhere.duplicate is None


def test_without_a_warm_embedder_nothing_is_checked(
    store: Store, project: str, embedder: Embedder
) -> None:
    _learn(store, project, LEAK, embedder)
    _embedded(store, embedder)
    assert _learn(store, project, LEAK_AGAIN, None).duplicate is None


def test_korean_is_never_claimed_by_minilm(store: Store, project: str, embedder: Embedder) -> None:
    a, b = embedder.embed([KO, KO_AGAIN])
    at = duplicates.bar(embedder.name)
    assert at is not None and sum(x * y for x, y in zip(a, b, strict=True)) >= at  # it would be
    _learn(store, project, KO, embedder)
    _embedded(store, embedder)
    assert _learn(store, project, KO_AGAIN, embedder).duplicate is None
    assert (
        duplicates.nearest(store, embedder, project=project, kind="insight", text=KO_AGAIN) is None
    )


def test_a_decision_repeating_a_current_one_is_claimed_not_one_it_replaces(
    store: Store, project: str, embedder: Embedder
) -> None:
    base = {"decision": LEAK, "reasoning": "each test gets a fresh connection"}
    old = _decide(store, project, {**base, "topic": "test_db"}, embedder)
    _embedded(store, embedder)
    again = _decide(store, project, {**base, "topic": "fixtures", "decision": LEAK_AGAIN}, embedder)
    assert again.duplicate is not None and again.duplicate.memory.id == old.memory.id
    # One that replaces it on purpose is not a copy of it.
    fields = {**base, "topic": "test_db", "decision": LEAK_AGAIN, "supersedes": old.memory.id}
    assert _decide(store, project, fields, embedder).duplicate is None


class _Broken:
    """The real model's name and size, but every call fails (llama.cpp out of memory, say)."""

    name, dim = "all-MiniLM-L6-v2", 384

    def embed(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError("llama_decode returned -3")


def test_a_check_that_fails_leaves_the_save_standing(
    store: Store, project: str, embedder: Embedder
) -> None:
    _learn(store, project, LEAK, embedder)
    _embedded(store, embedder)
    again = _learn(store, project, LEAK_AGAIN, _Broken())
    assert again.duplicate is None and store.memories.get(again.memory.id) is not None
    assert "Saved insight" in again.summary()


def test_only_a_model_measured_on_korean_claims_korean_duplicates() -> None:
    assert duplicates.bar("all-MiniLM-L6-v2", korean=True) is None
    assert duplicates.bar("multilingual-e5-small-q4") is None
    # EmbeddingGemma reads Korean, but KLUE-STS pairs people score as different reach 0.951.
    assert duplicates.bar("embeddinggemma-300m") == 0.875
    assert duplicates.bar("embeddinggemma-300m", korean=True) == 0.95
