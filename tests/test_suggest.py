"""Link suggestions (proposed, never links by themselves), the tools around them, and stats."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import DESKTOP as CLIENT
from conftest import JWT as STORY_JWT
from conftest import SESSIONS as STORY_SESSIONS
from conftest import connect, tell_story
from conftest import text_result as text

from mama_plugin.assist import suggest
from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.errors import NotFoundError, ValidationError
from mama_plugin.server.background import suggest_in_background
from mama_plugin.server.state import State
from mama_plugin.services.hygiene.stats import project_stats
from mama_plugin.services.saving.memories import record_outcome, save_decision, save_insight
from mama_plugin.services.saving.quality import completeness, reason_quality
from mama_plugin.services.story.autosave import checkpoint_turn
from mama_plugin.storage import Store
from mama_plugin.transcript import Digest

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
JWT = {**STORY_JWT, "decision": "JWT for API auth", "reasoning": "stateless tokens scale out"}
FAILED = {"outcome": "FAILED", "details": "p99 307 ms at 10K req/s: refresh hit the DB"}
SESSIONS = {**STORY_SESSIONS, "reasoning": "token refresh hit the DB on every call at 10K req/s"}


@pytest.fixture
def no_model(mama_home: Path) -> None:
    """Rules judge: the round trips below must not depend on a 270M model's mood."""
    Config(mama_home).set("assist_model_path", "off")


@pytest.fixture
def state(no_model: None, state: State) -> State:
    """The MCP server's state on a fresh store, with the model off."""
    return state


def jwt_then_sessions(store: Store, project: str) -> tuple[str, str]:
    told = tell_story(store, project, jwt=JWT, failed=FAILED, sessions=SESSIONS, supersede=False)
    return told.jwt, told.sessions


# -- the store ------------------------------------------------------------------------------


def test_a_pair_is_judged_once_and_a_verdict_is_given_once(store: Store, project: str) -> None:
    jwt, sessions = jwt_then_sessions(store, project)
    made = store.suggestions.add(project, sessions, jwt, "refines", "sessions replaced JWT",
                                judged_by="rules", sources=["same_topic_week"])  # fmt: skip
    assert made is not None and made.status == "pending" and made.sources == ["same_topic_week"]
    assert store.suggestions.add(project, sessions, jwt, "supersedes", "again",
                                judged_by="llm") is None  # fmt: skip
    assert store.suggestions.judged_pairs([jwt]) == {(sessions, jwt)}
    rejected = store.suggestions.decide(made.id, "rejected", decided_by="user")
    assert rejected.status == "rejected" and rejected.decided_at
    assert store.suggestions.decide(made.id, "accepted", decided_by="user").status == "rejected"
    with pytest.raises(NotFoundError, match="no link suggestion #999"):
        store.suggestions.require(999)
    store.memories.delete(jwt)  # suggestions go with their memories
    assert store.suggestions.of_project(project, status=None) == []


def test_the_privacy_filter_runs_on_suggested_reasons(store: Store, project: str) -> None:
    jwt, sessions = jwt_then_sessions(store, project)
    made = store.suggestions.add(project, sessions, jwt, "refines",
                                "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345 leaked",
                                judged_by="llm")  # fmt: skip
    assert made is not None and "abcdefghijklmnop" not in made.reason


# -- candidates, rules and the round trip --------------------------------------------------------


def test_rules_propose_with_their_facts_and_search_alone_proposes_nothing(
    store: Store, project: str
) -> None:
    jwt, sessions = jwt_then_sessions(store, project)
    save_decision(store, project, {"topic": "ci", "decision": "Lint with ruff",
                                   "reasoning": "fast on this repo"})  # fmt: skip
    made = suggest.suggest_for(store, sessions)  # no model, no embedder
    assert [(s.from_id, s.to_id, s.relationship, s.judged_by) for s in made] == [
        (sessions, jwt, "addresses_failure_of", "rules")]  # fmt: skip
    assert "FAILED (p99 307 ms at 10K req/s" in made[0].reason
    assert reason_quality(made[0].reason) == "causal"
    assert set(made[0].sources) >= {"same_topic_15min"}
    assert store.links.of_project(project) == [  # a suggestion is not a link
        *store.links.among([sessions], direction="out")
    ]
    assert not any(ln.to_id == jwt and ln.from_id == sessions
                   for ln in store.links.of_project(project))  # fmt: skip
    assert suggest.suggest_for(store, sessions) == []  # judged pairs are not judged again


