"""Word counts cached per state of the searchable text: a search finds exactly what counting
afresh finds, after every kind of write, from this connection or another one."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.floor import kept_words
from mama_plugin.config import Config
from mama_plugin.storage import NewMemory, Store
from mama_plugin.storage import search as search_module
from mama_plugin.storage.fts import any_of

QUERIES = ("redis cache", "redis", "postgres migration", "cache eviction policy", "kafka")


def afresh(store: Store, query: str, limit: int = 50) -> list[tuple[int, float]]:
    """The search's keyword ranks with every count read now (nothing cached)."""
    rows = store.conn.execute(
        "SELECT rowid, -bm25(memories_fts) AS score FROM memories_fts "
        "WHERE memories_fts MATCH ? ORDER BY score DESC LIMIT ?",
        (any_of(kept_words(store, query)), limit),
    ).fetchall()
    return [(int(seq), float(score)) for seq, score in rows]  # type: ignore[arg-type]


def agree(store: Store) -> None:
    for query in QUERIES:
        assert store.search.text_ranks(query, limit=50) == afresh(store, query), query


def add(store: Store, content: str, topic: str = "") -> str:
    new = NewMemory(type="insight", project="/p", content=content, topic=topic)
    return store.memories.insert(new)[0].id


@pytest.fixture(autouse=True)
def _small_common(monkeypatch: pytest.MonkeyPatch) -> None:
    # A word becomes "common" (left out) at 3 memories and more than half: a few saves flip it.
    monkeypatch.setattr(search_module, "COMMON_WORD_MIN", 3)
    import benchmarks.floor as floor_module

    monkeypatch.setattr(floor_module, "COMMON_WORD_MIN", 3)


def test_every_write_is_counted_by_the_next_search(store: Store) -> None:
    ids = [add(store, "redis cache for sessions"), add(store, "postgres migration plan"),
           add(store, "redis cache eviction policy"), add(store, "kafka topic layout")]  # fmt: skip
    agree(store)
    before = store.search.text_ranks("redis cache")
    ids.append(add(store, "redis again: cache warmed at start"))  # "redis" now in 3 of 5
    agree(store)
    assert store.search.text_ranks("redis cache") != before
    store.memories.update(ids[1], topic="redis", content="redis instead of postgres")
    agree(store)
    store.memories.delete(ids[0])
    agree(store)
    store.memories.touch(ids[1:])  # usage only: the text's state stays, counts still right
    agree(store)


def test_a_rolled_back_write_is_not_counted(store: Store) -> None:
    for text in ("redis cache", "redis queue", "postgres", "kafka", "cache eviction"):
        add(store, text)
    agree(store)
    with pytest.raises(RuntimeError), store.transaction():
        add(store, "redis redis cache")
        add(store, "redis pubsub")
        agree(store)  # counted inside the transaction that wrote them
        raise RuntimeError("roll back")
    agree(store)


def test_a_write_from_another_connection_is_counted(mama_home: Path) -> None:
    with (
        Store.open(config=Config(mama_home)) as first,
        Store.open(config=Config(mama_home)) as other,
    ):
        for text in ("redis cache", "postgres", "kafka", "cache eviction"):
            add(first, text)
        agree(first)
        before = first.search.text_ranks("redis cache")
        for text in ("redis cluster", "redis sentinel", "redis streams"):  # 4 of 7: common
            add(other, text)
        agree(first)
        assert first.search.text_ranks("redis cache") != before
        assert first.meta("text_version") == other.meta("text_version")
