"""Each query walks the graph to its own depth (by_topic 3, by_context 5, load_context 2,
every walk capped at 5), and the walk cache is a bounded LRU thrown away on a write."""

from __future__ import annotations

import itertools

import pytest

from mama_plugin.config import Config
from mama_plugin.schema import LoadContextInput
from mama_plugin.server.base import Env
from mama_plugin.server.tools import do_load_context, do_search_by_topic
from mama_plugin.services.evolution import current_of
from mama_plugin.services.graph import traverse as graph
from mama_plugin.services.graph.depths import DEPTH, LIMITS
from mama_plugin.services.graph.traverse import MAX_DEPTH, traverse
from mama_plugin.services.story.answers import search_by_context
from mama_plugin.services.story.browsing import search_by_topic
from mama_plugin.services.warm import warm
from mama_plugin.storage import NewMemory, Store

PROJECT = "/p"


def _decision(store: Store, name: str, topic: str, at: int) -> str:
    memory = NewMemory(
        id=name,
        type="decision",
        project=PROJECT,
        topic=topic,
        content=f"{name}: cache the session tokens in redis cluster",
        reasoning={"primary": f"step {name} of the token cache story"},
        created_at=at,
    )
    return store.memories.insert(memory)[0].id


def _supersession_chain(store: Store, topics: list[str]) -> list[str]:
    """d0 ← d1 ← … each superseding the one before; ``topics[i]`` is dᵢ's topic."""
    ids = [_decision(store, f"d{i}", topic, 1_000 + i) for i, topic in enumerate(topics)]
    for older, newer in itertools.pairwise(ids):
        store.links.add(newer, older, "supersedes", "the newer one replaced it", created_at=0)
    return ids


def test_the_table_names_the_designed_depths_under_the_cap() -> None:
    assert DEPTH == {"search_by_topic": 3, "search_by_context": 5, "load_context": 2}
    assert MAX_DEPTH == 5 and all(limit.hops <= MAX_DEPTH for limit in LIMITS)
    field = LoadContextInput.model_fields["depth"]
    assert field.default == DEPTH["load_context"]
    assert LoadContextInput(memory_id="x", depth=MAX_DEPTH).depth == MAX_DEPTH
    with pytest.raises(ValueError, match="less than or equal to 5"):
        LoadContextInput(memory_id="x", depth=MAX_DEPTH + 1)


def test_search_by_topic_follows_other_topics_three_hops(store: Store) -> None:
    # The topic's one memory, then five re-filings under another topic, each replacing the last.
    ids = _supersession_chain(store, ["auth", "tokens", "tokens", "tokens", "tokens", "tokens"])
    rows = search_by_topic(store, "auth", project=PROJECT)
    assert [r.id for r in rows] == ["d0", "d3", "d2", "d1"]  # the topic's, then newest first
    assert rows[0].current_id == ids[-1]  # what stands now is never cut by the depth
    assert [r.via for r in rows[1:]] == ["supersedes d2", "supersedes d1", "supersedes d0"]
    # From the other side: the auth decision is reached from the one that replaced it.
    tokens = search_by_topic(store, "tokens", project=PROJECT)
    assert [(r.id, r.via) for r in tokens if r.linked_from] == [("d0", "d1 supersedes it")]
    assert search_by_topic(store, "auth", project=PROJECT, depth=5)[1].id == "d5"
    env = Env(store, PROJECT, None, config=Config())
    from mama_plugin.schema import SearchByTopicInput

    answer = do_search_by_topic(env, SearchByTopicInput(topic="auth"))
    assert answer.text.count("Linked by evolution from other topics (up to 3 hops):") == 1
    assert "d3 (decision) (supersedes d2)" in answer.text and "d4" not in answer.text
    assert answer.data["chain"][0].keys() >= {"id", "current_id"}
    assert "linked_from" not in answer.data["chain"][0]
    assert (answer.data["chain"][1]["linked_from"], answer.data["chain"][1]["direction"]) == (
        "d2",
        "out",
    )


def test_search_by_context_tells_five_steps_of_a_chain(store: Store) -> None:
    ids = _supersession_chain(store, ["tokens"] * 8)
    result = search_by_context(
        store, "redis cluster session tokens", project=PROJECT, k=8, record_usage=False
    )
    assert len(result.evolution) == 1  # results further back share the head: told once
    told = [s.id for s in result.evolution[0].steps]
    assert told == ids[-6:]  # the head and five hops back, oldest first
    assert current_of(store, "d0").id == ids[-1]  # the whole chain still says what stands


def test_load_context_walks_two_hops_unless_asked(store: Store) -> None:
    ids = _supersession_chain(store, ["tokens"] * 8)
    env = Env(store, PROJECT, None, config=Config())
    near = do_load_context(env, LoadContextInput(memory_id=ids[0]))
    assert [n["id"] for n in near.data["neighbours"]] == ["d1", "d2"]
    far = do_load_context(env, LoadContextInput(memory_id=ids[0], depth=5))
    assert [n["depth"] for n in far.data["neighbours"]] == [1, 2, 3, 4, 5]
    # Whatever a caller of the service asks, no walk goes past the global cap.
    assert max(s.depth for s in traverse(store, ids[0], max_depth=50)) == MAX_DEPTH


def test_the_walk_cache_evicts_the_least_recently_used(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    _supersession_chain(store, ["tokens"] * 4)
    monkeypatch.setattr(graph, "CACHE_SIZE", 2)
    walked: list[str] = []
    real = graph._walk
    monkeypatch.setattr(
        graph, "_walk", lambda s, start, *a: walked.append(start) or real(s, start, *a)
    )
    for start in ("d0", "d1"):
        traverse(store, start, now=0)
    traverse(store, "d0", now=0)  # a hit: d0 is now the most recently used
    traverse(store, "d2", now=0)  # a third walk evicts d1, the least recently used
    assert walked == ["d0", "d1", "d2"] and len(warm(store).walks) == 2
    traverse(store, "d0", now=0)
    assert walked == ["d0", "d1", "d2"]  # still kept
    traverse(store, "d1", now=0)
    assert walked == ["d0", "d1", "d2", "d1"]  # evicted, walked again
    assert [k[0] for k in warm(store).walks.order()] == ["d0", "d1"]  # type: ignore[index]


def test_a_write_empties_the_walk_cache(store: Store) -> None:
    _supersession_chain(store, ["tokens"] * 3)
    for start in ("d0", "d1", "d2"):
        traverse(store, start, now=0)
    assert len(warm(store).walks) == 3
    _decision(store, "late", "tokens", 9_000)
    store.links.add("late", "d2", "supersedes", "replaced again")
    assert "late" in [s.memory_id for s in traverse(store, "d0", now=0, max_depth=5)]
    assert len(warm(store).walks) == 1  # the three older walks went with the old version
