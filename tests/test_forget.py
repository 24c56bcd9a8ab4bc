"""Forget, edit and redact: what goes, what stays, and the raw files afterwards.

Every check of "nothing remains" reads the bytes of the database file, its write-ahead log
and every file in ``backups/``, lower-cased (the full-text index stores tokens lower-cased);
each test first checks the text is there, so a search that sees nothing cannot pass.
"""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import pytest
from conftest import Counting

from mama_plugin.config import Config
from mama_plugin.errors import EditConflict, NotFoundError, ValidationError
from mama_plugin.schema import OutcomeInput, UpdateInput
from mama_plugin.services.hygiene.forgetting import edit, forget, redact
from mama_plugin.services.saving.memories import save_decision, save_insight
from mama_plugin.services.saving.outcomes import record_outcome_event
from mama_plugin.services.search.indexing import drain
from mama_plugin.storage import Store
from mama_plugin.storage.backup import back_up, daily_backup

SECRET = "Quixotrellis"  # no stemmer changes it: its token is its lower case
PROJECT = "/work/p"


def _files(db: Path) -> list[Path]:
    folder = db.parent / "backups"
    found = [db, Path(f"{db}-wal")] + (sorted(folder.iterdir()) if folder.is_dir() else [])
    return [f for f in found if f.is_file()]


def _holding(db: Path, text: str) -> list[str]:
    """The files of the store (and its backups) whose raw bytes hold ``text``, any case."""
    needle = text.lower().encode()
    return [f.name for f in _files(db) if needle in f.read_bytes().lower()]


def _filler(store: Store, n: int = 15) -> None:
    for i in range(n):
        save_decision(
            store, PROJECT, {"topic": f"t{i}", "decision": f"filler {i}", "reasoning": "because"}
        )


def _backed_up(store: Store) -> None:
    """Vectors and view vectors for every memory, then a daily and an import backup."""
    drain(store, Counting())
    assert daily_backup(store) is not None
    back_up(store, "import")


@pytest.fixture
def config(mama_home: Path) -> Config:
    return Config(mama_home)


def test_forget_leaves_nothing_of_the_text_in_the_file_its_log_or_the_backups(
    store: Store, config: Config
) -> None:
    _filler(store)
    secret = save_decision(
        store,
        PROJECT,
        {
            "topic": "payments",
            "decision": f"Pay through {SECRET} gateway",
            "reasoning": f"{SECRET} charges 0.9%",
            "specifics": [f"{SECRET} sandbox key rotation"],
        },
    ).memory
    failed = OutcomeInput(memory_id=secret.id, outcome="FAILED", details="timeouts at 200 req/s")
    record_outcome_event(store, failed)
    _backed_up(store)
    assert len([f for f in _holding(store.path, SECRET) if f.startswith("mama-")]) == 2
    assert {"mama.db", "mama.db-wal"} & set(_holding(store.path, SECRET))

    done = forget(store, config, secret.id)

    assert _holding(store.path, SECRET) == []
    assert store.memories.get(secret.id) is None
    assert len(done.events) == 1 and store.memories.get(done.events[0]) is None
    assert len(done.cleared.backups.rewritten) == 2 and not done.cleared.backups.deleted
    assert store.search.text(SECRET, limit=5) == []
    assert store.conn.execute("SELECT count(*) FROM memories_fts").fetchall()[0][0] == 15
    assert store.conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    # The backups are still backups: they open, and hold the other memories.
    for backup in (store.path.parent / "backups").glob("*.db"):
        with Store.open(backup, config=config) as copy:
            assert copy.memories.get(secret.id) is None
            assert copy.memories.counts()["memories"] == 15


