"""Staleness by kind and hubs: the formula's rows, what resets the clock, where they are told."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import PROJECT

from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.schema import OutcomeInput, parse
from mama_plugin.services.learning.hubs import HUB_MIN, hub_counts, hubs
from mama_plugin.services.learning.staleness import assess, category, decaying, kind_of, score
from mama_plugin.services.saving.memories import save_checkpoint, save_decision, save_insight
from mama_plugin.services.saving.outcomes import record_outcome_event
from mama_plugin.services.story.answers import search_by_context
from mama_plugin.storage import Store, now_ms

DAY = 86_400_000


@pytest.mark.parametrize(
    ("days", "decay_days", "used", "value", "named"),
    [
        (0, 7, 0, 0.0, "fresh"),
        (3, 7, 0, 3 / 7, "fresh"),
        (3.5, 7, 0, 0.5, "aging"),  # the bounds belong to the next category
        (7, 7, 0, 1.0, "stale"),
        (14, 7, 0, 2.0, "expired"),
        (14, 7, 3, 1.0, "stale"),  # used 3 times: / √4
        (30, 30, 0, 1.0, "stale"),
        (45, 90, 0, 0.5, "aging"),
        (90, 180, 8, 0.5 / 3, "fresh"),  # / √9
        (400, 180, 0, 400 / 180, "expired"),
    ],
)
def test_the_staleness_table(
    days: float, decay_days: float, used: int, value: float, named: str
) -> None:
    assert score(days, decay_days, used) == pytest.approx(value)
    assert category(score(days, decay_days, used)) == named


def _decision(store: Store, text: str, *, tags: list[str], age_days: float) -> str:
    data = {"topic": text, "decision": text, "reasoning": {"primary": f"because {text}"}}
    created = now_ms() - int(age_days * DAY)
    return save_decision(store, PROJECT, data | {"tags": tags}, created_at=created).memory.id


@pytest.mark.parametrize(
    ("tags", "decay"),
    [
        (["performance"], 7),
        (["latency", "architecture"], 7),  # the most perishable kind a tag names
        (["bug"], 14),
        (["requirements"], 30),
        (["team"], 60),
        (["api"], 90),
        (["security"], 90),
        (["architecture"], 180),
        (["vendor"], 180),
        ([], 180),  # a decision is architecture unless it says otherwise
        (["kind:requirements"], 30),
        (["decay:3"], 3),  # its own
        (["decay:3d", "performance"], 3),
    ],
)
def test_the_kind_sets_the_decay(store: Store, tags: list[str], decay: float) -> None:
    m = store.memories.require(_decision(store, "x", tags=tags, age_days=0))
    kind = kind_of(m)
    assert kind is not None and kind.decay_days == decay


def test_checkpoints_never_go_stale_and_insights_are_team_knowledge(store: Store) -> None:
    cp = save_checkpoint(store, PROJECT, {"summary": "wired it"}).memory
    lesson = save_insight(store, PROJECT, {"topic": "t", "content": "measure first"}).memory
    assert kind_of(cp) is None
    kind = kind_of(lesson)
    assert kind is not None and kind.decay_days == 60


def test_decay_lists_the_stale_and_an_outcome_resets_the_clock(store: Store) -> None:
    slow = _decision(store, "p99 is 12 ms", tags=["performance"], age_days=10)
    old = _decision(store, "Use Postgres", tags=["architecture"], age_days=400)
    _decision(store, "Use Redis", tags=["architecture"], age_days=10)  # fresh
    found = {s.memory.id: s for s in decaying(store, PROJECT)}
    assert set(found) == {slow, old}
    assert found[old].category == "expired" and found[slow].category == "stale"
    assert "verify before relying on it" in found[slow].said()
    assert "10 days since saved, performance decay in 7" in found[slow].said()
    record_outcome_event(
        store,
        parse(OutcomeInput, {"memory_id": slow, "outcome": "VERIFIED", "details": "still 12"}),
    )
    after = assess(store, [store.memories.require(slow)])[slow]
    assert after.category == "fresh" and after.days < 0.01
    assert "since verified" in after.said()
    assert [s.memory.id for s in decaying(store, PROJECT)] == [old]


def test_use_slows_decay(store: Store) -> None:
    slow = _decision(store, "p99 is 12 ms", tags=["performance"], age_days=10)
    store.memories.touch([slow])
    store.memories.touch([slow])
    store.memories.touch([slow])
    found = assess(store, [store.memories.require(slow)])[slow]
    assert found.score == pytest.approx(10 / 7 / 2, rel=1e-3) and found.category == "aging"


def test_search_answers_mark_stale_memories_and_hubs(store: Store) -> None:
    old = _decision(store, "Cache tokens in Redis", tags=["performance"], age_days=30)
    for i in range(HUB_MIN):
        save_insight(
            store,
            PROJECT,
            {
                "topic": f"use {i}",
                "content": f"service {i} reads the token cache",
                "links": [{"to_id": old, "relationship": "depends_on", "reason": "reads it"}],
            },
        )
    assert hub_counts(store, [old]) == {old: HUB_MIN}
    result = search_by_context(store, "Redis token cache", record_usage=False, budget=None)
    item = next(r for r in result.primary_results if r.id == old)
    assert item.stale is not None and item.stale.startswith("expired")
    assert item.hub == HUB_MIN
    assert f"- {old}: expired" in result.text and "verify before relying on it" in result.text
    assert f"- {old}: referenced by {HUB_MIN}" in result.text
    others = [r for r in result.primary_results if r.id != old]
    assert others and all(r.stale is None and r.hub is None for r in others)
    assert all("stale" not in r.as_dict() for r in others)


def test_hubs_list_references_and_flag_review(store: Store) -> None:
    hub = _decision(store, "One database per user", tags=["architecture"], age_days=100)
    refs = [
        save_insight(
            store,
            PROJECT,
            {
                "topic": f"t{i}",
                "content": f"rests on it {i}",
                "links": [{"to_id": hub, "relationship": "relates_to", "reason": "same db"}],
            },
        ).memory.id
        for i in range(HUB_MIN + 1)
    ]
    assert hubs(store, PROJECT, minimum=HUB_MIN + 2) == []
    (found,) = hubs(store, PROJECT)
    assert found.memory.id == hub and list(found.referrers) == refs
    assert found.staleness is not None and found.staleness.category == "aging"
    assert found.review and found.as_dict()["references"] == HUB_MIN + 1


def test_mama_decay_and_mama_hubs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli.db"
    with Store.open(db, config=Config()) as store:
        old = _decision(store, "p99 is 12 ms", tags=["performance"], age_days=10)
        for i in range(HUB_MIN):
            save_insight(
                store,
                PROJECT,
                {
                    "topic": f"t{i}",
                    "content": f"needs the latency {i}",
                    "links": [{"to_id": old, "relationship": "depends_on", "reason": "budget"}],
                },
            )
    base = ["--db", str(db)]
    assert main([*base, "decay", "--project", PROJECT]) == 0
    out = capsys.readouterr().out
    assert old in out and "stale (1.4): 10 days since saved, performance decay in 7" in out
    assert main([*base, "decay", "--project", PROJECT, "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["id"] == old and row["category"] == "stale" and row["decay_days"] == 7
    assert main([*base, "hubs", "--project", PROJECT]) == 0
    out = capsys.readouterr().out
    assert f"{old} (decision, current)" in out and f"{HUB_MIN} references" in out
    assert "review it" in out
    assert main([*base, "hubs", "--project", PROJECT, "--min", "0"]) == 1
    assert "--min must be 1 or more" in capsys.readouterr().err
    assert main([*base, "hubs", "--project", "/elsewhere"]) == 0
    assert "no memory of /elsewhere" in capsys.readouterr().out
