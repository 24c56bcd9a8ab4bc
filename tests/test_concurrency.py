"""Several writers at once (processes, or threads sharing one store): no lost rows, no
"database is locked" for the user."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mama_plugin.config import Config
from mama_plugin.services.saving.memories import save_checkpoint, save_decision
from mama_plugin.storage import Store

WRITERS = 6
PER_WRITER = 40


def _writer(args: tuple[str, int]) -> list[str]:
    path, n = args
    with Store.open(path, config=Config()) as store:
        return _write(store, n)


def _write(store: Store, n: int) -> list[str]:
    errors: list[str] = []
    previous = None
    for i in range(PER_WRITER):
        try:
            data = {
                "topic": f"w{n}",
                "decision": f"writer {n} decision {i}",
                "reasoning": f"step {i}",
            }
            if previous:
                data["supersedes"] = previous
            previous = save_decision(store, "/p", data).memory.id
            if i % 10 == 0:
                save_checkpoint(
                    store, "/p", {"summary": f"writer {n} at {i}", "implements": [previous]}
                )
            store.memories.touch([previous])
        except Exception as exc:  # any error reaching a user counts as a failure
            errors.append(f"{type(exc).__name__}: {exc}")
    return errors


def _reader(path: str) -> list[str]:
    errors: list[str] = []
    with Store.open(path, config=Config()) as store:
        for _ in range(100):
            try:
                store.search.text("writer decision", limit=5)
                store.memories.recent(limit=5)
            except Exception as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
    return errors


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    Store.open(path, config=Config()).close()
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(WRITERS + 1) as pool:
        readers = pool.apply_async(_reader, (path,))
        results = pool.map(_writer, [(path, n) for n in range(WRITERS)])
        reader_errors = readers.get(timeout=120)
    assert [e for r in results for e in r] == []
    assert reader_errors == []
    with Store.open(path, config=Config()) as store:
        counts = store.memories.counts()
        per_writer_checkpoints = PER_WRITER // 10
        assert counts["by_type"] == {
            "checkpoint": WRITERS * per_writer_checkpoints,
            "decision": WRITERS * PER_WRITER,
        }
        assert counts["links"] == WRITERS * ((PER_WRITER - 1) + per_writer_checkpoints)
        assert counts["by_status"]["current"] == WRITERS * (1 + per_writer_checkpoints)
        fts = store.conn.execute("SELECT count(*) FROM memories_fts").fetchall()[0][0]
        assert fts == counts["memories"]
        assert store.conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def test_threads_sharing_one_store_lose_nothing(tmp_path: Path) -> None:
    # The server's event loop and its worker threads share one Store: each thread gets its
    # own connection and its own transactions, and SQLite's busy timeout queues the writers.
    with Store.open(tmp_path / "shared.db", config=Config()) as store:
        with ThreadPoolExecutor(WRITERS) as pool:
            results = list(pool.map(lambda n: _write(store, n), range(WRITERS)))
        assert [e for r in results for e in r] == []
        assert store.memories.counts()["by_type"] == {
            "checkpoint": WRITERS * (PER_WRITER // 10),
            "decision": WRITERS * PER_WRITER,
        }
        assert store.conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
