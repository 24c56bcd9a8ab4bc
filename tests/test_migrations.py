"""The schema ladder: from empty, from every older version, and refusing newer databases."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from mama_plugin.config import Config
from mama_plugin.errors import SchemaError
from mama_plugin.storage import NewMemory, Store
from mama_plugin.storage.connection import connect
from mama_plugin.storage.migrations import LATEST, STEPS, migrate, user_version


def test_fresh_database_climbs_every_named_step(tmp_path: Path) -> None:
    with Store.open(tmp_path / "m.db", config=Config()) as store:
        assert store.schema_version == LATEST
        names = [
            r[0] for r in store.conn.execute("SELECT name FROM schema_migrations ORDER BY rowid")
        ]
        assert names == [s.name for s in STEPS]
        assert store.meta("embedding_dim") == "384"
    with Store.open(tmp_path / "m.db", config=Config()) as again:  # reopening applies nothing
        assert migrate(again.conn, embedding_dim=384) == []


def _oldest(path: Path) -> None:
    """A database as the first release left it: core tables only, rows already in them."""
    conn = connect(path)
    migrate(conn, embedding_dim=384, upto=1)
    conn.execute(
        "INSERT INTO memories(id, type, project, topic, content, reasoning, created_at, updated_at) "
        "VALUES ('old1', 'decision', '/p', 'auth', 'Use JWT', ?, 1, 1)",
        (json.dumps({"primary": "stateless tokens scale", "secondary": ["cheap"]}),),
    )
    conn.execute(
        "INSERT INTO memories(id, type, project, content, created_at, updated_at) "
        "VALUES ('old2', 'insight', '/p', 'measure before choosing', 2, 2)"
    )
    conn.execute(
        "INSERT INTO memory_links(from_id, to_id, relationship, reason, link_category, created_at) "
        "VALUES ('old2', 'old1', 'learned_from', 'the load test', 'association', 3)"
    )
    conn.close()


def test_old_database_migrates_with_its_rows_searchable(tmp_path: Path) -> None:
    _oldest(tmp_path / "old.db")
    with Store.open(tmp_path / "old.db", config=Config()) as store:
        assert store.schema_version == LATEST
        assert store.memories.require("old1").reasoning["primary"] == "stateless tokens scale"
        assert [m.id for m, _ in store.search.text("stateless")] == ["old1"]  # backfilled FTS
        assert [m.id for m, _ in store.search.text("cheap")] == ["old1"]
        assert store.links.usage() == [("learned_from", "association", 1)]  # backfilled usage
        store.memories.insert(
            NewMemory(type="insight", project="/p", content="new row after migration")
        )
        assert store.memories.counts()["memories"] == 3


@pytest.mark.parametrize("stop", range(1, LATEST))
def test_every_intermediate_version_reaches_latest(tmp_path: Path, stop: int) -> None:
    conn = connect(tmp_path / "x.db")
    migrate(conn, embedding_dim=384, upto=stop)
    assert user_version(conn) == stop
    conn.close()
    with Store.open(tmp_path / "x.db", config=Config()) as store:
        assert store.schema_version == LATEST


def test_a_failing_step_leaves_the_previous_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mama_plugin.storage import migrations

    def broken(conn, dim):
        conn.execute("CREATE TABLE half_done(x)")
        raise RuntimeError("disk on fire")

    conn = connect(tmp_path / "b.db")
    migrate(conn, embedding_dim=384, upto=2)
    monkeypatch.setattr(migrations, "STEPS", (*STEPS[:2], migrations.Step("broken", broken)))
    with pytest.raises(RuntimeError):
        migrations.migrate(conn, embedding_dim=384)
    assert user_version(conn) == 2
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'half_done'").fetchall()


def test_newer_database_is_refused_with_a_fix(tmp_path: Path) -> None:
    with Store.open(tmp_path / "n.db", config=Config()) as store:
        store.conn.execute(f"PRAGMA user_version = {LATEST + 3}")
    with pytest.raises(SchemaError, match=r"newer than this MAMA knows.*upgrade MAMA"):
        Store.open(tmp_path / "n.db", config=Config())


def test_vector_dimension_follows_config(tmp_path: Path, mama_home: Path) -> None:
    config = Config(mama_home)
    config.set("embedding_dim", "768")
    with Store.open(tmp_path / "v.db", config=Config(mama_home)) as store:
        assert store.meta("embedding_dim") == "768"
        store.conn.execute(
            "INSERT INTO memory_vectors(rowid, embedding) VALUES (1, ?)", (json.dumps([0.1] * 768),)
        )


def _open_and_count(path: str) -> int:
    with Store.open(path, config=Config()) as store:
        return store.schema_version


def test_processes_opening_an_old_database_together_migrate_once(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    _oldest(path)
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        versions = pool.map(_open_and_count, [str(path)] * 8)
    assert versions == [LATEST] * 8
    with Store.open(path, config=Config()) as store:
        names = [r[0] for r in store.conn.execute("SELECT name FROM schema_migrations")]
        assert sorted(names) == sorted(s.name for s in STEPS)  # each step recorded exactly once
        assert store.conn.execute("SELECT count(*) FROM memories_fts").fetchall()[0][0] == 2


def test_the_peeks_schema_version_is_the_last_step() -> None:
    from mama_plugin.storage.peek import SCHEMA_VERSION

    assert SCHEMA_VERSION == LATEST, "a new migration step: raise storage/peek.py SCHEMA_VERSION"
