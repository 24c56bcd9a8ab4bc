"""Living memories: the dated notes a memory gains when later ones build on it, and the
evolution passes (on save, on acceptance, after an outcome, `mama evolve`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from conftest import DESKTOP, PROJECT, connect
from conftest import text_result as text
from test_share_git import Dev, _decide, team  # noqa: F401 (the fixture)

from mama_plugin.assist import suggest
from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.schema import OutcomeInput, parse
from mama_plugin.services.hygiene.forgetting import forget, redact
from mama_plugin.services.learning.living import evolve_pass, told
from mama_plugin.services.saving.memories import (
    record_outcome,
    save_checkpoint,
    save_decision,
    save_insight,
)
from mama_plugin.services.saving.outcomes import record_outcome_event
from mama_plugin.services.story.answers import search_by_context
from mama_plugin.storage import Store

if TYPE_CHECKING:
    from mama_plugin.server.state import State

DAY = r"\d{4}-\d\d-\d\d"


def _decision(store: Store, text: str, topic: str = "auth", **extra: object) -> str:
    data = {"topic": topic, "decision": text, "reasoning": {"primary": f"because {text}"}}
    return save_decision(store, PROJECT, data | extra).memory.id


def _built_on(store: Store, base: str, text: str = "Cache session lookups") -> str:
    link = {"to_id": base, "relationship": "builds_on", "reason": "reads the sessions"}
    return _decision(store, text, topic="caching", links=[link])


def _notes(store: Store, memory_id: str) -> list[str]:
    return told(store, [memory_id], latest=None).get(memory_id, [])


def test_a_save_with_a_link_gives_the_existing_memory_a_dated_note(store: Store) -> None:
    base = _decision(store, "Sessions in Redis")
    text_before = store.memories.require(base).content
    built = _built_on(store, base)
    (said,) = _notes(store, base)
    assert re.fullmatch(rf"a caching decision builds on this \({built}, {DAY}\)", said), said
    assert store.memories.require(base).content == text_before  # never rewritten
    assert _notes(store, built) == []  # the note is on the memory built on
    # A checkpoint carrying it out, a lesson learned from it: each a note, oldest first.
    cp = save_checkpoint(store, PROJECT, {"summary": "wired", "implements": [base]}).memory.id
    lesson = save_insight(
        store,
        PROJECT,
        {"topic": "ops", "content": "watch Redis memory",
         "links": [{"to_id": base, "relationship": "motivated_by", "reason": "it runs Redis"}]},
    ).memory.id  # fmt: skip
    notes = _notes(store, base)
    assert notes[1].startswith(f"a checkpoint implements this ({cp}, ")
    assert notes[2].startswith(f"an ops insight is motivated by this ({lesson}, ")


def test_replacing_and_outcome_links_make_no_note(store: Store) -> None:
    old = _decision(store, "JWT tokens")
    new = _decision(store, "Sessions", supersedes=old)
    record_outcome_event(
        store, parse(OutcomeInput, {"memory_id": new, "outcome": "SUCCESS", "details": "held"})
    )
    assert _notes(store, old) == [] and _notes(store, new) == []
    assert store.notes.count() == 0


def test_an_accepted_suggestion_gives_the_older_memory_a_note(store: Store) -> None:
    older = _decision(store, "Postgres for jobs", topic="jobs")
    newer = _decision(store, "Retry jobs with backoff", topic="retries")
    pending = store.suggestions.add(
        PROJECT, newer, older, "depends_on", "retries re-read the job table", judged_by="rules"
    )
    assert pending is not None
    assert _notes(store, older) == []  # a suggestion is not a link: no note yet
    _, link = suggest.accept(store, pending.id, decided_by="claude")
    (said,) = _notes(store, older)
    assert said.startswith(f"a retries decision depends on this ({newer}, ")
    assert link.to_id == older


def test_a_failed_outcome_notes_what_builds_on_it(store: Store) -> None:
    base = _decision(store, "JWT with refresh tokens")
    built = _built_on(store, base, "Refresh in the gateway")
    cp = save_checkpoint(store, PROJECT, {"summary": "gateway done", "implements": [base]})
    done = record_outcome_event(
        store, parse(OutcomeInput, {"memory_id": base, "outcome": "FAILED", "details": "p99"})
    )
    (warned,) = [n for n in done.notes if n.kind == "outcome"]
    assert warned.memory_id == built and warned.trigger_id == base
    (said,) = _notes(store, built)
    assert re.fullmatch(rf"the decision this builds on FAILED on {DAY} \({base}\)", said), said
    assert _notes(store, cp.memory.id) == []  # a checkpoint is a snapshot, not a claim
    # Once: recording it again as an evolve pass or a second look writes nothing more.
    assert evolve_pass(store).notes == []
    assert len(_notes(store, built)) == 1
    # A memory saved later on the failed decision is warned as it is saved.
    later = _built_on(store, base, "Rotate refresh keys")
    assert _notes(store, later)[0].startswith("the decision this builds on FAILED on ")


def test_record_outcome_is_the_one_path_that_learns_and_notes(store: Store) -> None:
    base = _decision(store, "Queue in Postgres", confidence=0.8)
    built = _built_on(store, base, "Batch the queue reads")
    judged = record_outcome(store, {"memory_id": base, "outcome": "FAILED", "details": "locks"})
    assert judged.outcome_status == "FAILED" and judged.confidence == pytest.approx(0.68)
    assert store.memories.require(built).confidence == pytest.approx(0.64)
    assert _notes(store, built)[0].startswith("the decision this builds on FAILED on ")
    with pytest.raises(Exception, match="unknown memory_id 'dec_nope'"):
        record_outcome(store, {"memory_id": "dec_nope", "outcome": "FAILED", "details": "x"})


def test_evolve_gives_links_without_a_note_theirs_once(store: Store) -> None:
    base = _decision(store, "Redis for sessions")
    other = _decision(store, "Rate limit per session", topic="limits")
    # A link written as an import or a teammate's sync writes it: no note with it.
    store.links.add(other, base, "depends_on", "counts per session", mark_target=False)
    assert _notes(store, base) == []
    first = evolve_pass(store)
    assert first.since is None and first.considered >= 2
    assert [(n.memory_id, n.trigger_id, n.kind) for n in first.notes] == [(base, other, "link")]
    assert _notes(store, base)[0].startswith(f"a limits decision depends on this ({other}, ")
    again = evolve_pass(store)
    assert again.since == first.at and again.notes == [] and store.notes.count() == 1
    # The next pass looks only at what was written or changed since: a memory untouched is
    # not read again.
    third = _decision(store, "Session TTL 24 h", topic="ttl")
    assert evolve_pass(store).considered == 1
    # A link an import writes keeps its old time: it is still new to the pass.
    store.links.add(third, base, "depends_on", "expiry", mark_target=False, created_at=1_000)
    late = evolve_pass(store)
    assert late.considered == 2 and [n.trigger_id for n in late.notes] == [third]


def test_notes_travel_with_an_export_and_go_with_either_memory(
    store: Store, tmp_path: Path
) -> None:
    from mama_plugin.transfer.dump import export_data, import_dump

    base = _decision(store, "Use Redis")
    built = _built_on(store, base, "Cache in Redis")
    record_outcome_event(
        store, parse(OutcomeInput, {"memory_id": base, "outcome": "FAILED", "details": "SPOF"})
    )
    data = json.loads(json.dumps(export_data(store)))
    assert {(r["memory_id"], r["kind"]) for r in data["memory_notes"]} == {
        (base, "link"),
        (built, "outcome"),
    }
    with Store.open(tmp_path / "copy.db", config=Config()) as copy:
        with copy.transaction():
            result = import_dump(copy, data)
        assert result.counts["memory_notes"]["imported"] == 2
        assert _notes(copy, base) == _notes(store, base)
        assert _notes(copy, built) == _notes(store, built)
        with copy.transaction():
            again = import_dump(copy, data)
        assert again.counts["memory_notes"]["already_present"] == 2
    bad = dict(data, memory_notes=[{"memory_id": base, "kind": "link"}])
    with (
        Store.open(tmp_path / "bad.db", config=Config()) as other,
        pytest.raises(Exception, match=r"memory_notes\[0\]"),
        other.transaction(),
    ):
        import_dump(other, bad)
    # Forgetting the memory built on it takes the note it caused and the one it had.
    forget(store, Config(), built)
    assert store.notes.count() == 0 and _notes(store, base) == []


def test_forgetting_the_noted_memory_takes_its_notes(store: Store) -> None:
    base = _decision(store, "Use Kafka")
    _built_on(store, base, "Consume in batches")
    assert store.notes.count() == 1
    forget(store, Config(), base)
    assert store.notes.count() == 0


def test_a_note_keeps_no_text_a_redaction_or_an_edit_could_leave_behind(store: Store) -> None:
    base = _decision(store, "Bill through the gateway")
    built = _decision(
        store,
        "Retry payments",
        topic="acmepay retries",
        links=[{"to_id": base, "relationship": "builds_on", "reason": "the gateway"}],
    )
    assert "acmepay retries decision" in _notes(store, base)[0]
    rows = store.conn.execute("SELECT * FROM memory_notes").fetchall()
    assert rows and not any("acmepay" in str(v) for row in rows for v in row)
    redact(store, Config(), "acmepay")
    (said,) = _notes(store, base)
    assert "acmepay" not in said and f"({built}, " in said


def test_a_removed_link_takes_its_note_out_of_the_answers(store: Store) -> None:
    base = _decision(store, "Use S3")
    built = _built_on(store, base, "Serve from CloudFront")
    store.conn.execute("DELETE FROM memory_links WHERE from_id = ?", (built,))
    assert _notes(store, base) == []


# -- where notes are told ----------------------------------------------------------------


def test_show_tells_the_latest_three_notes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cli.db"
    with Store.open(path, config=Config()) as store:
        base = _decision(store, "Sessions in Redis")
        built = [_built_on(store, base, f"Use sessions in service {i}") for i in range(4)]
    assert main(["--db", str(path), "show", base]) == 0
    out = capsys.readouterr().out
    section = out.split("**Since saved:**")[1].split("**Links:**")[0]
    assert "(1 earlier: `mama show" in section
    assert built[0] not in section and all(b in section for b in built[1:])
    assert main(["--db", str(path), "show", base, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["notes"]) == 4


def test_a_search_answer_tells_a_result_s_notes(store: Store) -> None:
    base = _decision(store, "Refresh tokens in Postgres", topic="tokens")
    built = _built_on(store, base, "Cache refresh tokens in memory")
    record_outcome_event(
        store, parse(OutcomeInput, {"memory_id": base, "outcome": "FAILED", "details": "slow"})
    )
    answer = search_by_context(store, "refresh tokens cache", project=PROJECT)
    item = next(r for r in answer.primary_results if r.id == built)
    assert item.notes and item.notes[0].startswith("the decision this builds on FAILED on ")
    assert f"Since saved:\n- {built}: the decision this builds on FAILED on " in answer.text


def test_cli_evolve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cli.db"
    with Store.open(path, config=Config()) as store:
        base = _decision(store, "Redis for sessions")
        other = _decision(store, "Rate limit per session", topic="limits")
        store.links.add(other, base, "depends_on", "counts per session", mark_target=False)
    assert main(["--db", str(path), "evolve"]) == 0
    out = capsys.readouterr().out
    assert "Evolve pass (first pass): " in out and "1 note written." in out
    assert f"  {base}: a limits decision depends on this ({other}, " in out
    assert main(["--db", str(path), "evolve", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["notes"] == [] and data["since"] is not None


# -- the tools -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_tools_tell_notes_and_run_the_passes(state: State) -> None:
    async with connect(state, DESKTOP) as c:
        saved = await c.call_tool(
            "save_decision",
            {"topic": "auth", "decision": "JWT", "reasoning": {"primary": "stateless"}},
        )
        jwt = saved.structured_content["id"]
        built = await c.call_tool(
            "save_decision",
            {"topic": "gateway", "decision": "Refresh in the gateway",
             "reasoning": {"primary": "JWT refresh"},
             "links": [{"to_id": jwt, "relationship": "builds_on", "reason": "JWT"}]},
        )  # fmt: skip
        gateway = built.structured_content["id"]
        await c.call_tool(
            "evolve_outcome", {"memory_id": jwt, "outcome": "FAILED", "details": "p99 307 ms"}
        )
        loaded = await c.call_tool("load_context", {"memory_id": gateway})
        assert "Since saved: the decision this builds on FAILED on " in text(loaded)
        assert loaded.structured_content["notes"][0].endswith(f"({jwt})")
        loaded = await c.call_tool("load_context", {"memory_id": jwt})
        assert f"Since saved: a gateway decision builds on this ({gateway}, " in text(loaded)
        # A link made the way an import makes it, then the pass that catches memory up.
        other = state.store.memories.require(gateway)
        ins = await c.call_tool(
            "save_insight", {"topic": "ops", "content": "gateway restarts drop refreshes"}
        )
        ins_id = ins.structured_content["id"]
        state.store.links.add(ins_id, other.id, "relates_to", "restarts", mark_target=False)
        caught = await c.call_tool("evolve_pass", {})
        assert "Learn pass (first pass)" in text(caught)
        assert f"{gateway}: an ops insight relates to this ({ins_id}, " in text(caught)
        assert [n["memory_id"] for n in caught.structured_content["evolve"]["notes"]] == [gateway]
        again = await c.call_tool("evolve_pass", {})
        assert "0 notes written." in text(again)


@pytest.mark.anyio
async def test_project_context_details_answer_decay_hubs_and_learned(state: State) -> None:
    from mama_plugin.services.learning.hubs import HUB_MIN

    store = state.store
    base = _decision(store, "Sessions in Redis", confidence=0.8)
    for i in range(HUB_MIN):
        _built_on(store, base, f"Service {i} reads sessions")
    record_outcome_event(
        store,
        parse(OutcomeInput, {"memory_id": base, "outcome": "SUCCESS", "details": "p99 4 ms",
                             "learned": ["one round trip beats a token refresh"]}),
    )  # fmt: skip
    old = 1_000_000_000_000  # 2001: stale for any kind
    save_insight(store, PROJECT, {"topic": "perf", "content": "p99 was 9 ms"}, created_at=old)
    async with connect(state, DESKTOP) as c:
        hubs = await c.call_tool("project_context", {"detail": "hubs"})
        assert f"{base} (decision, current) Sessions in Redis" in text(hubs)
        assert f"{HUB_MIN} references" in text(hubs)
        assert hubs.structured_content["hubs"][0]["id"] == base
        learned = await c.call_tool("project_context", {"detail": "learned"})
        assert "1 outcome (1 SUCCESS), success rate 100%" in text(learned)
        assert "one round trip beats a token refresh" in text(learned)
        stale = await c.call_tool("project_context", {"detail": "stale"})
        assert "p99 was 9 ms" in text(stale) and "expired" in text(stale)
        assert "evolve_outcome with VERIFIED" in text(stale)
        assert stale.structured_content["stale"][0]["content"] == "p99 was 9 ms"
        overview = await c.call_tool("project_context", {})
        assert f"Hubs: {base} ({HUB_MIN}" in text(overview)
        bad = await c.call_tool("project_context", {"detail": "everything"})
        assert bad.is_error and "detail" in text(bad)


def test_a_teammates_link_shared_through_the_repository_brings_its_note(
    team: tuple[Dev, Dev],  # noqa: F811
) -> None:
    alice, bob = team
    base = _decide(alice, "auth", "Use JWT", "stateless: no DB round trip")
    link = {"to_id": base, "relationship": "builds_on", "reason": "refreshes JWTs"}
    built = _decide(alice, "gateway", "Refresh in the gateway", "one hop", links=[link])
    (alice.clone / ".mama").mkdir()
    alice.share()
    alice.commit_and_push("auth decisions")
    bob.pull()
    assert "added 1 links" in bob.share("--import")
    with bob.store() as store:
        (said,) = _notes(store, base)
    assert said.startswith(f"a gateway decision builds on this ({built}, ")