def test_outcome_events_and_rolling_checkpoints_are_not_candidates(
    store: Store, project: str
) -> None:
    jwt, sessions = jwt_then_sessions(store, project)
    event = save_insight(store, project, {
        "topic": "auth_strategy", "content": "Outcome FAILED of JWT for API auth: refresh hit the DB",
        "links": [{"to_id": jwt, "relationship": "outcome_of", "reason": "FAILED at 10K req/s"}],
    }).memory.id  # fmt: skip
    digest = Digest(user_requests=["move auth to server-side sessions in Redis"])
    rolling = checkpoint_turn(store, project, session_id="s1", digest=digest)
    assert rolling is not None
    others = {c.other.id for c in suggest.candidates(store, store.memories.require(sessions))}
    assert jwt in others and event not in others and rolling.id not in others


@pytest.mark.anyio
async def test_suggest_accept_reject_round_trip_through_the_tools(
    state: State, tmp_path: Path, mama_home: Path, project: str
) -> None:
    async with connect(state, CLIENT) as c:
        jwt, sessions = jwt_then_sessions(state.store, project)
        ruff = save_decision(state.store, project, {
            "topic": "ci", "decision": "Lint with ruff", "reasoning": "fast"}).memory.id  # fmt: skip
        found = await c.call_tool("suggest_links", {"memory_id": sessions})
        assert not found.is_error, text(found)
        [row] = found.structured_content["suggestions"]
        assert (row["from_id"], row["to_id"], row["status"]) == (sessions, jwt, "pending")
        assert "evolve_link" in text(found) and f"#{row['id']}" in text(found)

        accepted = await c.call_tool("evolve_link", {"suggestion_id": row["id"],
                                                     "verdict": "ACCEPT"})  # fmt: skip
        assert not accepted.is_error, text(accepted)
        link = accepted.structured_content["link"]
        assert (link["from_id"], link["to_id"], link["created_by"]) == (sessions, jwt, "system")
        assert link["reason"] == row["reason"]
        again = await c.call_tool("evolve_link", {"suggestion_id": row["id"],
                                                  "verdict": "reject"})  # fmt: skip
        assert again.is_error and "already accepted" in text(again)

        # A person's own words: the link is theirs.
        other = state.store.suggestions.add(project, ruff, jwt, "relates_to", "both are CI",
                                           judged_by="llm")  # fmt: skip
        assert other is not None
        edited = await c.call_tool("evolve_link", {
            "suggestion_id": other.id, "verdict": "accept", "relationship": "depends on",
            "reason": "ruff runs in the pipeline that JWT tests used"})  # fmt: skip
        assert edited.structured_content["link"]["created_by"] == "user"
        assert edited.structured_content["link"]["relationship"] == "depends_on"

        third = state.store.suggestions.add(project, ruff, sessions, "refines", "x y z w v",
                                           judged_by="llm")  # fmt: skip
        assert third is not None
        no = await c.call_tool("evolve_link", {"suggestion_id": third.id, "verdict": "reject"})
        assert not no.is_error and "will not be proposed again" in text(no)
        missing = await c.call_tool("evolve_link", {"suggestion_id": 999, "verdict": "accept"})
        assert missing.is_error and "no link suggestion #999" in text(missing)
        listed = await c.call_tool("suggest_links", {})
        assert listed.structured_content["suggestions"] == []

    stats = project_stats(state.store, project)
    assert stats.suggestions["accepted"] == 2 and stats.suggestions["rejected"] == 1
    assert stats.acceptance_rate == pytest.approx(2 / 3)
    assert stats.links_by["system"] == 1 and stats.links_by["user"] == 1