def test_forget_removes_its_links_and_suggestions_and_restores_what_it_replaced(
    store: Store, config: Config
) -> None:
    old = save_decision(
        store, PROJECT, {"topic": "auth", "decision": "JWT", "reasoning": "stateless"}
    ).memory
    new = save_decision(
        store,
        PROJECT,
        {
            "topic": "auth",
            "decision": f"Sessions via {SECRET}",
            "reasoning": "refresh cost",
            "supersedes": old.id,
        },
    ).memory
    note = save_insight(
        store,
        PROJECT,
        {
            "content": "tokens leak in logs",
            "links": [
                {"to_id": new.id, "relationship": "motivated_by", "reason": "sessions were chosen"}
            ],
        },
    ).memory
    store.suggestions.add(
        PROJECT, note.id, old.id, "refines", "the same auth question", judged_by="rules"
    )
    drain(store, Counting())
    assert store.memories.require(old.id).status == "superseded"

    done = forget(store, config, new.id)

    # Its links (the supersedes link out, the motivated_by link in) are gone, nothing else.
    assert sorted(ln.relationship for ln in done.links) == ["motivated_by", "supersedes"]
    assert store.links.of(note.id) == [] and store.links.of(old.id) == []
    assert store.memories.get(note.id) is not None
    # The decision it had replaced is current again, and told without it: re-embedded.
    assert done.restored == [old.id]
    assert store.memories.require(old.id).status == "current"
    assert store.memories.require(old.id).outcome_status == "PENDING"
    assert store.memories.require(old.id).seq in store.vectors.queued()
    # A suggestion between two other memories stays.
    assert done.suggestions == 0
    assert len(store.suggestions.iter(project=PROJECT)) == 1
    with pytest.raises(NotFoundError):
        forget(store, config, new.id)


def test_forget_drops_the_suggestions_that_name_it(store: Store, config: Config) -> None:
    a = save_insight(store, PROJECT, {"content": f"{SECRET} retries twice"}).memory
    b = save_insight(store, PROJECT, {"content": "retries need jitter"}).memory
    store.suggestions.add(
        PROJECT, b.id, a.id, "refines", f"both about {SECRET} retries", judged_by="rules"
    )
    done = forget(store, config, a.id)
    assert done.suggestions == 1
    assert store.suggestions.iter(project=PROJECT) == []
    assert _holding(store.path, SECRET) == []


def test_edit_replaces_the_text_everywhere_and_reindexes_it(store: Store, config: Config) -> None:
    _filler(store)
    m = save_decision(
        store,
        PROJECT,
        {"topic": "queue", "decision": f"Queue jobs in {SECRET}", "reasoning": "it was there"},
    ).memory
    _backed_up(store)
    assert _holding(store.path, SECRET)

    done = edit(
        store,
        config,
        UpdateInput(
            memory_id=m.id,
            expected_version=m.version,
            content="Queue jobs in Postgres with SKIP LOCKED",
            reasoning={"primary": "one database to run"},
        ),
    )

    assert _holding(store.path, SECRET) == []
    assert done.before == 1 and done.memory.version == 2
    assert [r.id for r, _ in store.search.text("postgres skip locked", limit=3)][:1] == [m.id]
    assert store.search.text(SECRET, limit=3) == []
    assert m.seq in store.vectors.queued()  # its vector was of the old text
    drain(store, Counting())
    assert m.seq not in store.vectors.queued()
    assert len(done.cleared.backups.rewritten) == 2


def test_an_edit_from_an_older_version_is_a_conflict_showing_both(
    store: Store, config: Config
) -> None:
    m = save_decision(
        store, PROJECT, {"topic": "db", "decision": "SQLite", "reasoning": "one file"}
    ).memory
    edit(store, config, UpdateInput(memory_id=m.id, expected_version=1, content="SQLite in WAL"))
    with pytest.raises(EditConflict) as info:
        edit(store, config, UpdateInput(memory_id=m.id, expected_version=1, content="Postgres"))
    assert info.value.stored == {"content": "SQLite in WAL"}
    assert info.value.proposed == {"content": "Postgres"}
    assert "SQLite in WAL" in str(info.value) and "Postgres" in str(info.value)
    assert store.memories.require(m.id).content == "SQLite in WAL"
    assert store.memories.require(m.id).version == 2


