"""The Stop checkpoint: the whole turn it closes, what is unresolved, the next step to show."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from benchmarks.extraction import extraction_run, labelled_turns
from mama_plugin.config import Config
from mama_plugin.server.base import Env
from mama_plugin.server.hook_table import HOOKS, TurnArgs
from mama_plugin.server.hook_tools import do_checkpoint_turn
from mama_plugin.services.saving.memories import save_checkpoint, save_decision
from mama_plugin.services.story import briefing
from mama_plugin.services.story.autosave import layers_of
from mama_plugin.services.story.commands import unresolved
from mama_plugin.storage import Store
from mama_plugin.text import next_step, remains, strip_cue, tension
from mama_plugin.transcript import Command, Digest, Reader

FAILING = "sh -c 'echo boom; exit 7'"


@pytest.mark.parametrize(
    ("sentence", "step"),
    [
        ("Next: cap _entries at 1,000.", "cap _entries at 1,000"),
        ("Next step: Next: add the bound.", "add the bound"),
        ("Next steps: run the smoke test", "run the smoke test"),
        ("Next, I'll wire the cache.", "wire the cache"),
        ("The next step is to add a /ready endpoint.", "add a /ready endpoint"),
        ("TODO: document PRICE_DB", "document PRICE_DB"),
        ("Follow-up: watch the hit rate", "watch the hit rate"),
        ("Remaining: the TTL cache has no size bound yet.", ""),
        ("Still need to write the docs.", ""),
        ("Next time we should measure first.", ""),
        ("Then the tests passed.", ""),
        ("Next: should I start the service?", ""),
    ],
)
def test_only_an_explicit_next_step_is_one(sentence: str, step: str) -> None:
    assert next_step(sentence) == step


def test_a_cue_is_never_left_on_a_step() -> None:
    assert strip_cue("Next: Remaining: cap _entries") == "cap _entries"
    assert strip_cue("Next step: add X.") == "add X."
    assert strip_cue("Nextcloud sync") == "Nextcloud sync"
    assert remains("Remaining: the TTL cache has no size bound yet.") == (
        "the TTL cache has no size bound yet"
    )


@pytest.mark.parametrize(
    "sentence",
    [
        "The smoke test failed: curl exited 7.",
        "pytest exited with code 1 (2 failures).",
        "This broke the login flow.",
        "It did not work: the port is still taken.",
        "The change didn't work on staging.",
        "GET /price p99 regressed from 41 ms to 93 ms.",
        "The new build is a regression over the old one.",
        "Remaining: the TTL cache has no size bound yet.",
        "Fixed the crash, but the cache still leaks.",
        "One risk: a hot SKU can be evicted.",
        "The request timed out after 30 s.",
    ],
)
def test_failures_and_gaps_are_unresolved(sentence: str) -> None:
    assert tension(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "The previously failing test now passes.",
        "Fixed the flaky test; all 12 tests pass.",
        "Remaining: write the docs.",
        "Shall I look at why it failed?",
        "Next: find out why the smoke test failed.",
        "All 3 cache tests pass.",
    ],
)
def test_resolved_questions_and_steps_are_not(sentence: str) -> None:
    assert not tension(sentence)


def decision(**layers: Any) -> SimpleNamespace:
    base: dict[str, Any] = {"id": "dec_1", "status": "active", "topic": "cache"}
    base.update(tension={}, continuity={})
    return SimpleNamespace(**{**base, **layers})


def test_the_checkpoint_names_the_failure_and_the_explicit_next_step() -> None:
    digest = Digest(commands=[Command(FAILING, "smoke test", True, "exit 7, boom")])
    last = (
        "The smoke test did not pass. Remaining: the TTL cache has no size bound yet. "
        "Next: cap _entries at 1,000."
    )
    layers = layers_of(digest, "run the smoke test", last, "", [])
    concerns = layers["tension"]["concerns"]
    assert concerns[0] == f"`{FAILING}` failed (smoke test): exit 7, boom"
    assert "The smoke test did not pass." in concerns
    assert "Remaining: the TTL cache has no size bound yet." in concerns
    steps = [s["step"] for s in layers["continuity"]["next_steps"]]
    assert steps == ["cap _entries at 1,000"]  # the explicit one, without its cue
    assert layers["continuity"]["remains"] == ["the TTL cache has no size bound yet"]


def test_a_decisions_concerns_and_high_step_count() -> None:
    lru = decision(
        tension={"concerns": ["LRU adds a dict move on every hit"], "risks": ["cold start"]},
        continuity={"next_steps": [{"step": "Switch to an OrderedDict", "priority": "HIGH"},
                                   {"step": "Add a panel", "priority": "MEDIUM"}]},
    )  # fmt: skip
    old = decision(id="dec_0", status="superseded", tension={"concerns": ["gone"]})
    layers = layers_of(Digest(), "go on", "Done for today.", "", [old, lru])
    assert layers["tension"]["concerns"] == [
        "LRU adds a dict move on every hit (dec_1)",
        "cold start (dec_1)",
    ]
    assert [s["step"] for s in layers["continuity"]["next_steps"]] == ["Switch to an OrderedDict"]
    said = layers_of(Digest(), "go on", "Next: benchmark it.", "", [lru])
    assert [s["step"] for s in said["continuity"]["next_steps"]][:2] == [
        "benchmark it",
        "Switch to an OrderedDict",
    ]


def test_a_failure_made_good_by_a_later_run_is_resolved() -> None:
    check = "python -m shop.app --check"
    commands = [
        Command(check, failed=True, error="exit 1"),
        Command(FAILING, failed=True, error="exit 7"),
        Command(f"PRICE_DB='postgres://x y' {check}"),  # the same command, with the variable
        Command(FAILING, failed=True, error="exit 7, again"),
    ]
    assert [c.error for c in unresolved(commands)] == ["exit 7, again"]


def test_a_question_its_missing_program_answers_is_not_unresolved() -> None:
    """Asking whether Redis runs, with no redis-cli installed, answered the question (the
    postgres_job_queue session then chose Postgres); the same exit running the tests, or a
    question whose program ran and failed, leaves a problem open."""
    missing = "exit 127, redis-cli: command not found"
    asked = Command("redis-cli ping", "Check whether a Redis server is running", True, missing)
    installed = Command("command -v psql", "", True, "exit 1")
    tests = Command("pytest -q", "Run the tests", True, "exit 127, pytest: command not found")
    down = Command("pg_isready", "Check if Postgres is up", True, "exit 2, no response")
    assert unresolved([asked, installed, tests, down]) == [tests, down]


# -- the wait: the Stop hook fires before Claude Code has written the turn's last entries -------


def line(kind: str, content: Any, **extra: Any) -> str:
    return json.dumps({"type": kind, "message": {"role": kind, "content": content}, **extra})


def turn_lines(n: int, closing: str) -> tuple[str, str]:
    """A turn's request and call (written at once) and its result and closing (written late)."""
    use = {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash",
           "input": {"command": FAILING, "description": f"smoke test {n}"}}  # fmt: skip
    result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "is_error": True,
              "content": "Exit code 7\nboom"}  # fmt: skip
    early = line("user", f"run smoke test {n}") + "\n" + line("assistant", [use]) + "\n"
    late = line("user", [result]) + "\n" + line("assistant", [{"type": "text", "text": closing}])
    return early, late + "\n"