@pytest.mark.anyio
async def test_a_save_queues_suggestions_judged_in_the_background(
    state: State, tmp_path: Path, mama_home: Path, project: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with connect(state, CLIENT) as c:
        jwt, _ = jwt_then_sessions(state.store, project)
        saved = await c.call_tool("save_decision", {
            "topic": "auth_strategy", "decision": "Opaque tokens checked against Redis",
            "reasoning": "JWT refresh hit the DB at 10K req/s"})  # fmt: skip
        new = saved.structured_content["id"]
        assert state.session.suggest_queue == [new]
        judged, suggest_for = anyio.Event(), suggest.suggest_for

        def suggest_then_tell(*args: Any, **kwargs: Any) -> Any:
            made = suggest_for(*args, **kwargs)
            anyio.from_thread.run_sync(judged.set)  # the judging runs in a worker thread
            return made

        monkeypatch.setattr(suggest, "suggest_for", suggest_then_tell)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(suggest_in_background, state)
            deadline = time.monotonic() + 20
            with anyio.move_on_after(20):
                await judged.wait()
            assert time.monotonic() < deadline, "the background suggester never ran"
            tasks.cancel_scope.cancel()
    made = state.store.suggestions.of_project(project, memory_id=new)
    assert {s.to_id for s in made} >= {jwt} and all(s.status == "pending" for s in made)
    Config(mama_home).set("link_suggestions", "false")
    async with connect(state, CLIENT) as c:
        await c.call_tool("save_insight", {"content": "Redis needs sentinel for HA"})
    assert state.session.suggest_queue == []


# -- drafting through the tool ------------------------------------------------------------------


@pytest.mark.anyio
async def test_save_decision_draft_proposes_and_saves_nothing_then_the_proposal_saves(
    state: State, tmp_path: Path, mama_home: Path, project: str
) -> None:
    transcript = str(FIXTURES / "postgres_job_queue.jsonl")
    async with connect(state, CLIENT) as c:
        # The session's transcript is learned from the hooks, as in Claude Code.
        await c.call_tool("checkpoint_turn", {"session_id": "s1", "transcript_path": transcript})
        before = state.store.memories.counts()["memories"]
        drafted = await c.call_tool("save_decision", {
            "decision": "Use PostgreSQL for the job queue", "draft": True})  # fmt: skip
        assert not drafted.is_error, text(drafted)
        data = drafted.structured_content
        assert data["saved"] is False and data["transcript"] == transcript
        assert state.store.memories.counts()["memories"] == before
        assert "NOT saved" in text(drafted) and "assist_model_path is off" in text(drafted)
        proposal = data["proposal"]
        assert "SKIP LOCKED handled 2,140 jobs/s" in proposal["reasoning"]["primary"]
        assert {"source": "migrations/004_jobs.sql:1-13", "kind": "file",
                "detail": "created"} in proposal["evidence"]  # fmt: skip
        # The text shows every field of the proposal, each fact once (no JSON copy).
        shown = text(drafted)
        told = [proposal["reasoning"]["primary"], *proposal["specifics"],
                *(e["source"] for e in proposal["evidence"] if e["kind"] == "file"),
                *(s["step"] for s in proposal["next_steps"]),
                *(t for items in proposal["tension"].values() for t in items)]  # fmt: skip
        assert all(shown.count(fact) == 1 for fact in told), [
            f for f in told if shown.count(f) != 1
        ]
        # A command is named by its evidence and by the tension item its failure is (once).
        assert all(e["source"] in shown for e in proposal["evidence"])
        assert '"topic":' not in shown
        saved = await c.call_tool("save_decision", proposal)
        assert not saved.is_error and text(saved).startswith("Saved decision")
        wrong = await c.call_tool("save_decision", {"topic": "t", "decision": "d",
                                                    "reasoning": "r", "context": "notes"})  # fmt: skip
        assert wrong.is_error and "only read with draft=true" in text(wrong)


@pytest.mark.anyio
async def test_a_draft_waits_for_its_own_call_to_reach_the_transcript(
    state: State, tmp_path: Path, mama_home: Path, project: str
) -> None:
    # Claude Code gives each tool call an id (_meta "claudecode/toolUseId") and appends the
    # transcript in batches: the draft reads once the line with its own call is on disk.
    lines = (FIXTURES / "postgres_job_queue.jsonl").read_bytes().splitlines(keepends=True)
    call = json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_01draft", "name": "save_decision", "input": {}}]}})  # fmt: skip
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(lines[:6]))  # the why (line 8 on) is still in Claude Code's queue
    async with connect(state, CLIENT) as c:
        await c.call_tool("checkpoint_turn", {"session_id": "s1", "transcript_path": str(path)})
        reader = state.session.reader(str(path))
        settling, read = threading.Event(), reader.read

        def read_and_tell() -> Digest:
            digest = read()
            settling.set()  # the draft has read the file without its call and waits
            return digest

        reader.read = read_and_tell  # type: ignore[method-assign]
        async with anyio.create_task_group() as tasks:

            async def land_later() -> None:
                await anyio.to_thread.run_sync(settling.wait, 20)
                await anyio.sleep(0.6)  # Claude Code's batch lag, what the draft must wait out
                path.write_bytes(b"".join(lines) + call.encode() + b"\n")

            tasks.start_soon(land_later)
            drafted = await c.call_tool(
                "save_decision", {"decision": "Use PostgreSQL for the job queue",
                                  "draft": True}, meta={"claudecode/toolUseId": "toolu_01draft"},
            )  # fmt: skip
    assert not drafted.is_error, text(drafted)
    primary = drafted.structured_content["proposal"]["reasoning"]["primary"]
    assert "SKIP LOCKED handled 2,140 jobs/s" in primary, text(drafted)
    assert drafted.structured_content["transcript_wait_s"] >= 0.5  # the batch came at 0.6 s


