"""Link decay at the documented rates, pruning into the archive, regaining strength, verdicts."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import PROJECT

from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.errors import NotFoundError, ValidationError
from mama_plugin.schema import parse
from mama_plugin.schema.link_verdicts import RateLinkInput
from mama_plugin.server.base import Env
from mama_plugin.server.link_tools import do_rate_link
from mama_plugin.server.tool_table import BY_NAME
from mama_plugin.services.graph.decay import (
    DAY_MS,
    decayed,
    fade,
    prune_reason,
)
from mama_plugin.services.graph.tidy import orphan_strength
from mama_plugin.services.graph.traverse import traverse
from mama_plugin.services.graph.upkeep import archived, judge_link, prune, prune_if_due, restore
from mama_plugin.services.hygiene.forgetting import forget, redact
from mama_plugin.services.story.answers import search_by_context
from mama_plugin.storage import LinkRecord, NewMemory, Store
from mama_plugin.storage.link_state import LinkState
from mama_plugin.storage.relationship_words import WordUse

T0 = 1_000 * DAY_MS  # links are made then; "now" is T0 + days


def memory(store: Store, name: str, content: str = "", project: str = PROJECT) -> str:
    new = NewMemory(id=name, type="insight", project=project, content=content or f"memory {name}")
    return store.memories.insert(new)[0].id


def link(store: Store, a: str, b: str, word: str, confidence: float = 1.0) -> LinkRecord:
    return store.links.add(a, b, word, "because", confidence=confidence, created_at=T0)[0]


def at(days: float) -> int:
    return T0 + round(days * DAY_MS)


@pytest.fixture
def web(store: Store) -> Store:
    """a --precedes--> b (temporal), a --relates_to--> c (association, 0.8),
    a --implements--> d (implementation), e --supersedes--> a (evolution), all made at T0."""
    for name in "abcde":
        memory(store, name)
    link(store, "a", "b", "precedes")
    link(store, "a", "c", "relates to", 0.8)
    link(store, "a", "d", "implements")
    link(store, "e", "a", "supersedes")
    return store


def links_of(store: Store) -> dict[str, LinkRecord]:
    return {ln.relationship: ln for ln in store.links.iter()}


def test_worked_numbers_of_the_documented_rates(web: Store) -> None:
    ln = links_of(web)
    # conf × exp(−rate × days): half after ln 2 / rate days — 6.9, 13.9 and 34.7.
    assert decayed(ln["precedes"], at(7)) == pytest.approx(0.5, abs=0.005)
    assert decayed(ln["relates_to"], at(14)) == pytest.approx(0.5 * 0.8, abs=0.005)
    assert decayed(ln["implements"], at(35)) == pytest.approx(0.5, abs=0.005)
    assert decayed(ln["precedes"], at(1)) == pytest.approx(math.exp(-0.1))
    assert decayed(ln["relates_to"], at(30)) == pytest.approx(0.8 * math.exp(-1.5))
    assert decayed(ln["implements"], at(100)) == pytest.approx(math.exp(-2))
    assert decayed(ln["supersedes"], at(10_000)) == 1.0  # evolution never fades
    assert decayed(ln["precedes"], T0 - DAY_MS) == 1.0  # no negative age


def test_orphan_words_fade_by_the_same_formula() -> None:
    word = WordUse("refines_x", "association", 1, 0, 0, 1.0)
    for days in (0, 7, 16.1, 90):
        expected = fade(days, 0.05 * 2.0)  # exp(−0.05 × days × orphan penalty 2)
        assert orphan_strength(word, round(days * DAY_MS)) == pytest.approx(expected)
    assert orphan_strength(word, round(16.1 * DAY_MS)) == pytest.approx(0.2, abs=0.001)


def test_what_the_pass_prunes_and_when(web: Store) -> None:
    ln = links_of(web)
    # temporal: below 0.2 after ln 5 / 0.1 = 16.1 days; association at 0.8: ln 4 / 0.05 = 27.7
    assert prune_reason(ln["precedes"], at(16)) is None
    assert "strength 0.20 < 0.2" in (prune_reason(ln["precedes"], at(16.2)) or "")
    assert prune_reason(ln["relates_to"], at(27)) is None
    assert prune_reason(ln["relates_to"], at(28)) is not None
    assert prune_reason(ln["implements"], at(80)) is None  # 0.202
    assert prune_reason(ln["implements"], at(81)) is not None  # 0.198
    assert "temporal, unused for 31 days" in (prune_reason(ln["precedes"], at(31)) or "")
    assert prune_reason(ln["supersedes"], at(10_000)) is None
    # Records are kept whatever their strength: a replacing link (a superseded memory keeps
    # its successor) and an outcome event's link to its memory.
    memory(web, "f")
    weak = link(web, "f", "b", "supersedes", confidence=0.1)
    assert prune_reason(weak, at(500)) is None
    event = link(web, "f", "c", "outcome_of")  # how forgetting c finds f, its outcome event
    assert event.link_category == "implementation" and prune_reason(event, at(500)) is None


def test_temporal_links_older_than_thirty_days_go_whatever_their_strength(web: Store) -> None:
    ln = links_of(web)["precedes"]
    used = LinkRecord(**{**ln.as_dict(), "used_at": at(20)})  # used on day 20: strong again
    assert decayed(used, at(21)) > 0.9 and prune_reason(used, at(21)) is None
    assert prune_reason(used, at(50.5)) is not None  # 30.5 days after its last use


def test_prune_archives_and_restore_puts_back(web: Store) -> None:
    before = web.meta("links_version")
    listed = prune(web, dry_run=True, now=at(30))
    assert sorted(s.link.relationship for s, _ in listed.pruned) == ["precedes", "relates_to"]
    assert len(list(web.links.iter())) == 4 and web.meta("links_version") == before
    assert "would archive 2 links" in listed.lines()[-1]
    done = prune(web, now=at(30))
    assert sorted(links_of(web)) == ["implements", "supersedes"]
    kept = archived(web, PROJECT)
    assert sorted(a.link.relationship for a in kept) == ["precedes", "relates_to"]
    assert all(a.archived_at == at(30) and a.why.startswith("strength ") for a in kept)
    assert [s.link.id for s, _ in done.pruned] == sorted(a.link.id for a in kept)
    assert archived(web, "/another") == []
    # Restored: the same link, its id kept, counted as used now so it does not fade at once.
    old = next(a.link for a in kept if a.link.relationship == "relates_to")
    back, restored = restore(web, old.id, now=at(40))
    assert restored and back.link.id == old.id and back.link.used_at == at(40)
    assert back.strength == pytest.approx(0.8) and back.link.created_at == T0
    assert "c" in [s.memory_id for s in traverse(web, "a", now=at(40))]
    assert prune(web, dry_run=True, now=at(41)).pruned == []
    with pytest.raises(NotFoundError, match="no archived link"):
        restore(web, old.id)
    # Made again meanwhile: the archived copy goes, the live link stays.
    gone = next(a.link for a in kept if a.link.relationship == "precedes")
    link(web, "a", "b", "precedes")
    again, restored = restore(web, gone.id)
    assert not restored and again.link.relationship == "precedes"
    assert archived(web, None) == []


def test_archived_links_leave_with_their_memory_and_are_redacted(web: Store) -> None:
    web.links.add("a", "c", "echoes", "the tiger-team plan", created_at=T0)
    prune(web, now=at(60))
    assert any(a.link.reason == "the tiger-team plan" for a in archived(web, PROJECT))
    redact(web, Config(), "tiger-team")
    assert all("tiger" not in a.link.reason for a in archived(web, PROJECT))
    forget(web, Config(), "c")
    assert all("c" not in (a.link.from_id, a.link.to_id) for a in archived(web, PROJECT))
    assert archived(web, PROJECT)  # a—b is still there


def test_prune_if_due_runs_once_a_day(web: Store) -> None:
    assert prune_if_due(web, now=at(30)) is not None
    assert prune_if_due(web, now=at(30.5)) is None
    assert prune_if_due(web, now=at(31.1)) is not None


def test_a_link_told_with_both_its_ends_regains_strength(store: Store) -> None:
    memory(store, "redis", "we cache sessions in redis for speed")
    memory(store, "ttl", "redis session keys expire after one hour")
    memory(store, "css", "the buttons are blue")
    used = link(store, "ttl", "redis", "relates to")
    other = link(store, "css", "redis", "relates to")
    assert decayed(used, at(20)) == pytest.approx(math.exp(-1))
    search_by_context(store, "redis session", project=PROJECT, record_usage=False)
    assert LinkState(store).get(used.id).used_at is None  # a search that counts no uses
    answer = search_by_context(store, "redis session", project=PROJECT)
    told = {r.id for r in answer.primary_results}
    assert {"redis", "ttl"} <= told and "css" not in told
    fresh = {ln.id: ln for ln in store.links.iter()}
    again = fresh[used.id]
    assert again.used_at is not None and again.used_at > T0
    assert decayed(again, again.used_at) == 1.0  # faded from its last use: whole again
    assert fresh[other.id].used_at is None
    # Not for a link with one end told; a later use never moves the time back.
    assert LinkState(store).reinforce(["redis"]) == 0
    assert LinkState(store).reinforce(["redis", "ttl", "nothing"], at=1) == 1
    assert LinkState(store).get(used.id).used_at == again.used_at  # never moved back


def test_down_vote_and_delete(web: Store) -> None:
    ln = links_of(web)
    walked = traverse(web, "a", now=at(1))
    judged = judge_link(web, ln["relates_to"].id, "down", now=at(1))
    assert judged.link.link.confidence == pytest.approx(0.4)
    assert judged.link.strength == pytest.approx(0.4 * math.exp(-0.05))
    assert "confidence now 0.40" in judged.summary()
    step = next(s for s in traverse(web, "a", now=at(1)) if s.memory_id == "c")
    assert step.confidence == pytest.approx(judged.link.strength)  # the cached walk was dropped
    assert walked != traverse(web, "a", now=at(1))
    judge_link(web, ln["relates_to"].id, "down")
    assert prune_reason(LinkState(web).get(ln["relates_to"].id), at(1)) is not None  # 0.19
    gone = judge_link(web, ln["implements"].id, "delete")
    assert "Deleted link" in gone.summary() and "implements" not in links_of(web)
    with pytest.raises(NotFoundError, match="no link has id"):
        judge_link(web, ln["implements"].id, "down")
    with pytest.raises(ValidationError, match="verdict must be one of down, delete"):
        judge_link(web, ln["precedes"].id, "up")


def test_deleting_the_only_replacing_link_makes_its_target_current_again(web: Store) -> None:
    assert web.memories.require("a").status == "superseded"
    judged = judge_link(web, links_of(web)["supersedes"].id, "delete")
    assert judged.current_again and web.memories.require("a").status == "current"
    assert "a is current again" in judged.summary()


def test_rate_link_tool(web: Store) -> None:
    env = Env(web, PROJECT, None, config=Config())
    target = links_of(web)["precedes"].id
    answer = do_rate_link(env, parse(RateLinkInput, {"link_id": target, "verdict": "down"}))
    assert "Down-voted link" in answer.text and answer.data["link"]["confidence"] == 0.5
    answer = do_rate_link(env, parse(RateLinkInput, {"link_id": target, "verdict": "delete"}))
    assert answer.data["verdict"] == "delete" and "precedes" not in links_of(web)
    with pytest.raises(ValidationError):
        parse(RateLinkInput, {"link_id": target, "verdict": "up"})
    assert BY_NAME["rate_link"].destructive


def test_cli_link_and_graph_prune_archived_restore(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "mama.db"
    with Store.open(db, config=Config()) as store:
        for name in "xyz":
            store.memories.insert(
                NewMemory(id=name, type="insight", project=str(tmp_path), content=name)
            )
        old = store.links.add("x", "y", "relates to", "long ago", created_at=T0)[0]
        new = store.links.add("x", "z", "relates to", "just now")[0]
    run = ["--db", str(db)]
    assert main([*run, "link", "show", f"#{new.id}"]) == 0
    assert f"#{new.id} x --relates_to--> z (strength 1.00 of 1.00)" in capsys.readouterr().out
    assert main([*run, "link", "down", str(new.id)]) == 0
    assert "confidence now 0.50" in capsys.readouterr().out
    assert main([*run, "show", "x"]) == 0
    shown = capsys.readouterr().out
    assert f"#{new.id} relates_to → z (association, strength 0.50)" in shown
    assert f"#{old.id} relates_to → y (association, strength 0.00)" in shown
    assert main([*run, "graph", "tidy", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"#{old.id} x --relates_to--> y" in out and "would archive 1 link" in out
    assert main([*run, "graph", "prune", "--json"]) == 0
    assert [p["id"] for p in json.loads(capsys.readouterr().out)["pruned"]] == [old.id]
    where = [*run, "graph", "archived", "--project", str(tmp_path)]
    assert main(where) == 0
    assert f"#{old.id} x --relates_to--> y (confidence 1.00), archived" in capsys.readouterr().out
    assert main([*run, "graph", "restore", str(old.id)]) == 0
    assert f"Restored #{old.id}" in capsys.readouterr().out
    assert main(where) == 0 and "No archived links" in capsys.readouterr().out
    assert main([*run, "link", "delete", str(old.id)]) == 0
    assert main([*run, "link", "show", str(old.id)]) == 1
    assert "no link has id" in capsys.readouterr().err
    assert main([*run, "link", "down", "abc"]) == 1
    assert "a link id is a number" in capsys.readouterr().err
    assert main([*run, "graph", "restore"]) == 1
    assert main([*run, "graph", "synonyms", "x", "--dry-run"]) == 1
    assert "--dry-run goes with tidy or prune" in capsys.readouterr().err


def test_load_context_tells_links_with_their_strength_and_uses_them(web: Store) -> None:
    from mama_plugin.schema import LoadContextInput
    from mama_plugin.server.tools import do_load_context

    env = Env(web, PROJECT, None, config=Config())
    ids = {ln.relationship: ln.id for ln in web.links.iter()}
    answer = do_load_context(env, parse(LoadContextInput, {"memory_id": "a", "depth": 1}))
    assert f"a relates_to c (#{ids['relates_to']}, strength " in answer.text
    # Told in one answer with both its ends: every link of a's neighbourhood was used now.
    assert all(ln.used_at is not None for ln in web.links.iter())


def test_graph_tidy_prunes_after_tidying_the_words(
    tmp_path: Path, built_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.db"
    with Store.open(db, config=Config()) as store:
        for name in "xyz":
            store.memories.insert(
                NewMemory(id=name, type="insight", project=str(tmp_path), content=name)
            )
        old = store.links.add("x", "y", "inspired by", "long ago", created_at=T0)[0]
        store.links.add("x", "z", "motivated by", "just now")
    assert main(["config", "set", "embedding_model_path", str(built_model)]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "graph", "tidy"]) == 0
    out = capsys.readouterr().out
    assert "Tidied 2 relationship words" in out
    assert f"#{old.id} x --inspired_by--> y" in out and "archived 1 link" in out
    assert main(["--db", str(db), "graph", "tidy", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["words"] == 1 and data["links"] == {"dry_run": False, "pruned": []}
