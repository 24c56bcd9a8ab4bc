"""`mama gc`: a session's old rolling checkpoints folded into one, backups capped, free pages
given back only when that pays; `--dry-run` and `mama status` say what it would free."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import PROJECT, run_mama

from mama_plugin.config import Config
from mama_plugin.services.hygiene import gc
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.services.story.compaction import DAY_MS, planned
from mama_plugin.services.story.resume import RECENT, resume_point
from mama_plugin.services.story.worklog import WorkLog
from mama_plugin.settings import Settings
from mama_plugin.storage import MemoryRecord, NewMemory, Store, now_ms
from mama_plugin.storage.backup import AUTOMATIC, backup_path, over_caps
from mama_plugin.storage.space import space, vacuum_pays

NOW = now_ms()
OLD = NOW - 90 * DAY_MS  # beyond the default horizon (30 days)


def rolling(
    store: Store, session: str, at: int, log: WorkLog, *, done: list[str] | None = None
) -> MemoryRecord:
    """A rolling checkpoint as the Stop hook writes one, dated ``at``."""
    return store.memories.insert(
        NewMemory(
            type="checkpoint",
            project=PROJECT,
            topic="checkpoint",
            content=log.summary(),
            tags=["auto"],
            session_id=session,
            continuity={"done": done or [], "open_files": [p for p, _ in log.changed or ()]},
            evidence=[{"source": p, "kind": "file", "detail": a} for p, a in log.changed or ()],
            metadata=log.metadata(),
            created_at=at,
            updated_at=at,
        )
    )[0]


def recent_sessions(store: Store, n: int = RECENT) -> None:
    """``n`` newer sessions of the project, so an old one is not among those the start reads."""
    for i in range(n):
        log = WorkLog(request=f"recent {i}", work=True, work_requests=1, changed=())
        rolling(store, f"recent-{i}", NOW - i * 1000, log)


def split_session(store: Store) -> tuple[list[MemoryRecord], MemoryRecord, str]:
    """An old session with three rolling checkpoints, one Claude wrote, and a decision."""
    logs = [
        WorkLog(
            request="add the retry",
            work=True,
            work_requests=1,
            tool_calls=4,
            decisions=("dec_a",),
            changed=(("api.py", "edited"),),
            moved_at=OLD,
        ),
        WorkLog(request="just searched", work=False, activity="searched memory", changed=()),
        WorkLog(
            request="cap the backoff",
            work=True,
            work_requests=2,
            tool_calls=6,
            decisions=("dec_a", "dec_b"),
            last_message="The backoff is capped at 8 s. Next: document it.",
            changed=(("api.py", "created"), ("backoff.py", "edited")),
            moved_at=OLD + 2000,
        ),
    ]
    cps = [
        rolling(store, "old", OLD + i * 1000, log, done=[f"step {i}"]) for i, log in enumerate(logs)
    ]
    written = store.memories.insert(
        NewMemory(
            type="checkpoint",
            project=PROJECT,
            content="Claude's own checkpoint",
            session_id="old",
            created_at=OLD + 500,
            updated_at=OLD + 500,
        )
    )[0]
    decided = save_decision(
        store, PROJECT, {"topic": "retry", "decision": "Retry with backoff", "reasoning": "flaky"}
    ).memory.id
    store.links.add(decided, cps[0].id, "implemented_by", "the first turn wrote the retry")
    return cps, written, decided


def test_a_split_session_is_folded_into_its_newest_checkpoint(store: Store) -> None:
    cps, written, decided = split_session(store)
    recent_sessions(store)
    (fold,) = planned(store, horizon_days=30, now=NOW)
    assert (fold.kept, fold.folded) == (cps[2].id, (cps[0].id, cps[1].id))
    done = gc.collect(store, Settings(), now=NOW)
    assert (done.sessions, done.folded) == (1, 2)
    assert store.memories.get(cps[0].id) is None and store.memories.get(cps[1].id) is None
    kept = store.memories.require(cps[2].id)
    log = WorkLog.of(kept)
    assert log is not None
    assert log.first_request == "add the retry" and log.request == "cap the backoff"
    assert (log.work_requests, log.tool_calls, log.work) == (3, 10, True)
    assert log.decisions == ("dec_a", "dec_b")
    assert log.changed == (("api.py", "created"), ("backoff.py", "edited"))
    assert log.moved_at == OLD + 2000
    assert kept.content == log.summary()
    assert kept.content.startswith("Working on: add the retry; then (1 more) cap the backoff")
    assert kept.continuity["done"] == ["step 0", "step 1", "step 2"]
    assert kept.updated_at == cps[2].updated_at  # an old session stays old
    # What is not a rolling checkpoint is never touched; the link follows the work.
    assert store.memories.require(written.id).content == "Claude's own checkpoint"
    assert store.links.exists(decided, kept.id, "implemented_by")
    # The derived rows went with the memories (the store's delete path).
    rows = store.conn.execute
    assert (
        rows("SELECT count(*) FROM memories_fts").fetchall()[0][0]
        == rows("SELECT count(*) FROM memories").fetchall()[0][0]
    )
    seqs = {cps[0].seq, cps[1].seq}
    assert not {s for (s,) in rows("SELECT seq FROM embedding_queue").fetchall()} & seqs
    assert planned(store, horizon_days=30, now=NOW) == []  # nothing left to do


def test_the_sessions_the_start_reads_and_recent_ones_are_never_folded(store: Store) -> None:
    cps, _, _ = split_session(store)
    # Without newer sessions, the old one is among the checkpoints the session start reads.
    assert planned(store, horizon_days=30, now=NOW) == []
    recent_sessions(store)
    assert planned(store, horizon_days=100, now=NOW) == []  # not older than the horizon
    assert [f.kept for f in planned(store, horizon_days=80, now=NOW)] == [cps[2].id]
    lead = resume_point(store, PROJECT).checkpoint
    gc.collect(store, Settings(checkpoint_horizon_days=80), now=NOW)
    assert resume_point(store, PROJECT).checkpoint == lead


def test_a_dry_run_lists_what_would_go_and_changes_nothing(mama_home: Path) -> None:
    with Store.open(config=Config(mama_home)) as store:
        cps, _, _ = split_session(store)
        recent_sessions(store)
        count = store.memories.counts()["memories"]
    listed = run_mama(mama_home, "gc", "--dry-run")
    assert listed.returncode == 0, listed.stderr
    assert f"old  keep {cps[2].id}  fold {cps[0].id}, {cps[1].id}" in listed.stdout
    assert "2 rolling checkpoints of 1 sessions" in listed.stdout
    status = run_mama(mama_home, "status", "--json")
    assert json.loads(status.stdout)["gc"]["folds"][0]["kept"] == cps[2].id
    with Store.open(config=Config(mama_home)) as store:
        assert store.memories.counts()["memories"] == count
    ran = run_mama(mama_home, "gc", "--json")
    assert json.loads(ran.stdout)["folded"] == 2
    assert "frees        about" in run_mama(mama_home, "gc", "--dry-run").stdout


def backup_files(db: Path, sizes: list[int], label: str = AUTOMATIC, days: int = 0) -> list[Path]:
    """Backups of ``db``, one a day ending ``days`` ago, oldest first, of ``sizes`` bytes."""
    out = []
    for day, size in enumerate(sizes):
        taken = time.time() - (len(sizes) - day + days) * 86400
        path = backup_path(db, label, now=taken)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)
        out.append(path)
    return out


def test_backups_are_capped_by_count_and_size(tmp_path: Path) -> None:
    db = tmp_path / "mama.db"
    imported = backup_files(db, [400], label="pre-import", days=9)[0]
    daily = backup_files(db, [100] * 5)

    def doomed(**caps: Any) -> list[Path]:
        return [b.path for b, _ in over_caps(db, **caps)]

    assert doomed(keep=3, max_bytes=10_000) == daily[:2]  # count: the oldest automatic ones
    assert doomed(keep=5, max_bytes=10_000) == []
    # Size: the oldest first, whatever their kind, until the rest fit; never the newest.
    assert doomed(keep=5, max_bytes=500) == [imported]
    assert doomed(keep=5, max_bytes=250) == [imported, *daily[:3]]
    assert doomed(keep=5, max_bytes=0) == [imported, *daily[:4]]
    # The backup `mama import --rollback` restores is kept.
    assert doomed(keep=5, max_bytes=250, protected=imported) == daily[:4]


def test_the_file_is_rewritten_only_when_that_pays(store: Store) -> None:
    for i in range(400):
        save_decision(
            store, PROJECT, {"topic": f"t{i}", "decision": "x" * 3000, "reasoning": f"r{i}"}
        )
    assert not vacuum_pays(space(store))
    assert gc.plan(store, Settings(), now=NOW).frees == 0  # no rewrite: nothing given back
    assert gc.collect(store, Settings(), now=NOW).vacuum_s is None
    for m in list(store.memories.iter())[:300]:
        store.memories.delete(m.id)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    before = space(store)
    assert vacuum_pays(before)
    assert gc.plan(store, Settings(), now=NOW).frees == before.free_bytes
    done = gc.collect(store, Settings(), now=NOW)
    assert done.vacuum_s is not None and done.bytes_after < before.file_bytes / 2
    assert space(store).free_pages == 0


def test_the_background_run_is_due_once_a_day(store: Store) -> None:
    assert gc.due(store, now=NOW)
    gc.collect(store, Settings(), now=NOW)
    assert not gc.due(store, now=NOW + gc.EVERY_MS - 1)
    assert gc.due(store, now=NOW + gc.EVERY_MS)


@pytest.mark.anyio
@pytest.mark.parametrize("on", [True, False])
async def test_the_server_runs_gc_once_a_day_unless_switched_off(
    tmp_path: Path, mama_home: Path, on: bool
) -> None:
    from mama_plugin.server.background import collect_in_background
    from mama_plugin.server.state import State

    mama_home.mkdir(parents=True, exist_ok=True)
    (mama_home / "config.json").write_text(json.dumps({"gc_in_background": on}))
    served = State(Config(mama_home), PROJECT, tmp_path / "server.db")
    try:
        cps, _, _ = split_session(served.store)
        recent_sessions(served.store)
        await collect_in_background(served, after_s=0)
        assert (served.store.memories.get(cps[0].id) is None) is on
        assert gc.due(served.store) is not on
        if on:  # ran today: a new split session waits for tomorrow's run
            again, _, _ = split_session(served.store)
            await collect_in_background(served, after_s=0)
            assert served.store.memories.get(again[0].id) is not None
    finally:
        served.close()
