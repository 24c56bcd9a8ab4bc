"""The save path every surface uses: validate, check references, one transaction."""

from __future__ import annotations

import pytest

from mama_plugin.errors import ValidationError
from mama_plugin.services.evolution import chain, current_of
from mama_plugin.services.saving.memories import (
    record_outcome,
    save_checkpoint,
    save_context,
    save_decision,
    save_insight,
)
from mama_plugin.storage import Store


def _jwt(store: Store, project: str) -> str:
    return save_decision(store, project, {
        "topic": "auth_strategy", "decision": "JWT with refresh tokens",
        "reasoning": "stateless verification on every node",
    }).memory.id  # fmt: skip


def test_decision_maps_every_layer(store: Store, project: str) -> None:
    result = save_decision(store, project, {
        "topic": "db", "decision": "PostgreSQL", "reasoning": {"primary": "need transactions",
        "alternatives_considered": ["MongoDB"]}, "specifics": "pg 16", "evidence": "bench.txt:1-5",
        "tension": {"risks": "ops load"}, "next_steps": "set up backups", "confidence": 0.9, "tags": ["db"],
        "session_id": "sess-1",
    })  # fmt: skip
    m = result.memory
    assert (m.type, m.topic, m.content, m.confidence, m.session_id) == (
        "decision",
        "db",
        "PostgreSQL",
        0.9,
        "sess-1",
    )
    assert m.reasoning["alternatives_considered"] == [{"option": "MongoDB", "rejected_because": ""}]
    assert m.specifics == ["pg 16"] and m.evidence == [{"source": "bench.txt:1-5", "detail": ""}]
    assert m.continuity == {
        "next_steps": [{"step": "set up backups", "priority": "MEDIUM", "context": ""}]
    }
    assert m.tension["risks"] == ["ops load"]
    assert result.summary().startswith(f"Saved decision {m.id} on 'db'.")


def test_supersedes_creates_evolution_link_and_keeps_both(store: Store, project: str) -> None:
    old = _jwt(store, project)
    record_outcome(store, {"memory_id": old, "outcome": "FAILED", "details": "p99 307 ms at 10K req/s",
                           "learned": ["refresh paths hit the DB"]})  # fmt: skip
    new = save_decision(store, project, {"topic": "auth_strategy", "decision": "sessions in Redis",
                                         "reasoning": "JWT failed at 10K req/s", "supersedes": old})  # fmt: skip
    assert new.superseded == [old]
    assert "Superseded: " + old in new.summary()
    link = store.links.of(new.memory.id, direction="out")[0]
    assert (link.relationship, link.to_id, link.reason) == (
        "supersedes",
        old,
        "JWT failed at 10K req/s",
    )
    kept = store.memories.require(old)
    assert (kept.status, kept.outcome_status) == (
        "superseded",
        "FAILED",
    )  # the FAILED outcome stays
    assert current_of(store, old).id == new.memory.id
    assert [m.id for m in chain(store, old)] == [old, new.memory.id]


def test_superseding_a_pending_decision_records_superseded(store: Store, project: str) -> None:
    old = _jwt(store, project)
    save_decision(
        store, project, {"topic": "t", "decision": "d", "reasoning": "r", "supersedes": old}
    )
    assert store.memories.require(old).outcome_status == "SUPERSEDED"


def test_long_chain_order_and_current(store: Store, project: str) -> None:
    ids = [_jwt(store, project)]
    for i in range(4):
        ids.append(save_decision(store, project, {"topic": "auth_strategy", "decision": f"v{i}",
                                                  "reasoning": f"because {i}", "supersedes": ids[-1]}).memory.id)  # fmt: skip
    for memory_id in ids:
        assert [m.id for m in chain(store, memory_id)] == ids
        assert current_of(store, memory_id).id == ids[-1]
    assert [m.status for m in chain(store, ids[0])] == ["superseded"] * 4 + ["current"]


def test_invalid_input_writes_nothing(store: Store, project: str) -> None:
    old = _jwt(store, project)
    before = store.memories.counts()
    bad_inputs = [
        {"topic": "t", "decision": "d"},  # no reasoning
        {"topic": "t", "decision": "d", "reasoning": "r", "supersedes": "missing"},
        {"topic": "t", "decision": "d", "reasoning": "r", "links": [{"to_id": old, "relationship": "x", "reason": "ok"},
                                                                     {"to_id": "gone", "relationship": "x", "reason": "r"}]},
        {"topic": "t", "decision": "d", "reasoning": "r", "implements": ["nowhere"]},
        {"topic": "t", "decision": "d", "reasoning": "r", "confidence": 3},
    ]  # fmt: skip
    for data in bad_inputs:
        with pytest.raises(ValidationError):
            save_decision(store, project, data)
    assert store.memories.counts() == before
    assert store.memories.require(old).status == "current"