# -- stats ----------------------------------------------------------------------------------


def test_stats_measure_the_narratives(store: Store, project: str) -> None:
    full = {"topic": "queue", "decision": "Postgres for jobs",
            "reasoning": {"primary": "SKIP LOCKED handled 2,140 jobs/s in the load test, 4x peak",
                          "alternatives_considered": ["Redis"]},
            "evidence": ["bench/queue.txt:9"], "specifics": ["2,140 jobs/s"],
            "next_steps": ["tune autovacuum"]}  # fmt: skip
    thin = {"topic": "ci", "decision": "ruff", "reasoning": "fast"}
    a = save_decision(store, project, full).memory
    b = save_decision(store, project, thin).memory
    assert (completeness(a), completeness(b)) == (5, 0)
    record_outcome(store, {"memory_id": b.id, "outcome": "SUCCESS", "details": "CI 40 s faster"})
    store.links.add(a.id, b.id, "relates_to", "related")
    store.links.add(a.id, b.id, "motivated_by", "ruff made CI fast enough to run the load test")
    stats = project_stats(store, project)
    assert stats.decisions == 2 and stats.non_trivial_reasoning == 0.5
    assert stats.completeness_mean == 2.5 and stats.completeness[5] == 1
    assert stats.with_outcome == 0.5 and stats.outcomes == {"PENDING": 1, "SUCCESS": 1}
    # The outcome is also an insight linked outcome_of: three links in all.
    assert stats.link_reasons["trivial"] == 1 and stats.link_reasons["basic"] >= 1
    assert stats.acceptance_rate is None


def test_mama_stats_and_links_on_the_command_line(
    mama_home: Path, project: str, capsys: pytest.CaptureFixture[str], no_model: None
) -> None:
    with Store.open(config=Config(mama_home)) as store:
        jwt, sessions = jwt_then_sessions(store, project)
        [made] = suggest.suggest_for(store, sessions)
    assert main(["links", "--project", project]) == 0
    out = capsys.readouterr().out
    assert f"#{made.id} [pending] {sessions} --addresses_failure_of--> {jwt}" in out
    assert main(["links", "accept", str(made.id)]) == 0
    assert "reason by system" in capsys.readouterr().out
    assert main(["links", "reject", str(made.id)]) == 1
    assert "already accepted" in capsys.readouterr().err
    assert main(["stats", "--project", project]) == 0
    out = capsys.readouterr().out
    assert "Decisions: 2" in out and "acceptance rate:                     100%" in out
    assert main(["stats", "--project", project, "--json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert data["acceptance_rate"] == 1.0 and data["suggestions"]["accepted"] == 1


def test_accept_refuses_a_supersede_cycle(store: Store, project: str) -> None:
    jwt, sessions = jwt_then_sessions(store, project)
    store.links.add(sessions, jwt, "supersedes", "JWT failed at 10K req/s")
    made = store.suggestions.add(project, sessions, jwt, "refines", "x", judged_by="llm")
    assert made is not None
    bad = store.suggestions.add(project, jwt, sessions, "supersedes", "backwards",
                               judged_by="llm")  # fmt: skip
    assert bad is not None
    with pytest.raises(ValidationError, match="cycle"):
        suggest.accept(store, bad.id, decided_by="user")
    assert store.suggestions.require(bad.id).status == "pending"  # nothing written
