"""The in-memory copy of the ranking columns answers what SQLite answers now: after every kind
of write, from this connection or another, past a trimmed log, a restore and a rollback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mama_plugin.config import Config
from mama_plugin.storage import NewMemory, Store
from mama_plugin.storage import rank_cache as rank_cache_module
from mama_plugin.storage.backup import back_up, restore
from mama_plugin.storage.records import RankFields
from mama_plugin.storage.search_tables import RANK_LOG_KEPT


def afresh(store: Store, seqs: list[int]) -> dict[int, RankFields]:
    """The ranking columns read now, from SQLite (nothing kept)."""
    rows = store.conn.execute(
        "SELECT seq, confidence, outcome_status, status, created_at, times_used, type, "
        f"last_used, project, session_id FROM memories WHERE seq IN ({','.join('?' * len(seqs))})",
        seqs,
    ).fetchall()
    return {int(r[0]): RankFields(*r) for r in rows}  # type: ignore[arg-type, misc]


def sessions_afresh(store: Store, seqs: list[int], project: str | None) -> dict[str, list[int]]:
    """Every memory of the sessions ``seqs`` belong to, in time order, read now."""
    marks = ",".join("?" * len(seqs))
    in_project = " AND project = ?" if project is not None else ""
    rows = store.conn.execute(
        "SELECT seq, session_id FROM memories WHERE session_id IN (SELECT session_id FROM "
        f"memories WHERE seq IN ({marks})) AND session_id <> ''{in_project} "
        "ORDER BY session_id, created_at, seq",
        (*seqs, *([project] if project is not None else [])),
    ).fetchall()
    out: dict[str, list[int]] = {}
    for seq, session in rows:
        out.setdefault(str(session), []).append(int(seq))  # type: ignore[arg-type]
    return out


def every_seq(store: Store) -> list[int]:
    rows = store.conn.execute("SELECT seq FROM memories").fetchall()
    return [int(r[0]) for r in rows]  # type: ignore[arg-type]


def agree(store: Store, asked: list[int] | None = None) -> None:
    """The copy and SQLite agree on the asked seqs (gone ones included) and their sessions."""
    seqs = asked if asked is not None else [*every_seq(store), 10_000]
    fields = store.search.rank_fields(seqs)
    assert fields == afresh(store, seqs)
    names = [f.session_id for f in fields.values()]
    for project in (None, "/p", "/q"):
        assert store.search.sessions(names, project=project) == sessions_afresh(
            store, seqs, project
        )


def add(store: Store, session: str = "s1", project: str = "/p", at: int | None = None) -> str:
    new = NewMemory(
        type="insight", project=project, content="redis cache", session_id=session, created_at=at
    )
    return store.memories.insert(new)[0].id


def seq_of(store: Store, memory_id: str) -> int:
    return int(store.conn.execute("SELECT seq FROM memories WHERE id = ?", (memory_id,)).fetchall()[0][0])  # type: ignore[arg-type]  # fmt: skip


def test_every_write_is_seen_by_the_next_read(store: Store) -> None:
    ids = [add(store, "s1", at=1_000), add(store, "s1", at=2_000), add(store, "s2", at=1_500)]
    agree(store)
    ids.append(add(store, "s1", at=1_200))  # joins a kept session in the middle
    agree(store)
    store.memories.touch(ids[:2])  # a use: times_used and last_used
    agree(store)
    store.memories.set_outcome(ids[0], "FAILED", details="p99 300 ms")
    agree(store)
    store.conn.execute("UPDATE memories SET confidence = 0.2, status = 'superseded' WHERE seq = ?",
                       (seq_of(store, ids[1]),))  # fmt: skip
    agree(store)
    store.conn.execute("UPDATE memories SET session_id = 's2' WHERE seq = ?",
                       (seq_of(store, ids[3]),))  # moves to another kept session  # fmt: skip
    agree(store)
    store.conn.execute("UPDATE memories SET created_at = 9000 WHERE seq = ?",
                       (seq_of(store, ids[0]),))  # moves within its session  # fmt: skip
    agree(store)
    store.conn.execute("UPDATE memories SET project = '/q' WHERE seq = ?",
                       (seq_of(store, ids[2]),))  # fmt: skip
    agree(store)
    store.memories.delete(ids[1])
    agree(store)


@pytest.fixture
def two(mama_home: Path) -> Iterator[tuple[Store, Store]]:
    """Two stores open on one database: this process's and another writer's connections."""
    with (
        Store.open(config=Config(mama_home)) as first,
        Store.open(config=Config(mama_home)) as other,
    ):
        yield first, other


def test_a_write_from_another_connection_is_seen(two: tuple[Store, Store]) -> None:
    first, other = two
    ids = [add(first, "s1"), add(first, "s1")]
    agree(first)
    add(other, "s1")
    other.memories.touch(ids)
    other.memories.set_outcome(ids[0], "SUCCESS", details="held at 10K req/s")
    agree(first)
    other.memories.delete(ids[1])
    agree(first)


def test_a_reader_behind_the_trimmed_log_starts_over(two: tuple[Store, Store]) -> None:
    first, other = two
    ids = [add(first, "s1"), add(first, "s2")]
    agree(first)
    for _ in range(2 * RANK_LOG_KEPT + 10):  # the other writer's uses trim the log past us
        other.memories.touch(ids[:1])
    (low,) = first.conn.execute("SELECT min(id) FROM rank_log").fetchall()[0]
    assert int(low) > 3  # type: ignore[arg-type]  # the entries we saw last are gone
    add(other, "s2")
    agree(first)
    assert first.search.rank_fields([seq_of(first, ids[0])])[seq_of(first, ids[0])] \
        .times_used == 2 * RANK_LOG_KEPT + 10  # fmt: skip


def test_a_restore_starts_the_copy_over(two: tuple[Store, Store]) -> None:
    first, other = two
    ids = [add(first, "s1"), add(first, "s1")]
    saved = back_up(first, "test")
    first.memories.touch(ids)
    first.memories.set_outcome(ids[0], "FAILED", details="broke")
    agree(first)  # the copy holds the touched rows
    restore(other, saved)
    for _ in range(4):  # the restored log climbs back past where the copy stopped
        other.memories.touch(ids[1:])
    agree(first)
    assert first.search.rank_fields([seq_of(first, ids[0])])[seq_of(first, ids[0])] \
        .outcome_status == "PENDING"  # fmt: skip


def test_a_rolled_back_write_leaves_the_copy_true(store: Store) -> None:
    ids = [add(store, "s1"), add(store, "s1")]
    agree(store)
    with pytest.raises(RuntimeError), store.transaction():
        store.memories.touch(ids)
        add(store, "s1")
        agree(store)  # read inside the write: straight from SQLite, never kept
        raise RuntimeError("roll back")
    # As many log entries as the rolled-back write made, so their ids are taken again.
    add(store, "s2")
    store.memories.touch(ids[:1])
    store.memories.touch(ids[:1])
    agree(store)


def test_the_copy_is_read_instead_of_sqlite(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    seqs = [seq_of(store, add(store, "s1")) for _ in range(5)]
    agree(store, seqs)
    read: list[list[int]] = []
    real = store.search._rank_rows

    def counted(wanted: list[int], tags: tuple[str, ...] = ()) -> object:
        read.append(wanted)
        return real(wanted, tags)

    monkeypatch.setattr(store.search, "_rank_rows", counted)
    store.search.rank_fields(seqs)
    assert read == []  # kept
    store.memories.touch([store.memories.get_by_seq(seqs[:1])[seqs[0]].id])
    store.search.rank_fields(seqs)
    assert read == [seqs[:1]]  # only the row that changed is read again


def test_a_full_copy_starts_over(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rank_cache_module, "KEPT", 3)
    for _ in range(5):
        add(store, "s1")
    agree(store)
    agree(store)


OPS = st.lists(
    st.tuples(
        st.sampled_from(["add", "touch", "outcome", "session", "time", "delete", "read"]),
        st.integers(0, 9),
        st.sampled_from(["s1", "s2", "s3"]),
    ),
    max_size=25,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=OPS)
def test_any_writes_read_as_sqlite_reads(mama_home: Path, ops: list[tuple[str, int, str]]) -> None:
    with Store.open(mama_home / f"h{abs(hash(tuple(ops)))}.db", config=Config(mama_home)) as store:
        ids = [add(store, "s1", at=1_000), add(store, "s2", at=2_000)]
        for op, n, session in ops:
            live = [i for i in ids if store.memories.get(i) is not None]
            target = live[n % len(live)] if live else None
            if op == "add":
                ids.append(add(store, session, at=1_000 + 100 * n))
            elif target is None:
                continue
            elif op == "touch":
                store.memories.touch([target])
            elif op == "outcome":
                store.memories.set_outcome(target, "SUCCESS", details="held")
            elif op == "session":
                store.conn.execute("UPDATE memories SET session_id = ? WHERE id = ?",
                                   (session, target))  # fmt: skip
            elif op == "time":
                store.conn.execute("UPDATE memories SET created_at = ? WHERE id = ?",
                                   (500 + 50 * n, target))  # fmt: skip
            elif op == "delete":
                store.memories.delete(target)
            agree(store)
