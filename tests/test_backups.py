"""MAMA keeps a bounded number of daily backups, private, and `mama doctor` restores one.

The day's backup is taken once a day (the MCP server calls it off every hook's path), checked
before it counts, and the automatic ones beyond the newest ``KEEP`` are deleted; backups taken
for an import are never rotated out. Bad input to ``--restore`` is a sentence, not a traceback.
"""

from __future__ import annotations

import fcntl
import os
import stat
import time
from pathlib import Path

import pytest
from conftest import MAMA, PROJECT, btree_pages, run_mama

from mama_plugin.config import Config
from mama_plugin.errors import MamaError
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store, backup
from mama_plugin.storage.backup import EVERY_S, KEEP, back_up, backups, daily_backup

DAY = 24 * 3600
T0 = time.mktime((2026, 3, 1, 12, 0, 0, 0, 0, 0))


def decision(i: int) -> dict[str, str]:
    return {"topic": f"topic_{i}", "decision": f"Decision {i}", "reasoning": f"reason {i}"}


def filled(home: Path, n: int = 5) -> Store:
    store = Store.open(config=Config(home))
    for i in range(n):
        save_decision(store, PROJECT, decision(i))
    return store


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_one_backup_a_day_the_newest_kept_private(mama_home: Path) -> None:
    with filled(mama_home) as store:
        kept_for_import = back_up(store, "pre-import")
        taken = []
        for day in range(KEEP + 2):
            now = T0 + day * DAY
            path = daily_backup(store, now=now)
            assert path is not None and path.name.endswith("-daily.db")
            taken.append(path)
            assert daily_backup(store, now=now + EVERY_S - 60) is None  # not due again yet
            save_decision(store, PROJECT, decision(100 + day))
        automatic = [b.path for b in backups(store.path) if b.automatic]
        assert automatic == taken[::-1][:KEEP]  # the newest KEEP, newest first
        assert all(not p.exists() for p in taken[:-KEEP])
        assert kept_for_import.exists()  # an import's backup is not rotated out
        folder = mama_home / "backups"
        assert mode(folder) == 0o700
        assert all(mode(p) == 0o600 for p in folder.iterdir() if p.suffix == ".db")
        assert not list(folder.glob(".*.partial"))
    newest = Store.open(taken[-1], config=Config(mama_home), check="quick")
    with newest:
        assert newest.memories.counts()["memories"] == 5 + KEEP + 1


def test_a_copy_that_does_not_check_sound_pushes_out_nothing(
    mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with filled(mama_home) as store:
        for day in range(KEEP):
            daily_backup(store, now=T0 + day * DAY)
        before = backups(store.path)
        monkeypatch.setattr(backup, "check_file", lambda *_, **__: ["a page is all zeros"])
        with pytest.raises(MamaError, match=r"does not check sound \(a page is all zeros\)"):
            daily_backup(store, now=T0 + KEEP * DAY)
        assert backups(store.path) == before
        assert not list((mama_home / "backups").glob(".*.partial"))


def test_a_partial_copy_is_no_backup_and_is_cleared(mama_home: Path) -> None:
    """A process killed while copying leaves a hidden file: never listed, cleared later."""
    with filled(mama_home) as store:
        folder = mama_home / "backups"
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / ".mama-20260301T120000-daily.db.partial"
        partial.write_bytes(b"SQLite format 3\x00 cut short")
        assert backups(store.path) == []
        assert daily_backup(store, now=T0) is not None
        assert not partial.exists()


def test_another_process_taking_it_is_left_to_it(mama_home: Path) -> None:
    with filled(mama_home) as store:
        folder = mama_home / "backups"
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / ".daily.lock", "a") as held:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            assert daily_backup(store, now=T0) is None
        assert daily_backup(store, now=T0) is not None


@pytest.mark.anyio
async def test_the_server_takes_the_days_backup_in_the_background(
    tmp_path: Path, mama_home: Path
) -> None:
    from mama_plugin.server.background import back_up_in_background
    from mama_plugin.server.state import State

    served = State(Config(mama_home), PROJECT, tmp_path / "server.db")
    try:
        save_decision(served.store, PROJECT, decision(1))
        await back_up_in_background(served, after_s=0)
        [taken] = backups(tmp_path / "server.db")
        assert taken.automatic and mode(taken.path) == 0o600
        await back_up_in_background(served, after_s=0)  # taken today already
        assert len(backups(tmp_path / "server.db")) == 1
    finally:
        served.close()


def test_doctor_restores_a_daily_backup_when_the_memories_are_damaged(mama_home: Path) -> None:
    with filled(mama_home, 12) as store:
        taken = daily_backup(store)
        assert taken is not None
        save_decision(store, PROJECT, decision(99))  # after the backup: not in it
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        db = store.path
    with open(db, "r+b") as handle:  # the memories' own pages: only a backup helps
        for page in btree_pages(db, "memories")[:2]:
            handle.seek((page - 1) * 4096)
            handle.write(b"\xa5" * 4096)

    check = run_mama(mama_home, "doctor")
    assert check.returncode == 1
    assert "damaged    the memories or links themselves" in check.stdout
    assert f"{taken.name}  taken " in check.stdout and "automatic" in check.stdout
    assert f"run `{MAMA} doctor --restore` to put back {taken.name}" in check.stdout
    refused = run_mama(mama_home, "doctor", "--repair")
    assert refused.returncode == 1 and "a rebuild cannot bring them back" in refused.stderr

    fix = run_mama(mama_home, "doctor", "--restore", taken.name)
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert f"restored   {taken} → {db}: quick_check ok, 12 memories" in fix.stdout
    assert run_mama(mama_home, "doctor").returncode == 0


def test_restore_input_that_cannot_be_used_is_a_sentence(
    mama_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from mama_plugin.cli import doctor, main

    with filled(mama_home) as store:
        taken = daily_backup(store)
        assert taken is not None
    missing = run_mama(mama_home, "doctor", "--restore", "no-such-backup.db")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert "no backup file no-such-backup.db: name one that `mama doctor` lists" in missing.stderr
    not_a_db = tmp_path / "notes.db"
    not_a_db.write_text("these are notes, not a database\n" * 20)
    wrong = run_mama(mama_home, "doctor", "--restore", str(not_a_db))
    assert wrong.returncode == 1 and f"the backup {not_a_db} is damaged too" in wrong.stderr
    folder = run_mama(mama_home, "doctor", "--restore", str(tmp_path))
    assert folder.returncode == 1 and "no backup file" in folder.stderr

    real_access = os.access  # root reads every file: make this one unreadable by hand
    monkeypatch.setattr(
        doctor.os, "access", lambda p, m: False if Path(p) == taken else real_access(p, m)
    )
    assert main(["doctor", "--restore", taken.name]) == 1
    err = capsys.readouterr().err
    assert f"the backup {taken} cannot be read (permission denied)" in err
    assert f"chmod u+r {taken}" in err


def test_a_missing_database_is_restored_from_a_backup(mama_home: Path) -> None:
    with filled(mama_home, 7) as store:
        taken = daily_backup(store)
        assert taken is not None
        db = store.path
    for leftover in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        leftover.unlink(missing_ok=True)
    gone = run_mama(mama_home, "doctor")
    assert gone.returncode == 0 and "does not exist yet" in gone.stdout
    assert taken.name in gone.stdout
    fix = run_mama(mama_home, "doctor", "--restore")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert f"restored   {taken} → {db}: quick_check ok, 7 memories" in fix.stdout
    assert mode(db) == 0o600
