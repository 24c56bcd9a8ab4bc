"""The resume point follows the work, and the story told from it (services/story/cliffhanger.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.extraction import extraction_run
from mama_plugin.config import Config
from mama_plugin.hooks.session_start import session_start
from mama_plugin.services.saving.memories import save_checkpoint, save_decision
from mama_plugin.services.story import briefing
from mama_plugin.services.story.autosave import checkpoint_turn
from mama_plugin.services.story.resume import resume_point
from mama_plugin.storage import Store
from mama_plugin.transcript import Command, Digest, FileTouch
from mama_plugin.transcript.context import told_at_start

SEARCH = "mcp__plugin_mama_mama__search_by_context"
SAVE = "mcp__plugin_mama_mama__save_decision"
CACHE = FileTouch("/p/app/cache.py", "created", (1, 40))


def working() -> Digest:
    """A session that created a file and ran a failing command."""
    failing = Command("pytest -q", "Run the tests", True, "exit 1, FAILED test_ttl")
    return Digest(user_requests=["Add a TTL cache"], assistant_texts=["Added it."],
                  files=[CACHE], commands=[failing], tool_names=["Write", "Bash"], turn_work=2,
                  last=failing)  # fmt: skip


def turn(store: Store, project: str, session: str, digest: Digest, last: str) -> None:
    checkpoint_turn(store, project, session_id=session, digest=digest, last_message=last, cwd="/p")


def test_later_sessions_without_work_never_replace_the_resume_point(
    store: Store, project: str
) -> None:
    turn(store, project, "A", working(), "The test fails. Next: bound the cache at 1,000 entries.")
    work = resume_point(store, project).checkpoint
    assert work is not None and work.metadata["work"] is True
    asked = Digest(user_requests=["어제 작업 이어서 하자"], assistant_texts=["네."])
    turn(store, project, "B", asked, "네.")
    searched = Digest(user_requests=["/mama:search cache"], tool_names=[SEARCH])
    turn(store, project, "C", searched, "Nothing new. Next: bound the cache at 1,000 entries.")
    point = resume_point(store, project)
    assert point.checkpoint is not None and point.checkpoint.id == work.id
    assert point.since == "one session searched memory"  # the one that did nothing: untold
    # Real work moves it on.
    turn(store, project, "D", working(), "Fixed the test. Next: wire it in.")
    moved = resume_point(store, project)
    assert moved.checkpoint is not None and moved.checkpoint.session_id == "D"
    assert moved.since == ""


def test_a_rolling_checkpoint_only_gains_within_its_session(store: Store, project: str) -> None:
    digest = working()
    turn(store, project, "A", digest, "The test fails. Next: bound the cache at 1,000 entries.")
    before = resume_point(store, project).checkpoint
    assert before is not None
    # A closing /mama-save turn: it saves a decision, edits nothing.
    decision = save_decision(store, project, {
        "topic": "cache", "decision": "TTL of 60 s", "reasoning": "prices move every minute",
        "session_id": "A", "tension": {"risks": ["stale prices for up to 60 s"]},
    }).memory  # fmt: skip
    digest.user_requests.append("/mama-save")
    digest.turn_tools, digest.turn_work = len(digest.tool_names), 0
    digest.tool_names.append(SAVE)
    turn(store, project, "A", digest, f"Saved {decision.id}.")
    after = store.memories.require(before.id)
    assert after.content == before.content and after.continuity["next_steps"][0]["step"] == (
        "bound the cache at 1,000 entries"
    )
    assert after.metadata["decisions"] == [decision.id]  # it gained the decision
    assert f"stale prices for up to 60 s ({decision.id})" in after.tension["concerns"]
    # A question answered in words: the checkpoint gains its concern, keeps the rest.
    digest.user_requests.append("any risk?")
    digest.turn_tools = len(digest.tool_names)
    turn(store, project, "A", digest, "One risk: the eviction scan is O(n) on every put.")
    gained = store.memories.require(before.id)
    assert gained.content == before.content
    assert "One risk: the eviction scan is O(n) on every put." in gained.tension["concerns"]
    # A turn that does work again moves it on.
    digest.user_requests.append("now fix the test")
    digest.turn_work = 1
    turn(store, project, "A", digest, "Fixed it.")
    assert "now fix the test" in store.memories.require(before.id).content


def test_quiet_turns_are_told_apart_on_the_labelled_turns() -> None:
    _, data = extraction_run()
    now, before = data["moved_on, now"], data["moved_on, before (all moved)"]
    assert before["quiet_recall"] == 0 < 0.9 <= now["quiet_recall"]
    assert now["moved_recall"] >= 0.9 and now["quiet_precision"] >= 0.9


def test_secrets_are_masked_before_the_text_is_cut(store: Store, project: str) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2
    request = "x" * 370 + f" use {token} for the API"  # cut at 400 first, 24 characters stayed
    digest = Digest(user_requests=[request], commands=[Command(f"curl -H 'Bearer {token}' x")])
    turn(store, project, "A", digest, f"Done with {token}.")
    (cp,) = store.memories.of_session("A", type="checkpoint")
    stored = json.dumps([cp.content, cp.metadata, cp.evidence])
    assert "A1b2C3d4" not in stored and "[REDACTED:" in stored


def test_a_written_checkpoint_tells_the_whole_cliffhanger(store: Store, project: str) -> None:
    redis = save_decision(store, project, {
        "topic": "sessions", "decision": "Sessions in Redis", "confidence": 0.8,
        "reasoning": {"primary": "refresh without a DB round trip",
                      "alternatives_considered": [{"option": "JWT",
                                                   "rejected_because": "refresh hit the DB"}]},
    }).memory  # fmt: skip
    save_checkpoint(store, project, {
        "summary": "Moved sessions to Redis", "implements": [redis.id],
        "stopped_at": "editing infra/redis.tf:10-40, the Sentinel block half written",
        "current_state": "one Redis node, no failover",
        "target_state": "three Sentinels watching a primary and a replica",
        "tasks": [{"task": "Sentinel config", "status": "blocked", "blocker": "no staging VM"}],
        "discoveries": [{"finding": "refresh p99 41 ms", "evidence": "bench/auth.txt:12",
                         "impact": "no DB hop"}],
        "confirmed": [{"claim": "tests pass", "evidence": "pytest -q: 48 passed"}],
        "skipped": [{"item": "load test", "reason": "no staging", "risk": "HA untested"}],
        "unknowns": [{"assumption": "Sentinel quorum of 2 is enough", "check_when": "on staging"}],
        "open_questions": [{"question": "Managed Redis?", "options": ["ElastiCache", "self-run"],
                            "decision_needed": True}],
        "first_action": {"action": "finish the Sentinel block", "why_first": "the rest waits on it",
                         "files": ["infra/redis.tf"]},
    })  # fmt: skip
    text = briefing.brief(store, project, Config(), "startup")
    assert "Where I stopped: editing infra/redis.tf:10-40, the Sentinel block half written" in text
    assert ("What you will see now: one Redis node, no failover — what I was changing it to: "
            "three Sentinels watching a primary and a replica") in text  # fmt: skip
    assert "Tasks: Sentinel config (blocked: no staging VM)" in text
    assert "✅ tests pass — evidence: pytest -q: 48 passed" in text
    assert "✅ found: refresh p99 41 ms — evidence: bench/auth.txt:12; impact: no DB hop" in text
    assert "⚠️ skipped: load test — reason: no staging; risk: HA untested" in text
    assert "❓ unknown: Sentinel quorum of 2 is enough — checked: on staging" in text
    assert "- Managed Redis? — options: ElastiCache / self-run; a decision is needed" in text
    assert (f"D1 {redis.id} [sessions]: Sessions in Redis > JWT (0.8) — not it: refresh hit the "
            "DB; chosen because refresh without a DB round trip") in text  # fmt: skip
    assert ("Next step: finish the Sentinel block (HIGH) — the rest waits on it; files to review: "
            "infra/redis.tf") in text  # fmt: skip
    assert briefing.estimate_tokens(text) <= 600


def test_a_reason_that_says_because_is_not_told_because_twice(store: Store, project: str) -> None:
    from mama_plugin.services.story.answers import search_by_context

    primary = "Sentinel is configured because one Redis node fails every login"
    sentinel = save_decision(store, project, {
        "topic": "sessions", "decision": "Redis Sentinel for the session store",
        "reasoning": {"primary": primary},
    }).memory  # fmt: skip
    save_checkpoint(store, project, {"summary": "Sentinel set up", "implements": [sentinel.id]})
    start = briefing.brief(store, project, Config(), "startup")
    assert f"chosen: {primary}" in start and "because Sentinel" not in start
    answer = search_by_context(store, "Redis Sentinel session store", project=project).text
    assert f"— {primary}" in answer and "because Sentinel" not in answer


def test_a_later_decision_building_on_one_settles_its_step_and_concern(
    store: Store, project: str
) -> None:
    from mama_plugin.schema import LoadCheckpointInput
    from mama_plugin.server.base import Env
    from mama_plugin.server.tools import do_load_checkpoint
    from mama_plugin.services.saving.memories import record_outcome
    from mama_plugin.services.story.answers import search_by_context
    from mama_plugin.services.story.freshness import open_steps

    risk = "Redis is a single point of failure until HA is set up"
    redis = save_decision(store, project, {
        "topic": "sessions", "decision": "Server-side sessions in Redis",
        "reasoning": "a session lookup is one round trip", "tension": {"risks": [risk]},
        "next_steps": [{"step": "set up Redis HA (sentinel)", "priority": "HIGH"}],
    }).memory  # fmt: skip
    sentinel = {
        "topic": "sessions",
        "decision": "Redis Sentinel with one replica for sessions",
        "reasoning": "the single Redis node is a single point of failure for logins",
    }
    # Alike in words but not building on it: the step and the risk stay open.
    save_decision(store, "/elsewhere", sentinel)
    assert [s.step for s in open_steps(store, [redis])] == ["set up Redis HA (sentinel)"]
    later = save_decision(
        store,
        project,
        {
            **sentinel,
            "links": [
                {"to_id": redis.id, "relationship": "refines", "reason": "HA for the session store"}
            ],
        },
    )
    save_checkpoint(store, project, {"summary": "Sentinel set up",
                                     "implements": [redis.id, later.memory.id]})  # fmt: skip
    assert open_steps(store, [redis]) == []
    # Until it fails: what failed settled nothing.
    failed = {
        "memory_id": later.memory.id,
        "outcome": "FAILED",
        "details": "failover lost writes at 10K req/s",
    }
    record_outcome(store, failed)
    assert [s.step for s in open_steps(store, [redis])] == ["set up Redis HA (sentinel)"]
    record_outcome(store, {"memory_id": later.memory.id, "outcome": "SUCCESS",
                           "details": "failover held p99 4 ms"})  # fmt: skip
    start = briefing.brief(store, project, Config(), "startup")
    answer = search_by_context(store, "Redis sessions Sentinel", project=project).text
    env = Env(store, project, None, config=Config())
    loaded = do_load_checkpoint(env, LoadCheckpointInput()).text  # /mama-resume's answer
    for told in (start, answer, loaded):
        assert "Sentinel with one replica" in told
        assert risk not in told and "set up Redis HA" not in told


def test_the_start_does_not_depend_on_the_clock(store: Store, project: str) -> None:
    turn(store, project, "A", working(), "Next: bound the cache.")
    save_decision(store, project, {"topic": "db", "decision": "PostgreSQL 16",
                                   "reasoning": "one transaction"}, created_at=1)  # fmt: skip
    now = store.memories.latest(project=project, type="checkpoint")[0].updated_at
    texts = set()
    for later in (now, now + 60_000, now + 3 * 3_600_000):  # a minute, three hours later
        facts = briefing.gather(store, project, followup_days=7, now=later)
        assert facts is not None
        texts.add(briefing.render_brief(facts, store.home, budget=600, short=False).text)
    assert len(texts) == 1 and "ago" not in texts.pop()


def _attachment(event: str, content: str) -> str:
    return json.dumps({"type": "attachment", "attachment": {
        "type": "hook_additional_context", "hookEvent": event, "content": [content]}})  # fmt: skip


def test_a_resumed_conversation_gets_no_second_copy(
    store: Store, project: str, tmp_path: Path
) -> None:
    turn(store, project, "A", working(), "Next: bound the cache.")
    event = {"cwd": project, "source": "resume", "transcript_path": str(tmp_path / "t.jsonl")}
    first = session_start({**event, "source": "startup"}, Config())
    assert "<mama-memory>" in first
    assert session_start(event, Config())  # a transcript that holds nothing: the short start
    path = tmp_path / "t.jsonl"
    path.write_text(_attachment("UserPromptSubmit", first) + "\n")  # a prompt's, not the start
    assert not told_at_start(path, "mama-memory")
    path.write_text(_attachment("SessionStart", first) + "\n")
    assert told_at_start(path, "mama-memory") and session_start(event, Config()) == ""
    compacted = json.dumps({"type": "system", "subtype": "compact_boundary"})
    path.write_text(_attachment("SessionStart", first) + "\n" + compacted + "\n")
    assert not told_at_start(path, "mama-memory")  # compaction summarised it away
    assert not told_at_start(tmp_path / "missing.jsonl", "mama-memory")


def test_claudes_checkpoint_leads_and_later_work_of_its_session_follows(
    store: Store, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mama_plugin.services.story import autosave

    clock = iter((1_000, 5_000))
    monkeypatch.setattr(autosave, "now_ms", lambda: next(clock))
    digest = working()
    turn(store, project, "A", digest, "Next: bound the cache.")  # moved on at 1,000
    written = save_checkpoint(store, project, {"summary": "Cache added; bound next",
                                               "session_id": "A"}, created_at=2_000).memory  # fmt: skip
    digest.user_requests.append("/mama-save")  # the save's own turn: no work
    digest.turn_tools, digest.turn_work = len(digest.tool_names), 0
    digest.tool_names.append("mcp__plugin_mama_mama__save_checkpoint")
    turn(store, project, "A", digest, "Saved.")
    point = resume_point(store, project)
    assert point.checkpoint is not None and point.checkpoint.id == written.id
    assert point.then is None  # nothing happened after Claude's checkpoint
    digest.user_requests.append("bound it")
    digest.turn_tools, digest.turn_work = len(digest.tool_names), 1
    turn(store, project, "A", digest, "Bounded it at 1,000.")  # moved on at 5,000
    later = resume_point(store, project)
    assert later.checkpoint is not None and later.checkpoint.id == written.id
    assert later.then is not None and later.then.metadata["moved_at"] == 5_000
    text = briefing.brief(store, project, Config(), "startup")
    assert "After that, the same session: bound it — Bounded it at 1,000." in text


def test_a_closing_save_after_a_search_leaves_the_resume_point(store: Store, project: str) -> None:
    turn(store, project, "A", working(), "The test fails. Next: bound the cache at 1,000 entries.")
    work = resume_point(store, project).checkpoint
    searched = Digest(user_requests=["/mama:search cache", "/mama-save"],
                      tool_names=[SEARCH, "mcp__plugin_mama_mama__save_checkpoint"])  # fmt: skip
    thin = {"summary": "Looked up the cache decisions; none recorded", "session_id": "B",
            "what_was_done": ["searched MAMA for cache decisions"]}  # fmt: skip
    save_checkpoint(store, project, thin)
    turn(store, project, "B", searched, "Saved a checkpoint.")
    point = resume_point(store, project)
    assert work is not None and point.checkpoint is not None
    assert point.checkpoint.id == work.id
    assert point.since == "one session searched memory"  # one line for the session, not two
    # Claude's checkpoint that leaves something to pick up is where the work stopped.
    save_checkpoint(store, project, {**thin, "next_steps": [{"step": "wire the cache in"}]})
    assert resume_point(store, project).checkpoint.content == thin["summary"]  # type: ignore[union-attr]


def test_what_remains_is_told_as_remaining_once(store: Store, project: str) -> None:
    turn(store, project, "A", working(), "Added it. Remaining: the cache has no size bound yet.")
    facts = briefing.gather(store, project, followup_days=7, now=0)
    assert facts is not None
    assert facts.remains == ["the cache has no size bound yet"]
    assert not any("size bound" in x for x in facts.unresolved), facts.unresolved
    assert any("FAILED test_ttl" in x for x in facts.unresolved)


def test_a_failure_judged_by_an_outcome_is_told_once_by_the_decision() -> None:
    from mama_plugin.services.story.autosave import layers_of

    load = Command("sh load.sh", "Load test", True, "exit 1, p99 307 ms", calls=1)
    outcome = "mcp__plugin_mama_mama__evolve_outcome"
    judged = Digest(user_requests=["load test"], commands=[load], last=load,
                    tool_names=["Bash", outcome])  # fmt: skip
    concerns = layers_of(judged, "load test", "Replaced JWT.", "/p", [])["tension"]["concerns"]
    assert concerns == []
    # A failure after the outcome (or with none) stays unresolved.
    again = Command("sh load.sh", "Load test", True, "exit 1, p99 290 ms", calls=3)
    later = Digest(user_requests=["load test"], commands=[load, again], last=again,
                   tool_names=["Bash", outcome, "Bash"])  # fmt: skip
    [concern] = layers_of(later, "load test", "Still slow.", "/p", [])["tension"]["concerns"]
    assert "p99 290 ms" in concern


def test_where_it_stopped_says_what_was_recorded_after_the_command() -> None:
    """A failed load test, then an outcome and a new decision: the command is not left as if
    it had just failed; what came after it is told."""
    from types import SimpleNamespace

    from mama_plugin.services.story.commands import stopped_at

    load = Command("sh load.sh", "Load test", True, "exit 1, p99 307 ms", calls=1)
    alone = Digest(user_requests=["load test"], commands=[load], last=load, tool_names=["Bash"])
    assert stopped_at(alone, "/p") == "I had just run `sh load.sh` (load test): it failed (exit 1)"
    tools = ["Bash", "mcp__plugin_mama_mama__evolve_outcome",
             "mcp__plugin_mama_mama__evolve_supersede"]  # fmt: skip
    acted = Digest(user_requests=["load test"], commands=[load], last=load, tool_names=tools)
    decided = [SimpleNamespace(id="dec_old"), SimpleNamespace(id="dec_new")]
    assert stopped_at(acted, "/p", decided) == (
        "I had run `sh load.sh` (load test): it failed (exit 1); after it I recorded the outcome "
        "and saved dec_new"
    )
    searched = Digest(user_requests=["x"], commands=[load], last=load,
                      tool_names=["Bash", "mcp__plugin_mama_mama__search_by_context"])  # fmt: skip
    assert stopped_at(searched, "/p", decided) == (
        "I had just run `sh load.sh` (load test): it failed (exit 1)"
    )


def test_a_long_sessions_start_names_the_work_it_began_with(store: Store, project: str) -> None:
    """The rolling checkpoint keeps the session's requests that did work: "What I did" tells
    the first and the latest, not only the latest; a quiet or trivial request never enters."""
    digest = Digest(user_requests=["hello"], assistant_texts=["Hi."])
    turn(store, project, "A", digest, "Hi.")  # no work: not among the session's work
    digest = working()
    digest.user_requests.insert(0, "hello")
    turn(store, project, "A", digest, "Added it. Next: add a test for expiry.")
    digest.user_requests.append("thanks")
    digest.turn_tools, digest.turn_work = len(digest.tool_names), 0
    turn(store, project, "A", digest, "You're welcome.")  # quiet: the checkpoint only gains
    for request, reply in (("Now add a test for expiry", "Added tests/test_cache.py."),
                           ("Bound it at 1,000 entries", "Bounded it.")):  # fmt: skip
        digest.user_requests.append(request)
        digest.tool_names.append("Write")
        digest.turn_tools, digest.turn_work = len(digest.tool_names) - 1, 1
        turn(store, project, "A", digest, reply)
    point = resume_point(store, project)
    assert point.checkpoint is not None
    assert point.checkpoint.content == (
        "Working on: Add a TTL cache; then (1 more) Bound it at 1,000 entries — last: Bounded it."
    )
    text = briefing.brief(store, project, Config(), "startup")
    assert "saved automatically): Add a TTL cache; then (1 more) Bound it at 1,000 entries" in text
    assert "hello" not in text and "thanks" not in text
