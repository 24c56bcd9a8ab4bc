"""The store: writes, reads, links, full-text sync, optimistic concurrency, privacy."""

from __future__ import annotations

import subprocess
import sys

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mama_plugin.errors import ConflictError, NotFoundError, ValidationError
from mama_plugin.storage import NewMemory, Store


def _decision(store: Store, project: str, content: str = "Use JWT", **extra) -> str:
    record, _ = store.memories.insert(NewMemory(
        type="decision", project=project, topic=extra.pop("topic", "auth"), content=content,
        reasoning={"primary": extra.pop("why", "stateless scaling")}, **extra,
    ))  # fmt: skip
    return record.id


def test_connection_is_configured(store: Store) -> None:
    c = store.conn
    assert c.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"
    assert c.execute("PRAGMA foreign_keys").fetchall()[0][0] == 1
    assert c.execute("SELECT vec_version()").fetchall()[0][0].startswith("v")
    with pytest.raises(apsw.Error):  # extension loading was switched off again
        c.load_extension("/nonexistent/ext.so")


def test_memory_round_trip_keeps_every_layer(store: Store, project: str) -> None:
    layers = dict(
        specifics=["307 ms p99 at 10K req/s"],
        evidence=[{"source": "benchmarks/auth.txt:89-142", "detail": "", "kind": "benchmark"}],
        reasoning={"primary": "token refresh hit the DB", "secondary": ["ops cost"],
                   "alternatives_considered": [{"option": "JWT", "rejected_because": "refresh load"}]},
        tension={"concerns": [], "trade_offs": ["state in Redis"], "risks": ["Redis is a SPOF"]},
        continuity={"next_steps": [{"step": "Redis HA", "priority": "HIGH", "context": ""}]},
        tags=["auth", "세션"], confidence=0.85, session_id="s-1", metadata={"k": [1, 2]},
    )  # fmt: skip
    record, redactions = store.memories.insert(
        NewMemory(type="decision", project=project, topic="auth", content="Sessions", **layers)
    )
    again = store.memories.require(record.id)
    assert again == record
    for key, value in layers.items():
        assert getattr(again, key) == value
    assert (again.outcome_status, again.status, again.version, redactions.total) == (
        "PENDING",
        "current",
        1,
        0,
    )
    assert again.created_at == again.updated_at > 0


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.text(min_size=1, max_size=300), topic=st.text(max_size=40),
       specifics=st.lists(st.text(max_size=40), max_size=4))  # fmt: skip
def test_any_text_survives_a_round_trip(
    store: Store, project: str, content, topic, specifics
) -> None:
    record, _ = store.memories.insert(
        NewMemory(
            type="insight", project=project, topic=topic, content=content, specifics=specifics
        )
    )
    stored = store.memories.require(record.id)
    # What comes back is exactly what the privacy filter let through: nothing else changes.
    from mama_plugin.privacy import redact_tree

    expected, _ = redact_tree({"content": content, "topic": topic, "specifics": specifics})
    assert (stored.content, stored.topic, stored.specifics) == (
        expected["content"],
        expected["topic"],
        expected["specifics"],
    )


def test_secrets_never_reach_the_database_file(store: Store, project: str) -> None:
    record, redactions = store.memories.insert(NewMemory(
        type="context", project=project, content="deploy with sk-ant-api03-" + "x" * 30 + " <private>my home address</private>",
        metadata={"env": "AWS AKIAABCDEFGHIJKLMNOP"},
    ))  # fmt: skip
    assert redactions.counts == {"api_key": 2, "private_block": 1}
    link, found = store.links.add(
        record.id, _decision(store, project), "relates to", "token ghp_" + "b" * 36
    )
    assert found.total == 1 and "ghp_" not in link.reason
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = store.path.read_bytes()
    for secret in (
        b"xxxxxxxxxxxxxxxxxxxx",
        b"my home address",
        b"AKIAABCDEFGH",
        b"bbbbbbbbbbbbbbbb",
    ):
        assert secret not in raw


def test_decision_without_reasoning_is_refused_by_the_schema_too(
    store: Store, project: str
) -> None:
    with pytest.raises(ValidationError, match=r"reasoning.primary is required"):
        store.memories.insert(
            NewMemory(type="decision", project=project, content="x", reasoning={"primary": "  "})
        )
    with pytest.raises(ValidationError, match="type must be one of"):
        store.memories.insert(NewMemory(type="note", project=project, content="x"))
    assert store.memories.counts()["memories"] == 0