def _edit_at(args: tuple[str, str, str, int, Any]) -> str:
    path, home, memory_id, version, barrier = args
    config = Config(Path(home))
    with Store.open(path, config=config) as store:
        barrier.wait(timeout=60)  # both have read version `version`: now both write
        try:
            edit(
                store,
                config,
                UpdateInput(
                    memory_id=memory_id,
                    expected_version=version,
                    content=f"written by {multiprocessing.current_process().name}",
                ),
            )
        except EditConflict as exc:
            return f"conflict:{exc.stored_version}:{exc.stored['content']}"
    return "won"


def test_two_processes_editing_one_version_one_wins_the_other_sees_both(
    store: Store, config: Config, mama_home: Path
) -> None:
    m = save_decision(
        store, PROJECT, {"topic": "db", "decision": "SQLite", "reasoning": "one file"}
    ).memory
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager, ctx.Pool(2) as pool:
        barrier = manager.Barrier(2)
        results = pool.map(
            _edit_at, [(str(store.path), str(mama_home), m.id, m.version, barrier)] * 2
        )
    assert sorted(r.split(":")[0] for r in results) == ["conflict", "won"]
    now = store.memories.require(m.id)
    assert now.version == 2
    conflict = next(r for r in results if r.startswith("conflict"))
    assert conflict == f"conflict:2:{now.content}"  # the winner's text, shown to the loser


def test_redact_masks_a_string_in_every_place_and_every_backup(
    store: Store, config: Config
) -> None:
    _filler(store)
    a = save_decision(
        store,
        PROJECT,
        {
            "topic": "vendors",
            "decision": f"Buy from {SECRET} Ltd",
            "reasoning": "cheapest",
            "tags": [f"{SECRET.lower()}-deal"],
        },
    ).memory
    b = save_insight(
        store,
        PROJECT,
        {
            "content": "contracts need legal review",
            "links": [
                {"to_id": a.id, "relationship": "motivated_by", "reason": f"the {SECRET} contract"}
            ],
        },
    ).memory
    _backed_up(store)
    assert _holding(store.path, SECRET)

    done = redact(store, config, SECRET.upper())

    assert _holding(store.path, SECRET) == []
    assert done.rows == {"memories": 1, "memory_links": 1}
    assert done.memories == [a.id]
    after = store.memories.require(a.id)
    assert after.content == "Buy from [REDACTED] Ltd" and after.tags == ["[REDACTED]-deal"]
    assert after.version == 2
    assert store.links.of(b.id)[0].reason == "the [REDACTED] contract"
    assert len(done.cleared.backups.rewritten) == 2
    with pytest.raises(ValidationError):
        redact(store, config, "ab")


def test_a_backup_that_cannot_be_rewritten_is_deleted(store: Store, config: Config) -> None:
    m = save_insight(store, PROJECT, {"content": f"{SECRET} is the vendor"}).memory
    broken = back_up(store, "import")
    broken.write_bytes(b"not a database" + SECRET.encode() * 100)
    done = forget(store, config, m.id)
    assert [p for p, _ in done.cleared.backups.deleted] == [broken]
    assert not broken.exists()
    assert _holding(store.path, SECRET) == []


def test_a_teammate_s_version_kept_in_a_conflict_is_redacted_and_forgotten(
    store: Store, config: Config
) -> None:
    import json

    m = save_insight(store, PROJECT, {"content": "contracts need legal review"}).memory
    theirs = json.dumps({"content": f"contracts with {SECRET} need legal review"})
    with store.transaction():
        store.conn.execute(
            "INSERT INTO team_conflicts(project, memory_id, base_version, server_version, "
            "theirs, raised_at) VALUES (?, ?, 1, 2, ?, 0)",
            (PROJECT, m.id, theirs),
        )
    assert _holding(store.path, SECRET)
    done = redact(store, config, SECRET)
    assert done.rows == {"team_conflicts": 1} and _holding(store.path, SECRET) == []
    kept = store.conn.execute("SELECT theirs FROM team_conflicts").fetchall()[0][0]
    assert json.loads(str(kept)) == {"content": "contracts with [REDACTED] need legal review"}
    forget(store, config, m.id)
    assert store.conn.execute("SELECT count(*) FROM team_conflicts").fetchall()[0][0] == 0


