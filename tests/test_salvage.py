"""Damaged memories with no backup are salvaged, not lost: `mama doctor --salvage`.

A real store (a story with its links, then 300 decisions) has random bytes written over one
leaf page of the memories table, in the middle of the file, as a failing disk would. No backup
holds it. `mama doctor` says to salvage; the salvage keeps every row on sound pages — the rows
after the damaged page too — drops what lost its memory, and leaves a store that checks sound,
searches and saves.
"""

from __future__ import annotations

import json
from pathlib import Path

import apsw
from conftest import CHECKPOINT, MAMA, btree_pages, run_mama, tell_story
from test_damage import decision
from test_repair import PROJECT, garbage, kept_rows

from mama_plugin.config import Config
from mama_plugin.embeddings import Embedder
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.services.search.retrieval import retrieve
from mama_plugin.storage import Store
from mama_plugin.storage.diagnosis import examine
from mama_plugin.storage.salvage import Gap, copy_readable


def build(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    with Store.open(config=Config(home)) as store:
        tell_story(store, PROJECT, checkpoint=CHECKPOINT)
        for i in range(300):
            save_decision(store, PROJECT, decision(i))
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return home / "mama.db"


def test_damaged_memories_without_a_backup_are_salvaged_row_by_row(
    mama_home: Path, built_model: Path, embedder: Embedder
) -> None:
    db = build(mama_home)
    (mama_home / "config.json").write_text(json.dumps({"embedding_model_path": str(built_model)}))
    before = kept_rows(db)
    leaves = btree_pages(db, "memories")
    garbage(db, [leaves[len(leaves) // 2]])
    assert examine(db, full=True).derived == ()  # the memories themselves: no rebuild helps
    damaged = db.read_bytes()

    told = run_mama(mama_home, "doctor")
    assert told.returncode == 1
    assert f"there is no backup to restore: run `{MAMA} doctor --salvage`" in told.stdout

    fix = run_mama(mama_home, "doctor", "--salvage")
    assert fix.returncode == 0 and "Traceback" not in fix.stderr, fix.stdout + fix.stderr
    after = kept_rows(db)
    kept, lost = after["memories"], len(before["memories"]) - len(after["memories"])
    assert 0 < lost < 20, lost  # one leaf's rows, no more
    assert set(kept) <= set(before["memories"])  # row for row as they were
    assert kept[-1] == before["memories"][-1]  # read on past the damaged page
    assert f"salvaged   {len(kept)} memories and {len(after['memory_links'])} links" in fix.stdout
    assert "lost       memories rows " in fix.stdout and "(in damaged pages)" in fix.stdout
    ids = {row[1] for row in kept}
    wanted = [r for r in before["memory_links"] if r[1] in ids and r[2] in ids]
    assert after["memory_links"] == wanted  # every link whose two ends were kept, only those
    [aside] = (mama_home / "damaged").glob("mama-*.db")
    assert aside.read_bytes() == damaged  # set aside, byte for byte
    assert examine(db, full=True).problems == []
    with Store.open(config=Config(mama_home), check="quick") as store:
        assert store.vectors.count_pending() == 0  # embedded again by the salvage
        found = retrieve(store, "cache tier in Redis for service 299", embedder=embedder, k=3)
        assert "Decision 299:" in found[0].memory.content
        save_decision(store, PROJECT, {"topic": "t", "decision": "Saving works", "reasoning": "r"})


def test_salvage_refuses_a_sound_store_and_derived_damage(mama_home: Path) -> None:
    db = build(mama_home)
    sound = run_mama(mama_home, "doctor", "--salvage")
    assert sound.returncode == 1 and f"{db} is sound: nothing to salvage" in sound.stderr
    garbage(db, btree_pages(db, "memories_fts_data", kinds=("leaf", "internal"))[:2])
    derived = run_mama(mama_home, "doctor", "--salvage")
    assert derived.returncode == 1 and f"`{MAMA} doctor --repair` rebuilds it" in derived.stderr
    assert not (mama_home / "damaged").exists()


def test_a_row_whose_own_overflow_page_is_damaged_is_skipped_alone(tmp_path: Path) -> None:
    """Damage in one row's overflow: that row is lost, the rows on either side are read."""
    path = tmp_path / "t.db"
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA page_size = 4096")
    conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB)")
    for i in range(1, 41):
        conn.execute("INSERT INTO t VALUES (?, ?)", (i * 3, bytes([i]) * (9000 if i == 20 else 50)))
    conn.close()
    overflow = btree_pages(path, "t", kinds=("overflow",))
    garbage(path, overflow[:1])  # the first overflow page of row 60
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB)")
    reader = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    # Random bytes over the page break its chain (its first bytes point to the next page):
    # the row is unreadable, the rows on both sides of it arrive.
    copied, gaps = copy_readable(reader, conn, "t", ["id", "body"], rowids=True)
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM main.t ORDER BY id")]  # type: ignore[arg-type]
    assert ids == [i for i in range(3, 121, 3) if i != 60]
    assert copied == len(ids) and gaps == [Gap("t", 57, 63)]
    assert gaps[0].told() == "t rows 58–62"