def test_duplicate_id_is_refused(store: Store, project: str) -> None:
    store.memories.insert(NewMemory(id="m1", type="insight", project=project, content="a"))
    with pytest.raises(ValidationError, match="already exists"):
        store.memories.insert(NewMemory(id="m1", type="insight", project=project, content="b"))
    assert store.memories.require("m1").content == "a"


def test_supersedes_link_marks_old_decision_and_keeps_both(store: Store, project: str) -> None:
    old, new = _decision(store, project, "JWT"), _decision(store, project, "sessions")
    link, _ = store.links.add(new, old, "Supersedes", "JWT failed at 10K req/s")
    assert (link.relationship, link.link_category, link.created_by) == (
        "supersedes",
        "evolution",
        "user",
    )
    before = store.memories.require(old)
    assert (before.status, before.outcome_status, before.version) == ("superseded", "SUPERSEDED", 2)
    assert store.memories.require(new).status == "current"
    # an outcome that was already recorded is kept
    third = _decision(store, project, "sessions + Redis HA")
    store.memories.set_outcome(new, "FAILED", details="Redis went down")
    store.links.add(third, new, "supersedes", "HA fixes the SPOF")
    assert store.memories.require(new).outcome_status == "FAILED"


def test_link_rules(store: Store, project: str) -> None:
    a, b = _decision(store, project, "a"), _decision(store, project, "b")
    with pytest.raises(ValidationError, match="every link needs a reason"):
        store.links.add(a, b, "refines", "  ")
    with pytest.raises(ValidationError, match=r"unknown to_id 'nope'"):
        store.links.add(a, "nope", "refines", "r")
    with pytest.raises(ValidationError, match="unknown from_id"):
        store.links.add("nope", b, "refines", "r")
    with pytest.raises(ValidationError, match="cannot link to itself"):
        store.links.add(a, a, "refines", "r")
    with pytest.raises(ValidationError, match="between 0 and 1"):
        store.links.add(a, b, "refines", "r", confidence=2)
    store.links.add(a, b, "supersedes", "r")
    with pytest.raises(ValidationError, match="cycle"):
        store.links.add(b, a, "supersedes", "r")
    assert store.memories.counts()["links"] == 1


def test_relationship_spelling_is_normalised_and_usage_counted(store: Store, project: str) -> None:
    ids = [_decision(store, project, str(i)) for i in range(4)]
    store.links.add(ids[0], ids[1], "Motivated By", "r")
    store.links.add(ids[2], ids[1], "motivated-by", "r")
    store.links.add(ids[3], ids[1], "addresses_failure_of", "r")
    link, _ = store.links.add(ids[0], ids[1], "MOTIVATED_BY", "said again")  # same link: kept once
    assert link.reason == "r"
    assert store.links.usage() == [
        ("motivated_by", "association", 2),
        ("addresses_failure_of", "association", 1),
    ]
    categories = {ln.relationship: ln.link_category for ln in store.links.iter()}
    assert categories == {"motivated_by": "association", "addresses_failure_of": "association"}


@pytest.mark.parametrize(("word", "category"), [
    ("supersedes", "evolution"), ("refines", "evolution"), ("improves", "evolution"),
    ("implements", "implementation"), ("outcome_of", "implementation"), ("executes", "implementation"),
    ("relates_to", "association"), ("challenges", "association"), ("depends_on", "association"),
    ("inspired_by", "association"), ("anything_else", "association"), ("precedes", "temporal"),
])  # fmt: skip
def test_link_category_is_derived(store: Store, project: str, word: str, category: str) -> None:
    link, _ = store.links.add(
        _decision(store, project, "a"), _decision(store, project, "b"), word, "r"
    )
    assert link.link_category == category


def test_deleting_a_memory_cascades_to_links_and_index(store: Store, project: str) -> None:
    a, b = _decision(store, project, "alpha decision"), _decision(store, project, "beta")
    store.links.add(b, a, "refines", "r")
    store.memories.delete(a)
    assert store.memories.counts()["links"] == 0
    assert store.search.text("alpha") == []
    with pytest.raises(NotFoundError, match="no memory has id"):
        store.memories.delete(a)


def test_fulltext_index_follows_every_write(store: Store, project: str) -> None:
    m = _decision(store, project, "Use PostgreSQL", why="relational integrity for orders")
    assert [r.id for r, _ in store.search.text("integrity")] == [m]
    store.memories.update(m, content="Use SQLite", reasoning={"primary": "single node, zero ops"})
    assert store.search.text("PostgreSQL") == [] and store.search.text("integrity") == []
    assert [r.id for r, _ in store.search.text("zero ops sqlite")] == [m]
    fts_rows = store.conn.execute("SELECT count(*) FROM memories_fts").fetchall()[0][0]
    assert fts_rows == store.memories.counts()["memories"] == 1


