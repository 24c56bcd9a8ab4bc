"""Graph traversal: categories, direction, depth, confidence, time window, decay, cache."""

from __future__ import annotations

import pytest

from mama_plugin.config import Config
from mama_plugin.services.graph import traverse as graph
from mama_plugin.services.graph.decay import DAY_MS, decayed
from mama_plugin.services.graph.traverse import traverse
from mama_plugin.storage import NewMemory, Store


def _m(store: Store, name: str) -> str:
    return store.memories.insert(NewMemory(id=name, type="insight", project="/p", content=name))[
        0
    ].id


@pytest.fixture
def web(store: Store) -> Store:
    """a --supersedes--> b --refines--> c ; d --implements--> a ; e --relates_to--> d ; f --precedes--> a"""
    for name in "abcdef":
        _m(store, name)
    store.links.add("a", "b", "supersedes", "r", created_at=0)
    store.links.add("b", "c", "refines", "r", created_at=0)
    store.links.add("d", "a", "implements", "r", created_at=0)
    store.links.add("e", "d", "relates to", "r", confidence=0.5, created_at=0)
    store.links.add("f", "a", "precedes", "r", created_at=0)
    return store


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per graph walk: the walks the cache did not spare."""
    walked: list[int] = []
    real = graph._walk
    monkeypatch.setattr(graph, "_walk", lambda *a: walked.append(1) or real(*a))
    return walked


def ids(steps) -> list[str]:
    return [s.memory_id for s in steps]


def test_directions_and_depth(web: Store) -> None:
    assert ids(traverse(web, "a", direction="forward", max_depth=5, now=0)) == ["b", "c"]
    assert sorted(ids(traverse(web, "a", direction="backward", max_depth=1, now=0))) == ["d", "f"]
    both = traverse(web, "a", direction="both", max_depth=2, now=0)
    assert sorted(ids(both)) == ["b", "c", "d", "e", "f"]
    assert {s.memory_id: s.depth for s in both} == {"b": 1, "d": 1, "f": 1, "c": 2, "e": 2}
    assert traverse(web, "a", max_depth=0, now=0) == []


def test_categories_filter(web: Store) -> None:
    assert ids(traverse(web, "a", categories=["evolution"], max_depth=5, now=0)) == ["b", "c"]
    assert ids(traverse(web, "a", categories=["implementation"], max_depth=5, now=0)) == ["d"]
    assert ids(traverse(web, "a", categories=["temporal"], now=0)) == ["f"]


def test_confidence_multiplies_along_the_path_and_prunes(web: Store) -> None:
    steps = {s.memory_id: s for s in traverse(web, "a", max_depth=3, now=0)}
    assert steps["e"].confidence == pytest.approx(0.5) and steps["e"].came_from == "d"
    assert "e" not in ids(traverse(web, "a", max_depth=3, min_confidence=0.6, now=0))


def test_time_window(web: Store) -> None:
    _m(web, "late")
    web.links.add("late", "a", "relates to", "r", created_at=10 * DAY_MS)
    assert "late" not in ids(traverse(web, "a", until=DAY_MS, now=10 * DAY_MS))
    assert ids(traverse(web, "a", since=DAY_MS, now=10 * DAY_MS)) == ["late"]


def test_decay_by_category_is_computed_at_read_time(web: Store) -> None:
    links = {ln.relationship: ln for ln in web.links.iter()}
    year = 365 * DAY_MS
    assert decayed(links["supersedes"], 50 * year) == 1.0  # evolution never decays
    # conf × exp(−rate × days): about half after 7 (temporal), 14 (association), 35 days
    assert decayed(links["precedes"], 7 * DAY_MS) == pytest.approx(0.4966, abs=1e-4)
    assert decayed(links["relates_to"], 14 * DAY_MS) == pytest.approx(0.5 * 0.4966, abs=1e-4)
    assert decayed(links["implements"], 35 * DAY_MS) == pytest.approx(0.4966, abs=1e-4)
    assert "f" not in ids(traverse(web, "a", min_confidence=0.1, now=120 * DAY_MS))
    assert "b" in ids(traverse(web, "a", min_confidence=0.99, now=50 * year))
    stored = {ln.relationship: ln.confidence for ln in web.links.iter()}
    assert stored["precedes"] == 1.0  # nothing was rewritten


def test_cache_is_used_and_thrown_away_on_write(web: Store, calls: list[int]) -> None:
    first = traverse(web, "a", now=0)
    assert traverse(web, "a", now=0) == first and len(calls) == 1
    _m(web, "g")
    web.links.add("g", "a", "relates to", "new")
    assert "g" in ids(traverse(web, "a", now=0)) and len(calls) == 2


def test_cache_sees_other_connections_writes(web: Store) -> None:
    assert "h" not in ids(traverse(web, "a", now=0))
    with Store.open(web.path, config=Config()) as other:
        other.memories.insert(NewMemory(id="h", type="insight", project="/p", content="h"))
        other.links.add("h", "a", "relates to", "from another process")
    assert "h" in ids(traverse(web, "a", now=0))


def test_bad_direction(web: Store) -> None:
    with pytest.raises(ValueError, match="direction"):
        traverse(web, "a", direction="sideways")


def test_cache_ignores_usage_but_not_cascaded_deletes(web: Store, calls: list[int]) -> None:
    traverse(web, "a", now=0)
    web.memories.touch(["a", "b"])  # usage counters are not graph changes
    traverse(web, "a", now=0)
    assert len(calls) == 1
    web.memories.delete("f")  # its link to a goes by cascade
    assert "f" not in ids(traverse(web, "a", now=0)) and len(calls) == 2
