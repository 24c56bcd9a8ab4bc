"""Confidence learned from outcomes: the judged memory, its linked memories, the history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from conftest import DESKTOP, PROJECT, connect
from conftest import text_result as text

from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.schema import OutcomeInput, parse
from mama_plugin.services.learning.confidence import judged, learn_pass
from mama_plugin.services.saving.memories import save_decision, save_insight
from mama_plugin.services.saving.outcomes import record_outcome_event
from mama_plugin.storage import Store

if TYPE_CHECKING:
    from mama_plugin.server.state import State


def _decision(store: Store, text: str, confidence: float, **extra: object) -> str:
    data = {"topic": "auth", "decision": text, "reasoning": {"primary": f"because {text}"}}
    return save_decision(store, PROJECT, data | {"confidence": confidence} | extra).memory.id


def _outcome(store: Store, memory_id: str, outcome: str, details: str = "measured") -> object:
    args = parse(OutcomeInput, {"memory_id": memory_id, "outcome": outcome, "details": details})
    return record_outcome_event(store, args)


@pytest.mark.parametrize(
    ("before", "outcome", "after"),
    [
        (0.80, "SUCCESS", 0.84),  # the design's worked example
        (0.50, "SUCCESS", 0.60),
        (1.00, "SUCCESS", 1.00),
        (0.80, "FAILED", 0.68),
        (0.00, "FAILED", 0.00),
        (0.80, "PARTIAL", 0.80),
        (0.80, "VERIFIED", 0.80),
    ],
)
def test_the_judged_memory_moves_by_the_formula(before: float, outcome: str, after: float) -> None:
    assert judged(before, outcome) == pytest.approx(after)


def test_worked_example_success_lifts_the_decision_and_half_to_what_builds_on_it(
    store: Store,
) -> None:
    base = _decision(store, "Use sessions in Redis", 0.80)
    built = _decision(
        store,
        "Cache session lookups",
        0.70,
        topic="cache",
        links=[{"to_id": base, "relationship": "depends_on", "reason": "reads the sessions"}],
    )
    far = _decision(
        store,
        "Warm the cache at deploy",
        0.50,
        topic="deploy",
        links=[{"to_id": built, "relationship": "refines", "reason": "fills that cache"}],
    )
    unrelated = _decision(
        store,
        "Log in JSON",
        0.60,
        topic="logs",
        links=[{"to_id": base, "relationship": "relates_to", "reason": "mentions sessions"}],
    )
    done = _outcome(store, base, "SUCCESS", "p99 12 ms at 10k req/s")
    got = {m: store.memories.require(m).confidence for m in (base, built, far, unrelated)}
    assert got[base] == pytest.approx(0.84)
    assert got[built] == pytest.approx(0.72)  # +0.02: half of +0.04
    assert got[far] == pytest.approx(0.51)  # +0.01: a quarter, two hops away
    assert got[unrelated] == pytest.approx(0.60)  # relates_to carries no trust
    assert [(c.memory_id, c.hops) for c in done.changes] == [(base, 0), (built, 1), (far, 2)]
    history = store.confidence.of(built)
    assert len(history) == 1
    row = history[0]
    assert (row.from_value, row.trigger_id, row.hops) == (0.70, base, 1)
    assert row.to_value == pytest.approx(0.72)
    assert "SUCCESS outcome of " + base in row.why and "depends_on" in row.why


def test_failure_lowers_what_was_built_on_it_and_not_what_replaced_it(store: Store) -> None:
    base = _decision(store, "JWT with refresh tokens", 0.80)
    built = _decision(
        store,
        "Token refresh in the gateway",
        0.70,
        topic="gateway",
        links=[{"to_id": base, "relationship": "motivated_by", "reason": "refresh tokens"}],
    )
    replacement = _decision(store, "Server sessions", 0.70, supersedes=base)
    _outcome(store, base, "FAILED", "p99 307 ms at 10K req/s")
    assert store.memories.require(base).confidence == pytest.approx(0.68)
    assert store.memories.require(built).confidence == pytest.approx(0.64)  # -0.06
    assert store.memories.require(replacement).confidence == pytest.approx(0.70)
    assert store.confidence.of(replacement) == []


def test_partial_and_verified_record_the_judgement_without_moving_anything(
    store: Store,
) -> None:
    base = _decision(store, "Shard by tenant", 0.75)
    built = _decision(
        store,
        "Tenant router",
        0.70,
        topic="router",
        links=[{"to_id": base, "relationship": "implements", "reason": "routes the shards"}],
    )
    _outcome(store, base, "PARTIAL", "two tenants too big")
    _outcome(store, base, "VERIFIED", "still sharded by tenant")
    rows = store.confidence.of(base)
    assert [(r.from_value, r.to_value) for r in rows] == [(0.75, 0.75), (0.75, 0.75)]
    assert [r.why for r in rows] == ["PARTIAL outcome", "verified against the code"]
    assert store.confidence.of(built) == []
    assert store.memories.require(built).confidence == 0.70


def test_checkpoints_and_the_outcome_event_do_not_move(store: Store) -> None:
    base = _decision(store, "Use SQLite", 0.80)
    lesson = save_insight(
        store,
        PROJECT,
        {
            "topic": "db",
            "content": "WAL mode needs a busy timeout",
            "links": [{"to_id": base, "relationship": "depends_on", "reason": "SQLite"}],
            "confidence": 0.6,
        },
    ).memory.id
    done = _outcome(store, base, "FAILED", "locks under load")
    event = done.event.id  # type: ignore[attr-defined]
    assert store.memories.require(event).confidence == 0.7  # outcome_of carries nothing
    assert store.memories.require(lesson).confidence == pytest.approx(0.54)


def test_learn_replays_outcomes_recorded_without_it_once(store: Store) -> None:
    base = _decision(store, "Queue jobs in Postgres", 0.80)
    built = _decision(
        store,
        "Retry jobs with backoff",
        0.60,
        topic="jobs",
        links=[{"to_id": base, "relationship": "depends_on", "reason": "the queue"}],
    )
    # Recorded the way an import or an older MAMA did: the verdict, no confidence move.
    store.memories.set_outcome(base, "SUCCESS", details="1k jobs/s")
    assert store.memories.require(base).confidence == 0.80
    first = learn_pass(store)
    assert first.since is None and first.considered == 1 and len(first.applied) == 1
    assert store.memories.require(base).confidence == pytest.approx(0.84)
    assert store.memories.require(built).confidence == pytest.approx(0.62)
    again = learn_pass(store)
    assert again.since == first.at and again.applied == [] and again.changes == []
    assert store.memories.require(base).confidence == pytest.approx(0.84)
    assert len(store.confidence.of(base)) == 1


def test_learn_does_not_apply_again_what_recording_applied(store: Store) -> None:
    base = _decision(store, "Use Redis", 0.80)
    _outcome(store, base, "FAILED", "SPOF in staging")
    assert learn_pass(store).applied == []
    assert store.memories.require(base).confidence == pytest.approx(0.68)


def test_a_second_outcome_moves_from_where_the_first_left_it(store: Store) -> None:
    base = _decision(store, "Use gRPC", 0.80)
    _outcome(store, base, "SUCCESS", "fast")
    _outcome(store, base, "FAILED", "browser clients cannot call it")
    rows = store.confidence.of(base)
    assert [round(r.to_value, 4) for r in rows] == [0.84, 0.714]
    assert rows[1].from_value == pytest.approx(0.84)


def test_history_goes_with_its_memory(store: Store) -> None:
    base = _decision(store, "Use Kafka", 0.80)
    _outcome(store, base, "SUCCESS", "held")
    store.memories.delete(base)
    count = store.conn.execute("SELECT count(*) FROM confidence_history").fetchone()[0]
    assert count == 0


def test_history_says_no_memory_text(store: Store) -> None:
    base = _decision(store, "Use a secret-free design", 0.80)
    built = _decision(
        store,
        "Rotate keys weekly",
        0.70,
        topic="keys",
        links=[{"to_id": base, "relationship": "depends_on", "reason": "design"}],
    )
    _outcome(store, base, "FAILED", "nope")
    rows = store.conn.execute("SELECT why FROM confidence_history").fetchall()
    assert rows and all("Rotate" not in r[0] and "secret-free" not in r[0] for r in rows)
    assert json.dumps([c.as_dict() for c in store.confidence.of(built)])


# -- the surfaces -------------------------------------------------------------------------


def _cli_store(tmp_path: Path) -> tuple[Path, str, str]:
    path = tmp_path / "cli.db"
    with Store.open(path, config=Config()) as store:
        base = _decision(store, "Use sessions in Redis", 0.80)
        built = _decision(
            store,
            "Cache session lookups",
            0.70,
            topic="cache",
            links=[{"to_id": base, "relationship": "depends_on", "reason": "reads sessions"}],
        )
        # Recorded the way an import or an older MAMA did: the verdict, no confidence move.
        store.memories.set_outcome(base, "SUCCESS", details="p99 12 ms")
    return path, base, built


def test_mama_learn_and_mama_confidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, base, built = _cli_store(tmp_path)
    assert main(["--db", str(path), "confidence", built]) == 0
    assert "confidence 0.7 now; no outcome has moved it yet." in capsys.readouterr().out
    assert main(["--db", str(path), "learn"]) == 0
    out = capsys.readouterr().out
    assert "first pass" in out and "1 outcome applied, 2 confidences recorded" in out
    assert f"{built}  0.7 → 0.72  SUCCESS outcome of {base}, 1 hop away (depends_on)" in out
    assert main(["--db", str(path), "learn"]) == 0
    assert "0 outcomes applied, 0 confidences recorded" in capsys.readouterr().out
    assert main(["--db", str(path), "confidence", base]) == 0
    out = capsys.readouterr().out
    assert "confidence 0.84 now, 1 change:" in out and "0.8 → 0.84  SUCCESS outcome" in out
    assert main(["--db", str(path), "confidence", built, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["confidence"] == pytest.approx(0.72)
    assert [(h["trigger_id"], h["hops"]) for h in data["history"]] == [(base, 1)]
    assert main(["--db", str(path), "confidence", "dec_nope"]) == 1
    assert "dec_nope" in capsys.readouterr().err


@pytest.mark.anyio
async def test_the_tools_tell_what_moved(state: State) -> None:
    async with connect(state, DESKTOP) as c:
        saved = await c.call_tool(
            "save_decision",
            {"topic": "auth", "decision": "JWT", "reasoning": {"primary": "stateless"},
             "confidence": 0.8},
        )  # fmt: skip
        jwt = saved.structured_content["id"]
        built = await c.call_tool(
            "save_decision",
            {"topic": "gateway", "decision": "Refresh in the gateway",
             "reasoning": {"primary": "JWT refresh"}, "confidence": 0.7,
             "links": [{"to_id": jwt, "relationship": "depends_on", "reason": "JWT"}]},
        )  # fmt: skip
        gateway = built.structured_content["id"]
        out = await c.call_tool(
            "evolve_outcome", {"memory_id": jwt, "outcome": "FAILED", "details": "p99 307 ms"}
        )
        assert f"Confidence 0.8 → 0.68; built on it: {gateway} 0.7 → 0.64." in text(out)
        told = await c.call_tool("confidence_history", {"memory_id": gateway})
        assert f"FAILED outcome of {jwt}, 1 hop away (depends_on)" in text(told)
        assert told.structured_content["confidence"] == pytest.approx(0.64)
        loaded = await c.call_tool("load_context", {"memory_id": gateway})
        assert (
            f"Confidence 0.64 now; moved: 0.7 → 0.64 (FAILED outcome of {jwt}, 1 hop away "
            "(depends_on))\n" in text(loaded)
        )


def test_the_session_start_says_what_another_outcome_did_and_names_hubs(store: Store) -> None:
    from mama_plugin.services.learning.hubs import HUB_MIN
    from mama_plugin.services.saving.memories import save_checkpoint
    from mama_plugin.services.story import briefing

    base = _decision(store, "JWT with refresh tokens", 0.80)
    built = _decision(
        store,
        "Token refresh in the gateway",
        0.70,
        topic="gateway",
        links=[{"to_id": base, "relationship": "depends_on", "reason": "refresh tokens"}],
    )
    save_checkpoint(store, PROJECT, {"summary": "gateway refresh wired", "implements": [built]})
    before = briefing.brief(store, PROJECT, Config(), "startup")
    assert f"D1 {built} [gateway]: Token refresh in the gateway (0.7) — " in before
    assert briefing.brief(store, PROJECT, Config(), "startup") == before  # nothing changed
    _outcome(store, base, "FAILED", "p99 307 ms at 10K req/s")
    after = briefing.brief(store, PROJECT, Config(), "startup")
    assert "Token refresh in the gateway (0.64) — chosen" in after
    assert f"; confidence was 0.7 before {base} FAILED" in after
    assert briefing.brief(store, PROJECT, Config(), "startup") == after
    for i in range(HUB_MIN):
        save_insight(
            store,
            PROJECT,
            {
                "topic": f"t{i}",
                "content": f"client {i} calls the gateway",
                "links": [{"to_id": built, "relationship": "relates_to", "reason": "calls"}],
            },
        )
    assert f"[hub: {HUB_MIN + 1} memories rest on it]" in briefing.brief(  # and the checkpoint
        store, PROJECT, Config(), "startup"
    )


def test_an_export_carries_the_history_and_learn_applies_nothing_after_a_restore(
    store: Store, tmp_path: Path
) -> None:
    from mama_plugin.errors import LegacyImportError
    from mama_plugin.transfer.dump import export_data, import_dump

    base = _decision(store, "Use Redis", 0.80)
    built = _decision(
        store,
        "Cache in Redis",
        0.70,
        topic="cache",
        links=[{"to_id": base, "relationship": "depends_on", "reason": "the same Redis"}],
    )
    _outcome(store, base, "FAILED", "SPOF")
    data = json.loads(json.dumps(export_data(store)))
    assert [(r["memory_id"], r["hops"]) for r in data["confidence_history"]] == [
        (base, 0),
        (built, 1),
    ]
    with Store.open(tmp_path / "fresh.db", config=Config()) as fresh:
        result = import_dump(fresh, data)
        assert result.counts["confidence_history"] == {"source": 2, "imported": 2}
        assert fresh.memories.require(built).confidence == pytest.approx(0.64)
        assert learn_pass(fresh).applied == []  # the restored confidence holds the move
        assert fresh.memories.require(built).confidence == pytest.approx(0.64)
        assert export_data(fresh)["confidence_history"] == data["confidence_history"]
    data["confidence_history"][0]["to_value"] = 7
    with (
        Store.open(tmp_path / "bad.db", config=Config()) as bad,
        pytest.raises(LegacyImportError, match=r"confidence_history\[0\]: .*0\.\.1"),
    ):
        import_dump(bad, data)


def test_one_outcomes_moves_are_told_in_the_order_they_were_written(store: Store) -> None:
    from mama_plugin.storage.confidence import ConfidenceChange

    # Written in the reverse of the ids' order, at one instant: the history is the order of
    # writing (the judged memory, then what rests on it), not the ids' order.
    first, second = sorted((_decision(store, "Use Redis", 0.8), _decision(store, "Cache", 0.7)))[
        ::-1
    ]
    store.confidence.apply(
        [
            ConfidenceChange(first, 1000, 0.8, 0.7, "failed", first, "FAILED", "c1", 0),
            ConfidenceChange(second, 1000, 0.7, 0.64, "rests on it", first, "FAILED", "c1", 1),
        ]
    )
    assert [c.memory_id for c in store.confidence.of_many([second, first])] == [first, second]
