"""Graph health, orphans and promotion, "what happened after", and the graph tools and CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import PROJECT

from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.errors import NotFoundError, ValidationError
from mama_plugin.project import project_key
from mama_plugin.schema import parse
from mama_plugin.schema.graph import FindLinksInput, GraphHealthInput
from mama_plugin.server.base import Env
from mama_plugin.server.graph_tools import do_find_links, do_graph_health
from mama_plugin.services.graph.decay import DAY_MS
from mama_plugin.services.graph.health import graph_health
from mama_plugin.services.graph.queries import what_happened_after
from mama_plugin.services.graph.tidy import ARCHIVE_BELOW, orphan_strength, promoted
from mama_plugin.storage import NewMemory, Store
from mama_plugin.storage.relationship_words import RelationshipWords, WordRow, WordUse

NOW = 400 * DAY_MS


def memory(store: Store, name: str, *, at: int = NOW, project: str = PROJECT) -> str:
    new = NewMemory(
        id=name, type="insight", project=project, content=f"memory {name}", created_at=at
    )
    return store.memories.insert(new)[0].id


def test_health_figures_of_a_known_graph(store: Store) -> None:
    # a—b—c—d one piece (a, d have one link each), e—f a second piece, g alone.
    for name in "abcdefg":
        memory(store, name)
    store.links.add("b", "a", "inspired_by", "r", created_at=NOW)
    store.links.add("c", "b", "inspired_by", "r", created_at=NOW)
    store.links.add("d", "c", "motivated_by", "r", created_at=NOW)
    store.links.add("f", "e", "refines_auth_jwt_token", "r", created_at=NOW - 90 * DAY_MS)
    h = graph_health(store, PROJECT, now=NOW)
    assert (h.memories, h.links) == (7, 4)
    assert h.isolated == 5  # a, d, e, f (one link each) and g (none)
    assert h.health == pytest.approx(1 - 5 / 7)
    assert h.components == 3 and h.largest_share == pytest.approx(4 / 7)
    assert h.words == 3 and h.diversity == pytest.approx(3 / 4)
    assert h.canonical_coverage == pytest.approx(3 / 4)  # inspired_by, motivated_by built in
    assert h.orphaned == ["inspired_by", "motivated_by", "refines_auth_jwt_token"]
    texts = [r.text for r in h.recommendations]
    assert "archive `refines_auth_jwt_token` (1 link, 90 days)" in texts[0]
    assert any(r.command == "mama graph tidy" for r in h.recommendations)
    assert any(r.command.startswith("mama links suggest ") for r in h.recommendations)
    assert graph_health(store, "/empty").health is None


def test_orphans_fade_and_busy_confident_words_are_promoted(store: Store) -> None:
    old = WordUse("w", "association", 1, 0, NOW - 20 * DAY_MS, 1.0)
    assert orphan_strength(old, NOW) == pytest.approx(2.718281828 ** (-0.05 * 20 * 2))
    assert orphan_strength(old, NOW) < ARCHIVE_BELOW  # 20 days unused: proposed
    fresh = WordUse("w", "association", 2, 0, NOW - 5 * DAY_MS, 1.0)
    assert orphan_strength(fresh, NOW) > ARCHIVE_BELOW
    assert orphan_strength(WordUse("w", "association", 3, 0, 0, 1.0), NOW) is None
    for i in range(13):
        memory(store, f"p{i}")
    for i in range(12):  # 11 links of builds_on in the month, confident; 1 of drives
        word, confidence = ("builds_on", 0.9) if i < 11 else ("drives", 0.9)
        store.links.add(f"p{i}", f"p{i + 1}", word, "r", confidence=confidence, created_at=NOW)
    assert promoted(store, NOW) == {"builds_on"}
    assert promoted(store, NOW + 31 * DAY_MS) == set()  # outside the 30 days


def test_a_merge_recommendation_acted_on_end_to_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, project = tmp_path / "h.db", project_key(str(tmp_path))
    with Store.open(db, config=Config()) as store:
        for name in "abcde":
            memory(store, name, project=project)
        for a, b, word in (
            ("b", "a", "inspired_by"),
            ("c", "b", "inspired_by"),
            ("d", "c", "sparked_by"),
            ("e", "d", "sparked_by"),
        ):
            store.links.add(a, b, word, "r")
        # What `mama graph tidy` records when the two words cluster.
        RelationshipWords(store).put(
            [
                WordRow("inspired_by", "inspired_by", 1, "association", 1.0, "tidy", 0),
                WordRow("sparked_by", "inspired_by", 1, "association", 1.0, "tidy", 0),
            ]
        )
    where = ["--db", str(db), "graph", "health", "--project", str(tmp_path)]
    assert main(where) == 0
    out = capsys.readouterr().out
    assert "merge `sparked_by` into `inspired_by` (2 links)" in out
    assert "mama graph merge sparked_by inspired_by" in out
    assert "canonical coverage 50%" in out
    assert main(["--db", str(db), "graph", "merge", "sparked_by", "inspired_by"]) == 0
    assert "`sparked_by` now stands for `inspired_by`" in capsys.readouterr().out
    assert main([*where, "--json"]) == 0
    after = json.loads(capsys.readouterr().out)
    assert after["canonical_coverage"] == 1.0
    assert not [r for r in after["recommendations"] if "merge" in r["text"]]
    links = ["--db", str(db), "links", "--project", str(tmp_path), "--json"]
    assert main([*links, "--relationship", "inspired_by", "--keyword-only"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert sorted(ln["relationship"] for ln in found["links"]) == [
        "inspired_by", "inspired_by", "sparked_by", "sparked_by",
    ]  # fmt: skip
    with Store.open(db, config=Config()) as store:  # into a merged word: its canonical one
        store.memories.insert(NewMemory(id="f", type="insight", project=project, content="f"))
        store.links.add("f", "e", "kindled_by", "r")
        assert RelationshipWords(store).merge("kindled_by", "sparked_by") == 3
        assert RelationshipWords(store).all()["kindled_by"].canonical == "inspired_by"
    assert main(["--db", str(db), "graph", "merge", "nothing_uses", "inspired_by"]) == 1
    assert "no link uses 'nothing_uses'" in capsys.readouterr().err
    assert main(["--db", str(db), "graph", "merge", "sparked_by"]) == 1


def test_what_happened_after(store: Store) -> None:
    day = DAY_MS
    for name, at in (("x", NOW), ("cp", NOW + day), ("ev", NOW + 2 * day), ("next", NOW + 3 * day),
                     ("late", NOW + 30 * day), ("before", NOW - day), ("side", NOW + day)):  # fmt: skip
        memory(store, name, at=at)
    store.links.add("cp", "x", "implements", "r", created_at=NOW + day)
    store.links.add("ev", "cp", "outcome_of", "r", created_at=NOW + 2 * day)
    store.links.add("ev", "next", "precedes", "r", created_at=NOW + 3 * day)
    store.links.add("late", "x", "implements", "r", created_at=NOW + 30 * day)  # past the week
    store.links.add("x", "before", "follows", "r", created_at=NOW)  # earlier in time
    store.links.add("side", "x", "inspired_by", "r", created_at=NOW + day)  # not forward
    after = what_happened_after(store, "x")
    assert [(s.depth, m.id) for s, m in after.steps] == [(1, "cp"), (2, "ev"), (3, "next")]
    wide = what_happened_after(store, "x", window_days=60)
    assert "late" in [m.id for _, m in wide.steps]
    assert [m.id for _, m in what_happened_after(store, "x", depth=1).steps] == ["cp"]
    with pytest.raises(ValidationError, match="depth"):
        what_happened_after(store, "x", depth=6)
    with pytest.raises(ValidationError, match="window"):
        what_happened_after(store, "x", window_days=0)
    with pytest.raises(NotFoundError):
        what_happened_after(store, "nope")


def test_the_graph_tools(store: Store) -> None:
    for name in "abc":
        memory(store, name)
    store.links.add("b", "a", "implements", "checkpoint for a", created_at=NOW)
    store.links.add("c", "a", "inspired_by", "c took a's idea", created_at=NOW)
    env = Env(store, PROJECT, None, config=Config())
    found = do_find_links(env, parse(FindLinksInput, {"relationship": "Inspired By"}))
    assert "c --inspired_by--> a" in found.text and "c took a's idea" in found.text
    assert [ln["from_id"] for ln in found.data["links"]] == ["c"]
    after = do_find_links(env, parse(FindLinksInput, {"after": "a", "window_days": 3650}))
    assert [m["id"] for m in after.data["after"]] == ["b"]
    health = do_graph_health(env, parse(GraphHealthInput, {}))
    assert health.data["components"] == 1 and "health" in health.text
    for bad in ({}, {"relationship": "x", "after": "a"}):
        with pytest.raises(ValidationError, match="exactly one"):
            parse(FindLinksInput, bad)
    with pytest.raises(ValidationError, match="relationship"):
        do_find_links(env, parse(FindLinksInput, {"relationship": "!!"}))


def test_walks_stop_at_five_hops_and_stats_carry_the_health(store: Store) -> None:
    from mama_plugin.services.graph.traverse import MAX_DEPTH, traverse
    from mama_plugin.services.hygiene.stats import project_stats

    for i in range(9):
        memory(store, f"c{i}")
    for i in range(8):
        store.links.add(f"c{i + 1}", f"c{i}", "refines", "r", created_at=NOW)
    deep = traverse(store, "c8", max_depth=9, direction="forward")
    assert MAX_DEPTH == 5 and [s.memory_id for s in deep] == [f"c{i}" for i in (7, 6, 5, 4, 3)]
    stats = project_stats(store, PROJECT)
    assert stats.graph is not None and stats.graph.isolated == 2  # c0 and c8: one link each
    assert stats.as_dict()["graph"]["components"] == 1