def test_search_is_scoped_and_safe(store: Store, project: str) -> None:
    _decision(store, project, "cache with Redis")
    _decision(store, "/other", "cache with memcached")
    assert len(store.search.text("cache", project=project)) == 1
    assert len(store.search.text("cache")) == 2
    for nasty in ('"', "NEAR(a b)", "a AND OR", "*", "topic:cache", ")(", ""):
        store.search.text(nasty)  # FTS5 syntax in user text is inert, never an error


def test_optimistic_concurrency(store: Store, project: str) -> None:
    m = _decision(store, project)
    first = store.memories.require(m)
    updated, _ = store.memories.update(m, expected_version=first.version, confidence=0.9)
    assert updated.version == first.version + 1
    with pytest.raises(ConflictError, match="changed since you read it"):
        store.memories.update(m, expected_version=first.version, confidence=0.1)
    with pytest.raises(ConflictError):
        store.memories.set_outcome(m, "SUCCESS", expected_version=first.version)
    assert store.memories.require(m).confidence == 0.9
    with pytest.raises(ValidationError, match="cannot change"):
        store.memories.update(m, id="other")


def test_usage_counters_do_not_bump_the_row_version(store: Store, project: str) -> None:
    m = _decision(store, project)
    store.memories.touch([m, m])
    record = store.memories.require(m)
    assert (record.times_used, record.version) == (1, 1) and record.last_used


def test_transaction_rolls_back_everything(store: Store, project: str) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        _decision(store, project, "one")
        with store.transaction():
            _decision(store, project, "two")
        raise RuntimeError("boom")
    assert store.memories.counts()["memories"] == 0
    with store.transaction():
        _decision(store, project, "kept")
        with pytest.raises(ValidationError), store.transaction():
            _decision(store, project, "inner")
            store.memories.insert(NewMemory(type="bad", project=project, content="x"))
    assert [m.content for m in store.memories.iter()] == ["kept"]


def test_recent_and_topic_reads(store: Store, project: str) -> None:
    for i in range(5):
        store.memories.insert(
            NewMemory(
                type="insight",
                project=project,
                topic="t" if i % 2 else "u",
                content=str(i),
                created_at=1000 + i,
            )
        )
    store.memories.insert(
        NewMemory(type="checkpoint", project="/elsewhere", content="c", created_at=5000)
    )
    assert [m.content for m in store.memories.recent(project=project, limit=3)] == ["4", "3", "2"]
    assert [m.content for m in store.memories.recent(type="checkpoint")] == ["c"]
    assert [m.content for m in store.memories.by_topic("t", project=project)] == ["3", "1"]


def test_store_import_stays_light() -> None:
    """Hooks open the store on a cold start: it must not pull in pydantic, jinja2 or mcp."""
    code = ("import sys, mama_plugin.storage, mama_plugin.project, mama_plugin.config;"
            "heavy = {'pydantic', 'jinja2', 'mcp', 'llama_cpp', 'numpy', 'sqlite_vec'} & set(sys.modules);"
            "print(sorted(heavy))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_link_reasons_and_words_are_checked_after_privacy(store: Store, project: str) -> None:
    a, b = _decision(store, project, "a"), _decision(store, project, "b")
    with pytest.raises(ValidationError, match="every link needs a reason"):
        store.links.add(a, b, "refines", "<private>only a secret reason</private>")
    with pytest.raises(ValidationError, match="looks like a secret"):
        store.links.add(a, b, "ghp_" + "a" * 36, "a reason")
    assert store.memories.counts()["links"] == 0 and store.links.usage() == []


def test_deleting_a_successor_restores_the_decision_it_replaced(store: Store, project: str) -> None:
    old, new = _decision(store, project, "JWT"), _decision(store, project, "sessions")
    store.links.add(new, old, "supersedes", "refresh load")
    store.memories.delete(new)
    assert (store.memories.require(old).status, store.memories.require(old).outcome_status) == (
        "current",
        "PENDING",
    )


def test_lookups_of_many_ids_are_chunked(store: Store, project: str) -> None:
    made = [
        store.memories.insert(NewMemory(type="insight", project=project, content=str(i)))[0]
        for i in range(1200)
    ]
    ids = [m.id for m in made] + [f"missing-{i}" for i in range(40_000)]  # past SQLite's limit
    assert store.memories.existing_ids(ids) == {m.id for m in made}
    assert (
        len(store.memories.get_many(ids)) == 1200
        and len(store.memories.get_by_seq(m.seq for m in made)) == 1200
    )
