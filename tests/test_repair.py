"""A derived index is rebuilt, not mourned: `mama doctor --repair` keeps every memory and link.

Each test builds a real store (decisions, an outcome, a supersede chain, a checkpoint that
implements one: memories and links) embedded by the real model, writes garbage over pages of
what the memories derive — sqlite-vec's chunk tables, FTS5's data — found with SQLite's
``dbstat``, and checks that every surface (the CLI, the session-start notice, an MCP tool)
says only that part is damaged and gives the command that repairs it; then repairs it and
checks that the memories and links are the same rows, and that search works again.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import apsw
import pytest
from conftest import (
    CHECKPOINT,
    DESKTOP,
    MAMA,
    Story,
    btree_pages,
    connect,
    file_fingerprint,
    run_mama,
    tell_story,
    text_result,
)
from mcp.types import CallToolResult

from mama_plugin.config import Config
from mama_plugin.embeddings import Embedder
from mama_plugin.errors import MamaError, StoreDamaged
from mama_plugin.hooks.runner import run
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.services.search.indexing import drain, narrative_text
from mama_plugin.services.search.retrieval import retrieve
from mama_plugin.storage import Store, opening
from mama_plugin.storage.diagnosis import FULL_TEXT, INDEXES, VECTORS, examine

PAGE = 4096
PROJECT = "/work/example-project"
SUBJECTS = (
    "Postgres connection pooling with pgbouncer",
    "feature flags served from LaunchDarkly",
    "image thumbnails rendered by a Lambda",
    "nightly exports to S3 in Parquet",
    "rate limiting at the API gateway",
    "search indexing through OpenSearch",
    "mobile push through Firebase",
    "billing events on a Kafka topic",
    "GraphQL schema stitching for the web app",
    "blue-green deploys behind the load balancer",
)


@pytest.fixture
def home(mama_home: Path, built_model: Path) -> Path:
    """MAMA_HOME whose config points every process at the session's built model."""
    mama_home.mkdir(parents=True, exist_ok=True)
    (mama_home / "config.json").write_text(json.dumps({"embedding_model_path": str(built_model)}))
    return mama_home


def build(home: Path, embedder: Embedder) -> tuple[Path, Story]:
    """The story (memories and links) and one decision a subject, two of them replaced."""
    with Store.open(config=Config(home)) as store:
        story = tell_story(store, PROJECT, checkpoint=CHECKPOINT)
        previous = ""
        for i, subject in enumerate(SUBJECTS):
            decision = {
                "topic": f"subject_{i}",
                "decision": f"Use {subject}",
                "reasoning": f"measured in the load test of week {i}: it held at peak",
            }
            if i % 4 == 3:
                decision["supersedes"] = previous
            previous = save_decision(store, PROJECT, decision).memory.id
        drain(store, embedder)
        assert store.vectors.count() == store.memories.counts()["memories"] > 10
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return home / "mama.db", story


def garbage(db: Path, pages: list[int], *, seed: int = 7) -> None:
    """Write random bytes over each of ``pages`` (1-based), as a failing disk would."""
    rng = random.Random(seed)
    with open(db, "r+b") as handle:
        for page in pages:
            handle.seek((page - 1) * PAGE)
            handle.write(rng.randbytes(PAGE))


def kept_rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of the memories and links, read without an index."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {
            table: conn.execute(f"SELECT * FROM {table} NOT INDEXED ORDER BY 1").fetchall()
            for table in ("memories", "memory_links")
        }
    finally:
        conn.close()


