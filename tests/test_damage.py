"""A damaged database is named, never written into, and `mama doctor` brings a backup back.

Each test builds a real store, damages the file the way disks and copies do (pages zeroed in
the middle, a file cut short, a header overwritten, one broken index page that writes miss),
and checks every surface: the store, the CLI (as a process: no traceback), the MCP tools, the
SessionStart hook — and that the damaged file's bytes never change.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest
from conftest import (
    DESKTOP,
    MAMA,
    btree_pages,
    connect,
    file_fingerprint,
    run_mama,
    text_result,
)

from mama_plugin.config import Config
from mama_plugin.errors import StoreDamaged
from mama_plugin.hooks.runner import run
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store, opening
from mama_plugin.storage.backup import back_up, backups

PAGE = 4096
PROJECT = "/work/example-project"


def decision(i: int) -> dict[str, str]:
    return {
        "topic": f"topic_{i:03d}",
        "decision": f"Decision {i}: keep the cache tier in Redis for service {i} " + "x" * 150,
        "reasoning": f"p99 {i} ms at 10K req/s in the load test " + "y" * 250,
    }


def build(home: Path, n: int = 300, *, backup: bool = False) -> Path:
    """A store of ``n`` decisions, checkpointed into the main file (no write-ahead log left)."""
    with Store.open(config=Config(home)) as store:
        for i in range(n):
            save_decision(store, PROJECT, decision(i))
        if backup:
            back_up(store, "test")
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    db = home / "mama.db"
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0
    return db


def zero(db: Path, first_page: int, count: int = 1) -> None:
    """Overwrite ``count`` pages from ``first_page`` (1-based) with zeros."""
    with open(db, "r+b") as handle:
        handle.seek((first_page - 1) * PAGE)
        handle.write(b"\0" * PAGE * count)


def zero_middle(db: Path) -> None:
    """Zero three pages from the middle of the memories' rows: damage to the table itself,
    wherever the schema's other b-trees put it in the file."""
    leaves = btree_pages(db, "memories")
    zero(db, leaves[len(leaves) // 2], 3)


def cut_short(db: Path) -> None:
    with open(db, "r+b") as handle:
        handle.truncate(db.stat().st_size // 2)


def garbage_header(db: Path) -> None:
    with open(db, "r+b") as handle:
        handle.write(b"this is not what SQLite wrote here " * 3)


def broken_index_page(db: Path) -> None:
    """Zero the first leaf of the memories' id index: a new (later) id never goes there."""
    zero(db, btree_pages(db, "sqlite_autoindex_memories_1")[0])


DAMAGES: dict[str, Callable[[Path], None]] = {
    "zeroed pages in the middle": zero_middle,
    "file cut short": cut_short,
    "garbage header": garbage_header,
    "one broken index page": broken_index_page,
}


def test_the_old_failure_a_save_into_a_malformed_database_was_acknowledged(
    mama_home: Path,
) -> None:
    """Without the check (what MAMA did before), the broken index page lets a save through."""
    db = build(mama_home)
    broken_index_page(db)
    with Store.open(config=Config(mama_home), check="none") as store:
        saved = save_decision(store, PROJECT, decision(999))
        assert saved.summary().startswith("Saved decision")
        problems = store.conn.execute("PRAGMA quick_check").fetchall()
    assert problems != [("ok",)]


@pytest.mark.parametrize("damage", DAMAGES)
def test_opening_a_damaged_store_names_it_and_writes_nothing(mama_home: Path, damage: str) -> None:
    db = build(mama_home)
    DAMAGES[damage](db)
    before = file_fingerprint(db)
    with pytest.raises(StoreDamaged) as raised, Store.open(config=Config(mama_home)) as store:
        save_decision(store, PROJECT, decision(999))
    message = str(raised.value)
    assert f"the memory store {db} is damaged (" in message
    assert "MAMA writes nothing into it" in message and f"`{MAMA} doctor" in message
    if damage == "one broken index page":  # an index: rebuilt from its table, nothing lost
        assert raised.value.derived == ("the indexes of its tables",)
        assert f"`{MAMA} doctor --repair`" in message
    else:
        assert raised.value.derived == ()
        assert "there is no backup to restore" in message
    assert file_fingerprint(db) == before


def test_the_message_names_the_newest_backup_and_its_date(mama_home: Path) -> None:
    db = build(mama_home, backup=True)
    newest = backups(db)[0]
    zero_middle(db)
    with pytest.raises(StoreDamaged) as raised:
        Store.open(config=Config(mama_home))
    assert f"({newest.path.name}, taken {newest.when})" in str(raised.value)
    assert raised.value.backup == (newest.path.name, newest.when)


def test_a_large_store_finds_damage_on_the_write_and_refuses_every_later_one(
    mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above QUICK_CHECK_BYTES the open reads the header and schema only: the first statement
    that meets the damage raises, nothing of it is committed, and no later write goes in."""
    monkeypatch.setattr(opening, "QUICK_CHECK_BYTES", 0)
    db = build(mama_home)
    zero(db, btree_pages(db, "memories")[-1])  # where the next row goes
    before = file_fingerprint(db)
    with Store.open(config=Config(mama_home)) as store:
        with pytest.raises(StoreDamaged) as first:
            save_decision(store, PROJECT, decision(999))
        assert "MAMA writes nothing into it" in str(first.value)
        # A write that would miss the damaged page is refused too: the cliffhanger cache.
        with pytest.raises(StoreDamaged) as later:
            store.set_meta("brief:full:/work/example-project", "{}")
        assert str(later.value) == str(first.value)
    assert file_fingerprint(db) == before


def test_a_commit_that_meets_damage_is_not_acknowledged(mama_home: Path) -> None:
    """COMMIT raising SQLite's corruption error surfaces as StoreDamaged, rolled back."""
    build(mama_home, n=3)
    with Store.open(config=Config(mama_home)) as store:
        real = store.conn

        class FailingCommit:
            def __getattr__(self, name: str) -> object:
                return getattr(real, name)

            def execute(self, sql: str, *args: object) -> object:
                if sql == "COMMIT":
                    raise apsw.CorruptError("database disk image is malformed")
                return real.execute(sql, *args)

        store._conns.get = lambda: FailingCommit()  # type: ignore[method-assign,assignment,return-value]
        with pytest.raises(StoreDamaged):
            save_decision(store, PROJECT, decision(999))
        assert real.getautocommit()
        store._conns.get = lambda: real  # type: ignore[method-assign]
        assert store.memories.counts()["memories"] == 3
        with pytest.raises(StoreDamaged):  # marked: no later write either
            store.set_meta("x", "y")


@pytest.mark.parametrize("damage", ["zeroed pages in the middle", "garbage header"])
def test_the_cli_says_what_is_wrong_without_a_traceback(mama_home: Path, damage: str) -> None:
    db = build(mama_home)
    DAMAGES[damage](db)
    before = file_fingerprint(db)
    for args in (["status"], ["search", "cache tier"], ["export", "--output", "-"]):
        proc = run_mama(mama_home, *args)
        assert proc.returncode == 1, (args, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"mama: error: the memory store {db}")
        assert f"`{MAMA} doctor`" in lines[0]
    assert file_fingerprint(db) == before


def test_an_unexpected_error_is_one_line_naming_the_log(
    mama_home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mama_plugin import cli
    from mama_plugin.services.hygiene import status

    def broken(*_: object, **__: object) -> object:
        raise RuntimeError("the status service broke")

    monkeypatch.setattr(status, "store_status", broken)
    assert cli.main(["status"]) == 1
    err = capsys.readouterr().err
    log = mama_home / "logs" / "cli.log"
    assert err == (
        "mama: error: unexpected RuntimeError: the status service broke (the traceback is in "
        f"{log}; please report it with that file)\n"
    )
    assert "Traceback" in log.read_text() and "the status service broke" in log.read_text()


@pytest.mark.anyio
async def test_the_save_tool_answers_with_the_sentence(tmp_path: Path, mama_home: Path) -> None:
    from mama_plugin.server.state import State

    db = build(mama_home)
    zero_middle(db)
    before = file_fingerprint(db)
    served = State(Config(mama_home), PROJECT, db)
    try:
        async with connect(served, DESKTOP) as client:
            result = await client.call_tool("save_decision", decision(999))
            search = await client.call_tool("search_by_context", {"query": "cache tier"})
    finally:
        served.close()
    for answer in (result, search):
        assert answer.is_error
        assert f": the memory store {db} is damaged (" in text_result(answer)
        assert f"`{MAMA} doctor`" in text_result(answer)
        assert "server.log" not in text_result(answer)
    assert file_fingerprint(db) == before


def test_session_start_writes_nothing_into_a_damaged_store(mama_home: Path) -> None:
    db = build(mama_home)
    broken_index_page(db)
    before = file_fingerprint(db)
    event = {"session_id": "s", "cwd": PROJECT, "hook_event_name": "SessionStart"}
    out = io.StringIO()
    assert run("session-start", io.StringIO(json.dumps(event)), out) == 0
    assert file_fingerprint(db) == before
    # The session is told, in one line, instead of a cliffhanger read from a broken file.
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "is damaged" in context and "mama doctor" in context, context


@pytest.mark.parametrize("damage", ["zeroed pages in the middle", "one broken index page"])
def test_a_cached_session_start_is_not_served_from_a_damaged_store(
    damage: str, mama_home: Path
) -> None:
    """The hook reads a cached cliffhanger without opening the store, after the same checks:
    a file damaged since it was cached gets the one-line notice, not the cached story."""
    db = build(mama_home)
    event = {"session_id": "s", "cwd": PROJECT, "hook_event_name": "SessionStart"}
    first = io.StringIO()
    assert run("session-start", io.StringIO(json.dumps(event)), first) == 0
    assert "<mama-memory>" in first.getvalue()  # rendered and cached
    with Store.open(config=Config(mama_home)) as store:  # the cache entry into the main file
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    DAMAGES[damage](db)
    out = io.StringIO()
    assert run("session-start", io.StringIO(json.dumps(event)), out) == 0
    context = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
    assert "is damaged" in context and "mama doctor" in context, context


def test_doctor_lists_checks_and_restores_the_newest_backup(mama_home: Path) -> None:
    db = build(mama_home, n=40, backup=True)
    with Store.open(config=Config(mama_home)) as store:  # saved after the backup: lost
        save_decision(store, PROJECT, decision(41))
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    newest = backups(db)[0]
    zero_middle(db)
    damaged = db.read_bytes()

    check = run_mama(mama_home, "doctor")
    assert check.returncode == 1, check.stderr
    assert "integrity  DAMAGED" in check.stdout
    assert f"{newest.path.name}  taken {newest.when}" in check.stdout
    assert f"run `{MAMA} doctor --restore`" in check.stdout

    fix = run_mama(mama_home, "doctor", "--restore")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert f"restored   {newest.path} → {db}: quick_check ok, 40 memories" in fix.stdout
    aside = sorted((mama_home / "damaged").glob("mama-*.db"))
    assert len(aside) == 1 and aside[0].read_bytes() == damaged  # kept, byte for byte
    with Store.open(config=Config(mama_home), check="quick") as store:
        assert store.memories.counts()["memories"] == 40
        save_decision(store, PROJECT, decision(42))

    sound = run_mama(mama_home, "doctor")
    assert sound.returncode == 0 and "integrity  ok" in sound.stdout
    again = run_mama(mama_home, "doctor", "--restore")
    assert again.returncode == 1 and "is sound: nothing to restore" in again.stderr


def test_doctor_replaces_a_file_whose_header_is_gone(mama_home: Path) -> None:
    db = build(mama_home, n=10, backup=True)
    garbage_header(db)
    fix = run_mama(mama_home, "doctor", "--restore")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert "the file was replaced: restart running Claude Code sessions" in fix.stdout
    with Store.open(config=Config(mama_home)) as store:
        assert store.memories.counts()["memories"] == 10


def test_doctor_without_a_backup_says_how_to_start_again(mama_home: Path) -> None:
    db = build(mama_home, n=10)
    cut_short(db)
    check = run_mama(mama_home, "doctor")
    assert check.returncode == 1
    assert "the file is cut short" in check.stdout
    assert f"there is no backup to restore: run `{MAMA} doctor --salvage`" in check.stdout
    fix = run_mama(mama_home, "doctor", "--restore")
    assert fix.returncode == 1 and "Traceback" not in fix.stderr
    assert "there is no sound backup" in fix.stderr
    # SQLite cannot open a file cut short: nothing to salvage, and it says what is left.
    salvaged = run_mama(mama_home, "doctor", "--salvage")
    assert salvaged.returncode == 1 and "Traceback" not in salvaged.stderr
    assert f"nothing of {db} could be salvaged" in salvaged.stderr, salvaged.stderr
    assert db.exists() and not (mama_home / "damaged").exists()


def test_a_store_restored_underneath_a_running_process_is_usable_again(
    mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that met the damage checks again once the file changed (restored in place)."""
    monkeypatch.setattr(opening, "QUICK_CHECK_BYTES", 0)
    db = build(mama_home, backup=True)
    zero(db, btree_pages(db, "memories")[-1])
    store = Store.open(config=Config(mama_home))
    try:
        with pytest.raises(StoreDamaged):
            save_decision(store, PROJECT, decision(999))
        fix = run_mama(mama_home, "doctor", "--restore")
        assert fix.returncode == 0, fix.stdout + fix.stderr
        assert "the file was replaced" not in fix.stdout  # in place: this store sees it
        assert store.damage is None
        save_decision(store, PROJECT, decision(1000))
        assert store.memories.counts()["memories"] == 301
    finally:
        store.close()


def test_verify_finds_damage_no_statement_met_and_refuses_writes(
    mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store too large to check on open: ``verify`` (the server's background check) finds
    a broken page nothing read, and the cliffhanger cache write is refused afterwards."""
    monkeypatch.setattr(opening, "QUICK_CHECK_BYTES", 0)
    db = build(mama_home)
    with Store.open(config=Config(mama_home)) as store:
        assert store.verify() is None
        store.set_meta("sound", "yes")  # a sound store takes writes
    broken_index_page(db)
    before = file_fingerprint(db)
    with Store.open(config=Config(mama_home)) as store:
        damage = store.verify()
        assert damage is not None and "btreeInitPage" in str(damage)
        with pytest.raises(StoreDamaged):
            store.set_meta("brief:full:/work/example-project", "{}")
    assert file_fingerprint(db) == before


def test_the_session_start_notice_is_one_short_line_naming_the_fix() -> None:
    damage = StoreDamaged("/home/u/.mama/mama.db", ["database disk image is malformed"], None)
    assert damage.notice == (
        "MAMA's memory store (/home/u/.mama/mama.db) is damaged: nothing can be saved or "
        f"recalled until it is repaired. Tell the user to run `{MAMA} doctor` in a terminal."
    )


def test_a_db_path_that_names_no_file_is_refused_not_created(mama_home: Path) -> None:
    """A typo in db_path must not hide every memory behind a new, empty store."""
    build(mama_home, n=3)
    typo = mama_home / "mama-typo" / "mama.db"
    (mama_home / "config.json").write_text(json.dumps({"db_path": str(typo)}))
    proc = run_mama(mama_home, "status")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"mama: error: db_path in {mama_home / 'config.json'} names")
    assert f"touch {typo}" in proc.stderr
    assert not typo.exists() and not typo.parent.exists()
    typo.parent.mkdir()
    typo.touch()  # the way to ask for a new store there
    assert run_mama(mama_home, "status").returncode == 0


def test_doctor_skips_a_damaged_backup_and_takes_a_named_one(mama_home: Path) -> None:
    db = build(mama_home, n=10, backup=True)
    older = backups(db)[0]
    with Store.open(config=Config(mama_home)) as store:
        save_decision(store, PROJECT, decision(11))
        newer = back_up(store, "later")
    newer = newer.rename(newer.with_name(newer.name.replace("-later", "-zlater")))
    garbage_header(newer)
    zero_middle(db)
    named = run_mama(mama_home, "doctor", "--restore", newer.name)
    assert named.returncode == 1 and f"the backup {newer} is damaged too" in named.stderr
    fix = run_mama(mama_home, "doctor", "--restore")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert f"skipped    {newer.name}: damaged too" in fix.stdout
    assert f"restored   {older.path} → {db}: quick_check ok, 10 memories" in fix.stdout
