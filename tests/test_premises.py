"""Premises: facts decisions rest on, counted by use, judged by those decisions' outcomes."""

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
from mama_plugin.services.learning.premises import premises, premises_of
from mama_plugin.services.saving.memories import save_decision, save_insight
from mama_plugin.services.saving.outcomes import record_outcome_event
from mama_plugin.storage import Store, now_ms

if TYPE_CHECKING:
    from mama_plugin.server.state import State

DAY = 86_400_000


def _premise(store: Store, text_: str, domain: str, *, age_days: float = 0) -> str:
    return save_insight(
        store,
        PROJECT,
        {"topic": domain, "content": text_, "tags": ["premise", f"domain:{domain}"],
         "confidence": 0.9},
        created_at=now_ms() - int(age_days * DAY),
    ).memory.id  # fmt: skip


def _resting(store: Store, what: str, premise: str) -> str:
    return save_decision(store, PROJECT, {
        "topic": what, "decision": what, "reasoning": {"primary": f"{what} fits the load"},
        "links": [{"to_id": premise, "relationship": "rests_on", "reason": "the load"}]},
    ).memory.id  # fmt: skip


def _judge(store: Store, memory_id: str, outcome: str) -> None:
    record_outcome_event(
        store, parse(OutcomeInput, {"memory_id": memory_id, "outcome": outcome, "details": "d"})
    )


def test_uses_success_rate_freshness_and_confidence(store: Store) -> None:
    load = _premise(store, "The service must handle 10k req/s", "performance")
    rules = _premise(store, "Prices change hourly", "requirements", age_days=45)
    a, b, c = (_resting(store, w, load) for w in ("Redis sessions", "Two nodes", "Async IO"))
    _judge(store, a, "SUCCESS")
    _judge(store, b, "FAILED")
    _judge(store, c, "PARTIAL")
    found = premises(store, PROJECT)
    assert [p.memory.id for p in found] == [load, rules]  # fresh first, stale after
    first = found[0]
    assert first.uses == 3 and first.success_rate == pytest.approx(0.5)
    assert [d.id for d in first.cited_by] == [a, b, c]
    # Each verdict moved the premise by half of its decision's change: a's SUCCESS 0.7 → 0.76
    # (+0.03 here, +0.015 to b two hops away), b's FAILED 0.715 → 0.60775 (-0.053625 here).
    assert first.memory.confidence == pytest.approx(0.9 + 0.03 - 0.053625)
    said = first.said()
    assert said.startswith(f"{load} (performance): The service must handle 10k req/s (0.8")
    assert "3 uses, 50% success, fresh)" in said
    assert found[1].staleness is not None and found[1].staleness.category == "stale"
    assert found[1].uses == 0 and found[1].success_rate is None
    assert [p.memory.id for p in premises(store, PROJECT, "Requirements")] == [rules]
    assert [p.memory.id for p in premises_of(store, store.memories.require(a))] == [load]


def test_an_insight_without_the_tag_is_no_premise(store: Store) -> None:
    save_insight(store, PROJECT, {"topic": "t", "content": "measure first"})
    assert premises(store, PROJECT) == []


def test_mama_premises(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli.db"
    with Store.open(db, config=Config()) as store:
        load = _premise(store, "The service must handle 10k req/s", "performance")
        _resting(store, "Redis sessions", load)
    base = ["--db", str(db), "premises", "--project", PROJECT]
    assert main(base) == 0
    assert f"{load} (performance): The service must handle 10k req/s (0.9, 1 use, fresh)" in (
        capsys.readouterr().out
    )
    assert main([*base[:3], "security", "--project", PROJECT]) == 0
    assert "no premise of domain 'security'" in capsys.readouterr().out
    assert main([*base, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["id"] == load and row["uses"] == 1 and row["freshness"] == "fresh"


@pytest.mark.anyio
async def test_a_loaded_decision_shows_its_premises(state: State) -> None:
    load = _premise(state.store, "The service must handle 10k req/s", "performance")
    decision = _resting(state.store, "Redis sessions", load)
    async with connect(state, DESKTOP) as c:
        loaded = await c.call_tool("load_context", {"memory_id": decision})
    assert f"Rests on premises:\n- {load} (performance): The service must handle" in text(loaded)