def session_start_context(home: Path) -> str:
    event = {"session_id": "s", "cwd": PROJECT, "hook_event_name": "SessionStart"}
    out = io.StringIO()
    assert run("session-start", io.StringIO(json.dumps(event)), out) == 0
    return str(json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"])


async def tool_answers(
    home: Path, db: Path, query: str, embedder: Embedder
) -> tuple[CallToolResult, ...]:
    """What the MCP server answers a search for ``query``, then a save (its model loaded, as
    the warm-up loads it)."""
    from mama_plugin.server.state import State

    served = State(Config(home), PROJECT, db)
    served.embedder = embedder
    served.embedder_ready.set()
    save = {"topic": "after", "decision": "Saving works", "reasoning": "it was repaired"}
    try:
        async with connect(served, DESKTOP) as client:
            return (
                await client.call_tool("search_by_context", {"query": query}),
                await client.call_tool("save_decision", save),
                await client.call_tool(
                    "observe_prompt", {"prompt": f"What did we decide about {query}?"}
                ),
                await client.call_tool("load_checkpoint", {}),
            )
    finally:
        served.close()


async def assert_read_as_usual_and_offered_the_repair(
    home: Path, db: Path, part: str, query: str, meant: str, embedder: Embedder
) -> None:
    """Damaged where reads do without: every surface reads as usual — the search finds
    ``meant`` for ``query`` without ``part``, the session start tells the story, the prompt
    hook recalls the chain — names the damage and the repair, and writes nothing (a save is
    refused with the repair)."""
    repair = f"`{MAMA} doctor --repair`"
    before = file_fingerprint(db)
    for args in (["status"], ["search", query, "--project", PROJECT, "--json"]):
        proc = run_mama(home, *args)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        [line] = proc.stderr.strip().splitlines()
        assert line.startswith(f"mama: warning: the memory store {db} is damaged (")
        assert f"in {part} only, which MAMA rebuilds from the memories" in line
        assert f"MAMA reads them as usual, searching without {part}" in line
        assert repair in line and "every memory and link is kept" in line
    assert meant in proc.stdout, proc.stdout  # the search's answer names it
    doctor = run_mama(home, "doctor")
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert f"damaged    only {part}, which MAMA rebuilds from the memories" in doctor.stdout
    start = session_start_context(home)
    assert "Where I stopped" in start or "What I did" in start, start  # the story, as read
    assert f"is damaged in {part} only: the memories are intact and read as usual" in start
    assert f"Tell the user to run {repair} in a terminal" in start
    searched, saved, prompted, resumed = await tool_answers(home, db, query, embedder)
    assert not resumed.is_error and "Redis HA with Sentinel" in text_result(resumed)
    recalled = json.loads(text_result(prompted))["hookSpecificOutput"]["additionalContext"]
    assert "Server-side sessions in Redis" in recalled and "it replaced" in recalled  # the chain
    assert not searched.is_error and meant in text_result(searched)
    assert text_result(searched).startswith(f"[MAMA's memory store ({db}) is damaged in {part}")
    assert saved.is_error and f"in {part} only" in text_result(saved)
    assert repair in text_result(saved)
    with Store.open(config=Config(home)) as store, pytest.raises(StoreDamaged) as refused:
        save_decision(store, PROJECT, {"topic": "t", "decision": "d", "reasoning": "r"})
    assert refused.value.readable and repair in str(refused.value)
    assert file_fingerprint(db) == before  # no surface wrote into it


def assert_every_surface_offers_the_repair(home: Path, db: Path, part: str) -> None:
    repair = f"`{MAMA} doctor --repair`"
    before = file_fingerprint(db)
    for args in (["status"], ["search", "Redis sessions", "--keyword-only"]):
        proc = run_mama(home, *args)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        [line] = proc.stderr.strip().splitlines()
        assert line.startswith(f"mama: error: the memory store {db} is damaged (")
        assert f"in {part} only, which MAMA rebuilds from the memories" in line
        assert repair in line and "every memory and link is kept" in line
    doctor = run_mama(home, "doctor")
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert "integrity  DAMAGED" in doctor.stdout
    assert f"damaged    only {part}, which MAMA rebuilds from the memories" in doctor.stdout
    assert f"to repair  run {repair}" in doctor.stdout
    notice = session_start_context(home)
    assert f"is damaged in {part} only: the memories are intact" in notice, notice
    assert f"Tell the user to run {repair} in a terminal" in notice
    assert file_fingerprint(db) == before  # no surface wrote into it


def assert_repaired(
    home: Path, db: Path, part: str, before: dict[str, list[tuple[object, ...]]]
) -> None:
    damaged = db.read_bytes()
    fix = run_mama(home, "doctor", "--repair")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    count, links = len(before["memories"]), len(before["memory_links"])
    assert (
        f"rebuilt    {part} from the memories: {count} memories and {links} links kept"
        in fix.stdout
    )
    assert f"embedded   {count} memories with " in fix.stdout
    assert kept_rows(db) == before  # every memory and link, row for row
    [aside] = (home / "damaged").glob("mama-*.db")
    assert aside.read_bytes() == damaged  # set aside, byte for byte
    assert examine(db, full=True).problems == []
    check = run_mama(home, "doctor")
    assert check.returncode == 0 and "integrity  ok" in check.stdout, check.stdout


@pytest.mark.anyio
async def test_damaged_vectors_are_offered_the_repair_and_rebuilt(
    home: Path, embedder: Embedder
) -> None:
    db, story = build(home, embedder)
    before = kept_rows(db)
    # The chunk tables: the vectors' blobs (a leaf and its overflow pages) and the chunks.
    chunks = btree_pages(db, "memory_vectors_vector_chunks00", kinds=("leaf", "overflow"))
    garbage(db, chunks[:3] + btree_pages(db, "memory_vectors_chunks")[:1])
    assert examine(db, full=True).derived == (VECTORS,)
    # Keyword search needs no vectors: it finds the memory as before.
    await assert_read_as_usual_and_offered_the_repair(
        home, db, VECTORS, "Redis sessions", story.sessions, embedder
    )

    assert_repaired(home, db, VECTORS, before)
    with Store.open(config=Config(home), check="quick") as store:
        assert store.vectors.count() == len(before["memories"])
        assert store.vectors.count_pending() == 0
        sessions = store.memories.require(story.sessions)
        # A memory's own narrative finds it first: the vectors are its, not garbage.
        [(nearest, _)] = store.vectors.knn(embedder.embed([narrative_text(store, sessions)])[0], 1)
        assert nearest == sessions.seq
        found = retrieve(store, "server-side sessions in Redis", embedder=embedder, k=3)
        assert story.sessions in [hit.memory.id for hit in found]
        save_decision(
            store,
            PROJECT,
            {"topic": "after", "decision": "Saving works", "reasoning": "it was repaired"},
        )


@pytest.mark.anyio
async def test_a_damaged_full_text_index_is_offered_the_repair_and_rebuilt(
    home: Path, embedder: Embedder
) -> None:
    db, story = build(home, embedder)
    before = kept_rows(db)
    garbage(db, btree_pages(db, "memories_fts_data", kinds=("leaf", "internal"))[:4])
    assert examine(db, full=True).derived == (FULL_TEXT,)
    # The vectors need no full-text index: a search by meaning finds the memory.
    await assert_read_as_usual_and_offered_the_repair(
        home, db, FULL_TEXT, "server-side sessions kept in Redis", story.sessions, embedder
    )

    assert_repaired(home, db, FULL_TEXT, before)
    with Store.open(config=Config(home)) as store:
        found = retrieve(store, "stateless JWT access tokens", retrievers=("keyword",), k=3)
        assert story.jwt in [hit.memory.id for hit in found]
        found = retrieve(store, "pgbouncer", retrievers=("keyword",), k=1)
        assert found and found[0].memory.content == f"Use {SUBJECTS[0]}"


def test_a_full_text_index_damaged_inside_its_blobs_is_found_by_a_search(
    home: Path, embedder: Embedder
) -> None:
    """Pages sound, FTS5's own data wrong: the walk on open misses it; the search that meets
    it, and doctor's integrity check, place it in the full-text index."""
    db, _ = build(home, embedder)
    with Store.open(config=Config(home)) as store:
        store.conn.execute(
            "UPDATE memories_fts_data SET block = randomblob(length(block)) "
            "WHERE id = (SELECT max(id) FROM memories_fts_data)"
        )
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    with Store.open(config=Config(home)) as store, pytest.raises(StoreDamaged) as raised:
        retrieve(store, "Redis sessions", retrievers=("keyword",))
    assert raised.value.derived == (FULL_TEXT,)
    assert f"`{MAMA} doctor --repair`" in str(raised.value)
    fix = run_mama(home, "doctor", "--repair")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert examine(db, full=True).problems == []


def test_vectors_damaged_in_a_store_too_large_to_check_on_open(
    home: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sqlite-vec words a damaged page as its own error: counted as damage when the file
    checks damaged (an ordinary SQL error stays what it is)."""
    monkeypatch.setattr(opening, "QUICK_CHECK_BYTES", 0)
    db, _ = build(home, embedder)
    overflow = btree_pages(db, "memory_vectors_vector_chunks00", kinds=("overflow",))
    garbage(db, overflow[:4])
    with Store.open(config=Config(home)) as store:
        with pytest.raises(apsw.SQLError):
            store.conn.execute("SELECT no_such_column FROM memories").fetchall()
        assert store.damage is None
        with pytest.raises(StoreDamaged) as raised:
            store.vectors.knn(embedder.embed(["Redis sessions"])[0], 5, project=PROJECT)
        assert raised.value.derived == (VECTORS,)
        assert store.damage is not None  # and writes are refused from now on


def test_a_damaged_index_is_not_read_through_but_offered_the_repair(
    home: Path, embedder: Embedder
) -> None:
    """An index answers queries: read through damage it could give wrong rows, so a store
    damaged in an index is not read as usual; it is offered the repair and rebuilt."""
    db, _ = build(home, embedder)
    before = kept_rows(db)
    garbage(db, btree_pages(db, "memory_files_by_project")[:1])
    assert examine(db, full=True).derived == (INDEXES,)
    assert_every_surface_offers_the_repair(home, db, INDEXES)
    assert_repaired(home, db, INDEXES, before)


def test_random_bytes_over_the_vectors_own_blobs_are_found_by_doctor(
    home: Path, embedder: Embedder
) -> None:
    """The page chain intact, the vectors' bytes random: every page checks sound, and the full
    check (`mama doctor`) finds vectors no model writes, placed in the vectors, repaired."""
    db, _ = build(home, embedder)
    conn = apsw.Connection(str(db))
    try:
        conn.execute(
            "UPDATE memory_vectors_vector_chunks00 SET vectors = randomblob(length(vectors))"
        )
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        conn.close()
    assert examine(db).problems == []  # what an open checks finds nothing
    found = examine(db, full=True)
    assert found.derived == (VECTORS,), found
    assert "a vector holds values no embedding model writes" in found.problems[0]
    check = run_mama(home, "doctor")
    assert check.returncode != 0 and "--repair" in check.stdout + check.stderr, check.stdout
    fix = run_mama(home, "doctor", "--repair")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert examine(db, full=True).problems == []


def test_repair_refuses_when_the_memories_themselves_are_damaged(
    home: Path, embedder: Embedder
) -> None:
    db, _ = build(home, embedder)
    garbage(db, btree_pages(db, "memories")[:2])
    assert examine(db, full=True).derived == ()
    before = file_fingerprint(db)
    fix = run_mama(home, "doctor", "--repair")
    assert fix.returncode == 1 and "Traceback" not in fix.stderr
    assert f"the memories or links of {db} are damaged, not only" in fix.stderr
    assert f"`{MAMA} doctor --restore`" in fix.stderr
    assert file_fingerprint(db) == before
    assert not (home / "damaged").exists()


def test_repair_of_a_sound_store_says_there_is_nothing_to_do(
    home: Path, embedder: Embedder
) -> None:
    build(home, embedder)
    fix = run_mama(home, "doctor", "--repair")
    assert fix.returncode == 1 and "is sound: nothing to repair" in fix.stderr
    both = run_mama(home, "doctor", "--repair", "--restore")
    assert both.returncode == 1 and "choose one" in both.stderr


def test_a_save_made_while_the_copy_is_built_is_not_lost(
    home: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session that never met the damage may save during a repair: the repair then replaces
    nothing and says to run it again."""
    from mama_plugin.storage import repair

    db, _ = build(home, embedder)
    garbage(db, btree_pages(db, "memories_fts_data", kinds=("leaf", "internal"))[:2])
    filled = repair._fill

    def fill_then_a_session_saves(*args: object) -> tuple[int, int]:
        counts = filled(*args)  # type: ignore[arg-type]
        with Store.open(config=Config(home), check="none") as store:
            store.conn.execute("INSERT INTO meta(key, value) VALUES ('saved', 'meanwhile')")
        return counts

    monkeypatch.setattr(repair, "_fill", fill_then_a_session_saves)
    with pytest.raises(MamaError, match="changed while it was being rebuilt"):
        repair.rebuild(db, embedding_dim=384)
    assert not (home / "damaged").exists()
    with Store.open(config=Config(home), check="none") as store:
        assert store.meta("saved") == "meanwhile"


def test_a_store_no_process_has_open_is_rebuilt(home: Path, embedder: Embedder) -> None:
    """No write-ahead log beside the file: reading it creates an empty one, which is no save."""
    from mama_plugin.storage import repair

    db, _ = build(home, embedder)
    before = kept_rows(db)
    garbage(db, btree_pages(db, "memories_fts_data", kinds=("leaf", "internal"))[:2])
    for leftover in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        leftover.unlink(missing_ok=True)
    rebuilt = repair.rebuild(db, embedding_dim=384)
    assert (rebuilt.memories, rebuilt.links) == (
        len(before["memories"]),
        len(before["memory_links"]),
    )
    assert kept_rows(db) == before and examine(db, full=True).problems == []