def test_the_turn_waits_for_its_closing_text(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    one, two = turn_lines(1, "Turn 1 done."), turn_lines(2, "Turn 2: it did not pass.")
    path.write_text(one[0] + one[1] + two[0])  # turn 2's result and closing still queued
    reader = Reader(path)
    assert reader.read().commands[-1].command == FAILING and len(reader.digest.commands) == 1
    late = threading.Timer(0.3, lambda: path.write_text(one[0] + one[1] + two[0] + two[1]))
    late.start()
    try:
        reader.settle_turn("Turn 2: it did not pass.", limit_s=30)
        assert [c.error for c in reader.digest.commands] == ["exit 7, boom"] * 2
    finally:
        late.cancel()


def test_turn_1_before_the_file_exists_and_a_message_that_never_lands(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    early, late = turn_lines(1, "First turn closed.")
    writer = threading.Timer(0.3, lambda: path.write_text(early + late))
    writer.start()
    try:
        Reader(path).settle_turn("First turn closed.", limit_s=30)
        assert len(Reader(path).read().commands) == 1
    finally:
        writer.cancel()
    # Bounded: a closing text that never appears costs limit_s, then what is there is taken.
    reader = Reader(path)
    assert 0.2 <= reader.settle_turn("never written", limit_s=0.2) < 30
    assert reader.digest.commands and Reader(tmp_path / "nope").settle_turn("x", limit_s=0) < 1


def test_the_stop_hook_stores_the_late_failure(
    tmp_path: Path, store: Store, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.jsonl"
    early, late = turn_lines(1, "The smoke test failed. Next: start the server on 8765.")
    path.write_text(early)
    monkeypatch.delenv("MAMA_TURN_WAIT_S", raising=False)
    writer = threading.Timer(0.3, lambda: path.write_text(early + late))
    writer.start()
    try:
        args = TurnArgs(session_id="s1", transcript_path=str(path),
                        last_assistant_message="The smoke test failed. Next: start the server "
                        "on 8765.")  # fmt: skip
        saved = do_checkpoint_turn(Env(store, project, None, config=Config()), args)
    finally:
        writer.cancel()
    cp = store.memories.require(saved.data["checkpoint"])
    assert f"`{FAILING}` failed (smoke test 1): exit 7, boom" in cp.tension["concerns"]
    assert cp.continuity["next_steps"][0]["step"] == "start the server on 8765"


# -- what the session start and load_checkpoint show -------------------------------------------


def test_the_cliffhanger_shows_one_cue_and_the_decisions_open_ends(
    store: Store, project: str
) -> None:
    lru = save_decision(store, project, {
        "topic": "cache_eviction", "decision": "Evict in LRU order",
        "reasoning": "hot SKUs must stay cached",
        "tension": {"concerns": ["LRU adds a dict move on every hit"]},
        "next_steps": [{"step": "Switch TTLCache to an OrderedDict", "priority": "HIGH"}],
    }).memory  # fmt: skip
    save_checkpoint(store, project, {
        "summary": "Bounded the cache", "next_steps": [{"step": "Next: cap _entries at 1,000"}],
        "tension": {"concerns": ["the smoke test fails with exit 7"]}, "implements": [lru.id],
    })  # fmt: skip
    facts = briefing.gather(store, project, followup_days=7, now=lru.created_at)
    assert facts is not None
    text = briefing.render_brief(facts, store.home, budget=2000, short=False).text
    assert "Next step: cap _entries at 1,000 (MEDIUM)" in text and "Next: cap" not in text
    assert "Unresolved:\n- the smoke test fails with exit 7" in text
    assert (
        "  open: LRU adds a dict move on every hit · next (HIGH): Switch TTLCache to an OrderedDict"
    ) in text


def test_without_a_step_the_decisions_high_step_is_the_next_one(store: Store, project: str) -> None:
    save_decision(store, project, {
        "topic": "smoke_test", "decision": "The smoke test checks /health only",
        "reasoning": "no database in CI",
        "next_steps": [{"step": "Next: add a /ready endpoint", "priority": "HIGH"}],
    })  # fmt: skip
    facts = briefing.gather(store, project, followup_days=7, now=0)
    assert facts is not None
    text = briefing.render_brief(facts, store.home, budget=2000, short=False).text
    assert "Next step: add a /ready endpoint (HIGH)" in text
    assert "next (HIGH)" not in text  # shown once, as the next step


# -- the label set ----------------------------------------------------------------------------


def test_the_label_set_is_real_turns_and_the_rules_beat_the_old_ones() -> None:
    turns = labelled_turns()
    assert len(turns) >= 60 and all(t["last"] for t in turns)
    _, data = extraction_run()
    now, before = data["now, all"], data["before, all"]
    assert now["next_with_cue"] == 0 < before["next_with_cue"]
    assert now["tension_recall"] > before["tension_recall"]
    assert now["next_recall"] > before["next_recall"]


def test_load_checkpoint_shows_a_step_once_and_the_decisions_open_ends(
    store: Store, project: str
) -> None:
    from mama_plugin.schema import LoadCheckpointInput
    from mama_plugin.server.tools import do_load_checkpoint

    lru = save_decision(store, project, {
        "topic": "cache_eviction", "decision": "Evict in LRU order", "reasoning": "hot SKUs",
        "tension": {"risks": ["a cold start evicts everything"]},
        "next_steps": [{"step": "Next step: switch to an OrderedDict", "priority": "HIGH"}],
    }).memory  # fmt: skip
    save_checkpoint(store, project, {
        "summary": "Bounded the cache", "next_steps": [{"step": "Next: cap _entries"}],
        "implements": [lru.id],
    })  # fmt: skip
    env = Env(store, project, None, config=Config())
    text = do_load_checkpoint(env, LoadCheckpointInput()).text
    assert "Next step: cap _entries (MEDIUM)" in text and "Next: cap" not in text
    assert "  open: a cold start evicts everything · next (HIGH): switch to an OrderedDict" in text
    assert text.count("cap _entries") == 1 and "<mama-memory>" in text


def test_a_long_message_cut_by_the_hook_still_closes_its_turn(tmp_path: Path) -> None:
    closing = "word " * 6000  # 30,000 characters: the hook forwards the first 20,000
    path = tmp_path / "t.jsonl"
    early, late = turn_lines(1, closing.strip())
    path.write_text(early + late)
    message = HOOKS["checkpoint_turn"].read({"last_assistant_message": closing})
    message = message.last_assistant_message
    assert len(message) == 20_000
    assert Reader(path).settle_turn(message, limit_s=30) < 30  # caught up, not timed out