def test_unknown_ids_are_all_named_at_once(store: Store, project: str) -> None:
    with pytest.raises(ValidationError) as info:
        save_decision(store, project, {"topic": "t", "decision": "d", "reasoning": "r", "supersedes": "x1",
                                       "links": [{"to_id": "x2", "relationship": "refines", "reason": "r"}]})  # fmt: skip
    assert info.value.problems == [
        "supersedes: unknown id 'x1' — no memory has that id",
        "links[0].to_id: unknown id 'x2' — no memory has that id",
    ]


def test_only_a_decision_can_be_superseded(store: Store, project: str) -> None:
    note = save_insight(store, project, {"content": "a lesson"}).memory.id
    with pytest.raises(ValidationError, match="supersedes must name a decision"):
        save_decision(
            store, project, {"topic": "t", "decision": "d", "reasoning": "r", "supersedes": note}
        )


def test_checkpoint_insight_context(store: Store, project: str) -> None:
    decision = _jwt(store, project)
    cp = save_checkpoint(store, project, {"summary": "JWT wired", "what_was_done": "endpoints", "what_remains": ["load test"],
                                          "next_steps": [{"step": "run load test", "priority": "high"}],
                                          "open_files": ["src/auth.py"], "implements": [decision]}).memory  # fmt: skip
    assert cp.continuity["done"] == ["endpoints"] and cp.continuity["open_files"] == ["src/auth.py"]
    assert cp.continuity["next_steps"][0]["priority"] == "HIGH"
    assert [(ln.relationship, ln.to_id) for ln in store.links.of(cp.id, direction="out")] == [
        ("implements", decision)
    ]
    insight = save_insight(store, project, {"content": "measure first", "links": [
        {"to_id": decision, "relationship": "learned from", "reason": "the load test"}]}).memory  # fmt: skip
    assert store.links.of(insight.id, direction="out")[0].relationship == "learned_from"
    context = save_context(
        store, project, {"content": "the team is two people", "tags": "team"}
    ).memory
    assert (context.type, context.tags) == ("context", ["team"])


def test_masked_secrets_are_reported_in_the_answer(store: Store, project: str) -> None:
    result = save_decision(store, project, {"topic": "t", "decision": "use key sk-ant-api03-" + "k" * 30,
                                            "reasoning": "password=abc12345 works <private>secret</private>"})  # fmt: skip
    assert result.redactions.counts == {"api_key": 1, "assigned_secret": 1, "private_block": 1}
    assert "Masked 3 secret(s)" in result.summary()


def test_record_outcome_validation(store: Store, project: str) -> None:
    with pytest.raises(ValidationError, match="unknown memory_id"):
        record_outcome(store, {"memory_id": "nope", "outcome": "SUCCESS", "details": "ok"})
    decision = _jwt(store, project)
    done = record_outcome(
        store, {"memory_id": decision, "outcome": "partial", "details": "works below 5K req/s"}
    )
    assert (done.outcome_status, done.outcome["details"]) == ("PARTIAL", "works below 5K req/s")


def test_superseding_a_replaced_decision_names_the_current_one(store: Store, project: str) -> None:
    old = _jwt(store, project)
    new = save_decision(store, project, {"topic": "auth_strategy", "decision": "sessions",
                                         "reasoning": "refresh load", "supersedes": old}).memory.id  # fmt: skip
    with pytest.raises(
        ValidationError, match=f"already replaced by {new}.*supersede {new} instead"
    ):
        save_decision(store, project, {"topic": "auth_strategy", "decision": "paseto",
                                       "reasoning": "r", "supersedes": old})  # fmt: skip
    assert [m.status for m in chain(store, old)] == ["superseded", "current"]


def test_unknown_implements_ids_are_named_by_their_field(store: Store, project: str) -> None:
    with pytest.raises(ValidationError) as info:
        save_checkpoint(store, project, {"summary": "s", "implements": ["ghost"],
                                         "links": [{"to_id": "gone", "relationship": "r", "reason": "x"}]})  # fmt: skip
    assert info.value.problems == [
        "links[0].to_id: unknown id 'gone' — no memory has that id",
        "implements[0].to_id: unknown id 'ghost' — no memory has that id",
    ]


def test_superseded_is_not_an_outcome_to_record_by_hand(store: Store, project: str) -> None:
    with pytest.raises(ValidationError, match="save_decision with supersedes="):
        record_outcome(
            store, {"memory_id": _jwt(store, project), "outcome": "superseded", "details": "d"}
        )
