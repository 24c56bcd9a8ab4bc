"""Backups that are what they say: a copy cut short by a kill is never listed as a backup,
`mama doctor` checks each one it lists, the day's backup leaves nothing beside it, and a
session too short for the server's turn still gets the day's backup (started detached by the
SessionStart hook, off its path)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import PROJECT, ROOT, run_mama

from mama_plugin.config import Config
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store, backup
from mama_plugin.storage.backup import back_up, backups, daily_backup
from mama_plugin.storage.peek import backup_may_be_due


def _filled(home: Path) -> Store:
    store = Store.open(config=Config(home))
    for i in range(30):
        save_decision(
            store,
            PROJECT,
            {"topic": f"t{i}", "decision": f"Decision {i} " + "x" * 400, "reasoning": "why"},
        )
    return store


def test_an_import_backup_cut_short_by_a_kill_is_never_listed(
    mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def killed_halfway(source: object, *, into: object) -> None:
        with into.backup("main", source, "main") as job:  # type: ignore[attr-defined]
            job.step(2)
        raise SystemExit("killed")  # the process ends here: what was written stays

    with _filled(mama_home) as store:
        monkeypatch.setattr(backup, "_copy", killed_halfway)
        with pytest.raises(SystemExit):
            back_up(store, "pre-import")
        # Before: a torn file under a backup's name, that `mama doctor` listed as normal.
        assert backups(store.path) == []
        monkeypatch.undo()
        taken = back_up(store, "pre-import")
        assert [b.path for b in backups(store.path)] == [taken]
        assert not [p for p in taken.parent.iterdir() if p.name.startswith(".mama-")]


def test_doctor_checks_each_backup_it_lists(mama_home: Path) -> None:
    with _filled(mama_home) as store:
        good = daily_backup(store)
        torn = back_up(store, "pre-import")
    assert good is not None
    with open(torn, "r+b") as handle:  # torn as a kill of an older MAMA left one
        handle.truncate(os.path.getsize(torn) // 2)
    out = run_mama(mama_home, "doctor").stdout
    line = next(x for x in out.splitlines() if torn.name in x)
    # Before: listed with its size, like any other.
    assert "DAMAGED" in line, out
    assert "DAMAGED" not in next(x for x in out.splitlines() if good.name in x)


def test_the_days_backup_leaves_nothing_beside_it(mama_home: Path) -> None:
    with _filled(mama_home) as store:
        taken = daily_backup(store)
    assert taken is not None
    # Before: the check's -wal and -shm of the hidden copy stayed, two files a day.
    assert sorted(p.name for p in taken.parent.iterdir()) == [
        ".daily.due",
        ".daily.lock",
        taken.name,
    ]
    run_mama(mama_home, "doctor")  # and listing it (a check of each) leaves nothing either
    assert sorted(p.name for p in taken.parent.iterdir()) == [
        ".daily.due",
        ".daily.lock",
        taken.name,
    ]


def test_a_short_session_gets_the_days_backup_off_the_hooks_path(mama_home: Path) -> None:
    _filled(mama_home).close()
    env = {**os.environ, "MAMA_HOME": str(mama_home), "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    hook = subprocess.run(
        [sys.executable, "-P", "-m", "mama_plugin.hooks", "session-start"],
        input='{"source": "startup", "cwd": "' + PROJECT + '"}',
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert hook.returncode == 0 and hook.stderr == "", hook.stderr
    assert time.monotonic() - started < 10
    # The session ends here, long before the server's turn (10 s after it starts). Before:
    # no backup after 23 short sessions.
    deadline = time.monotonic() + 30
    db = Config(mama_home).db_path
    while not [b for b in backups(db) if b.automatic] and time.monotonic() < deadline:
        time.sleep(0.05)
    [taken] = [b for b in backups(db) if b.automatic]
    assert taken.path.is_file()
    # The next session's hook pays one stat and starts nothing: the stamp says tomorrow.
    assert not backup_may_be_due(db, time.time())