# -- the surfaces --------------------------------------------------------------------------


def test_the_commands_forget_edit_and_redact(
    store: Store, mama_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mama_plugin.cli import main

    a = save_insight(store, PROJECT, {"content": f"{SECRET} mirrors are slow"}).memory
    b = save_insight(store, PROJECT, {"content": f"use the {SECRET} cdn"}).memory
    db = str(store.path)
    assert main(["--db", db, "edit", a.id, "--content", "the mirrors are slow"]) == 0
    assert "version 1 → 2" in capsys.readouterr().out
    assert main(["--db", db, "edit", a.id, "--expected-version", "1", "--content", "x"]) == 1
    assert "changed since you read it" in capsys.readouterr().err
    assert main(["--db", db, "redact", SECRET]) == 0
    assert "memories ×1" in capsys.readouterr().out
    assert store.memories.require(b.id).content == "use the [REDACTED] cdn"
    assert main(["--db", db, "forget", b.id, "--json"]) == 0
    assert '"id": "' + b.id in capsys.readouterr().out
    assert store.memories.get(b.id) is None
    assert _holding(store.path, SECRET) == []


@pytest.mark.anyio
async def test_the_tools_update_and_forget_a_memory(state: Any) -> None:
    from conftest import DESKTOP, connect, text_result

    async with connect(state, DESKTOP) as c:
        saved = await c.call_tool(
            "save_insight", {"content": f"{SECRET} caches for an hour", "topic": "cache"}
        )
        assert "update_memory/forget_memory" in text_result(saved)  # the answer names them
        memory_id = saved.structured_content["id"]  # type: ignore[index]
        stale = {"memory_id": memory_id, "expected_version": 1, "content": "caches for a day"}
        updated = await c.call_tool("update_memory", stale)
        assert not updated.is_error and updated.structured_content["version"] == 2  # type: ignore[index]
        again = await c.call_tool("update_memory", {**stale, "content": "caches forever"})
        assert again.is_error
        assert "caches for a day" in text_result(again) and "caches forever" in text_result(again)
        gone = await c.call_tool("forget_memory", {"memory_id": memory_id})
        assert not gone.is_error and "Forgot insight" in text_result(gone)
    assert _holding(state.store.path, SECRET) == []


def test_the_pages_mama_view_wrote_go_with_the_text_they_hold(
    store: Store, mama_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mama_plugin.cli import main

    db = str(store.path)
    a = save_insight(store, PROJECT, {"content": f"{SECRET} mirrors are slow"}).memory
    save_insight(store, "/work/other", {"content": "the other project's lesson"})

    def pages() -> list[str]:
        return sorted(p.name for p in (mama_home / "views").glob("*.html"))

    def write_pages() -> None:
        for project in (PROJECT, "/work/other"):
            assert main(["--db", db, "view", "--project", project]) == 0
        capsys.readouterr()

    write_pages()
    assert pages() == ["other.html", "p.html"]
    assert SECRET in (mama_home / "views" / "p.html").read_text()
    assert main(["--db", db, "forget", a.id]) == 0
    assert "1 page(s) of `mama view` deleted" in capsys.readouterr().out
    assert pages() == ["other.html"]  # the page that held it went; the other project's stays

    b = save_insight(store, PROJECT, {"content": f"use the {SECRET} cdn"}).memory
    write_pages()
    assert main(["--db", db, "edit", b.id, "--content", "use the cdn"]) == 0
    assert pages() == ["other.html"]
    write_pages()
    assert main(["--db", db, "redact", "cdn"]) == 0  # escaped in a page: every page goes
    assert "2 page(s) of `mama view` deleted" in capsys.readouterr().out
    assert pages() == []
    write_pages()
    assert main(["--db", db, "redact", "nothing holds this"]) == 0
    assert "page(s)" not in capsys.readouterr().out and len(pages()) == 2  # nothing masked
