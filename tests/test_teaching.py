"""Outcomes that teach: expected vs happened, would-repeat, next time, the rejected alternative
offered after a failure, and what a project learned."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import PROJECT

from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.errors import ValidationError
from mama_plugin.schema import OutcomeInput, parse
from mama_plugin.services.learning.teaching import learned, next_move
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.services.saving.outcomes import record_outcome_event
from mama_plugin.storage import Store

JWT = {
    "topic": "auth",
    "decision": "Stateless JWT",
    "reasoning": {
        "primary": "no session store",
        "alternatives_considered": [
            {"option": "Server-side sessions in Redis", "rejected_because": "one more service"}
        ],
    },
    "confidence": 0.8,
}


def _judge(store: Store, memory_id: str, outcome: str, **more: object) -> object:
    data = {"memory_id": memory_id, "outcome": outcome, "details": "p99 307 ms"} | more
    return record_outcome_event(store, parse(OutcomeInput, data))


def test_an_outcome_keeps_expected_would_repeat_and_next_time(store: Store) -> None:
    jwt = save_decision(store, PROJECT, JWT).memory.id
    done = _judge(
        store,
        jwt,
        "FAILED",
        expected="p99 under 100 ms at 10K req/s",
        would_repeat="with modifications",
        next_time=["load test before choosing", "measure refresh separately"],
        learned=["refresh hits the DB"],
    )
    m = store.memories.require(jwt)
    assert m.outcome["expected"] == "p99 under 100 ms at 10K req/s"
    assert m.outcome["details"] == "p99 307 ms"  # what happened
    assert m.outcome["would_repeat"] == "with_modifications"
    assert m.outcome["next_time"] == ["load test before choosing", "measure refresh separately"]
    event = done.event  # type: ignore[attr-defined]
    assert "Expected: p99 under 100 ms at 10K req/s." in event.content
    assert "Would repeat: with modifications." in event.content
    assert "Next time: load test before choosing; measure refresh separately" in event.content


def test_would_repeat_takes_only_its_three_answers() -> None:
    with pytest.raises(ValidationError) as err:
        parse(OutcomeInput, {"memory_id": "dec_x", "outcome": "FAILED", "details": "d",
                             "would_repeat": "maybe"})  # fmt: skip
    assert "would_repeat" in str(err.value)
    ok = parse(OutcomeInput, {"memory_id": "dec_x", "outcome": "SUCCESS", "details": "d",
                              "would_repeat": "YES"})  # fmt: skip
    assert ok.would_repeat == "yes"


def test_after_a_failure_the_rejected_alternative_is_offered(store: Store) -> None:
    jwt = save_decision(store, PROJECT, JWT).memory.id
    bare = save_decision(
        store, PROJECT, {"topic": "db", "decision": "SQLite", "reasoning": {"primary": "simple"}}
    ).memory.id
    pending = store.memories.require(jwt)
    assert next_move(pending, pending) == ""  # no verdict yet
    _judge(store, jwt, "FAILED")
    failed = store.memories.require(jwt)
    offer = next_move(failed, failed)
    assert (
        "It had rejected 'Server-side sessions in Redis' (rejected then: one more service)" in offer
    )
    assert f"save_decision with supersedes={jwt}" in offer
    _judge(store, bare, "PARTIAL")
    partial = store.memories.require(bare)
    assert next_move(partial, partial).startswith("It names no alternative it rejected")
    redis = save_decision(
        store,
        PROJECT,
        {"topic": "auth", "decision": "Redis sessions", "reasoning": {"primary": "p99 41 ms"},
         "supersedes": jwt},
    ).memory  # fmt: skip
    replaced = store.memories.require(jwt)
    assert next_move(replaced, redis) == ""  # already replaced
    _judge(store, redis.id, "SUCCESS")
    won = store.memories.require(redis.id)
    assert next_move(won, won) == ""


def test_learned_sums_up_the_project(store: Store) -> None:
    jwt = save_decision(store, PROJECT, JWT).memory.id
    db = save_decision(
        store, PROJECT, {"topic": "db", "decision": "SQLite", "reasoning": {"primary": "simple"}}
    ).memory.id
    save_decision(store, "/other", {"topic": "x", "decision": "X", "reasoning": {"primary": "y"}})
    _judge(store, jwt, "FAILED", learned=["refresh hits the DB"], would_repeat="no",
           next_time=["load test first"])  # fmt: skip
    _judge(store, db, "SUCCESS", would_repeat="yes")
    found = learned(store, PROJECT)
    assert found.outcomes == {"FAILED": 1, "SUCCESS": 1} and found.judged == 2
    assert found.success_rate == 0.5
    assert found.would_repeat == {"no": 1, "yes": 1}
    assert {(x.kind, x.text, x.memory_id) for x in found.lessons} == {
        ("learned", "refresh hits the DB", jwt),
        ("next time", "load test first", jwt),
    }
    assert found.moves == 2  # each verdict moved its own decision
    assert learned(store, "/other").judged == 0


def test_mama_learned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli.db"
    with Store.open(db, config=Config()) as store:
        jwt = save_decision(store, PROJECT, JWT).memory.id
    base = ["--db", str(db), "learned", "--project", PROJECT]
    assert main(base) == 0
    assert "no outcome recorded in" in capsys.readouterr().out
    with Store.open(db, config=Config()) as store:
        _judge(store, jwt, "FAILED", learned=["refresh hits the DB"], would_repeat="no")
    assert main(base) == 0
    out = capsys.readouterr().out
    assert f"{PROJECT}: 1 outcome (1 FAILED), success rate 0%" in out
    assert "would repeat: no 1" in out and "confidence moves recorded: 1" in out
    assert f"- learned: refresh hits the DB ({jwt}, FAILED)" in out
    assert main([*base, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcomes"] == {"FAILED": 1} and data["success_rate"] == 0.0


def test_mama_show_tells_what_the_outcome_taught_and_how_confidence_moved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "cli.db"
    with Store.open(db, config=Config()) as store:
        jwt = save_decision(store, PROJECT, JWT).memory.id
        _judge(store, jwt, "FAILED", expected="p99 under 100 ms", would_repeat="no",
               next_time=["load test first"], learned=["refresh hits the DB"])  # fmt: skip
    assert main(["--db", str(db), "show", jwt]) == 0
    out = capsys.readouterr().out
    assert "- expected: p99 under 100 ms" in out and "- would repeat: no" in out
    assert "- next time: load test first" in out and "- learned: refresh hits the DB" in out
    assert "**Confidence moved:**" in out and ": 0.8 → 0.68, FAILED outcome" in out
    assert main(["--db", str(db), "show", jwt, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["to_value"] for c in data["confidence_history"]] == [pytest.approx(0.68)]
