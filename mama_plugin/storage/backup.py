"""Whole-database backups through SQLite's online backup API (consistent under WAL)."""

from __future__ import annotations

import time
from pathlib import Path

import apsw

from .store import Store


def backup_to(conn: apsw.Connection, dest: Path) -> Path:
    """Copy the live database behind ``conn`` into a new file ``dest``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    target = apsw.Connection(str(dest))
    try:
        _copy(conn, into=target)
    finally:
        target.close()
    return dest


def restore_from(conn: apsw.Connection, source: Path) -> None:
    """Replace the database behind ``conn`` with the contents of ``source``."""
    origin = apsw.Connection(str(source), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        _copy(origin, into=conn)
    finally:
        origin.close()


def _copy(source: apsw.Connection, *, into: apsw.Connection) -> None:
    """Copy the main database of ``source`` over that of ``into``, a few pages at a time."""
    with into.backup("main", source, "main") as job:
        while not job.done:
            job.step(1024)


def backup_path(db: Path, label: str) -> Path:
    """Where a backup of ``db`` taken now goes: ``<db dir>/backups/<stem>-<time>-<label>.db``."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    folder = db.parent / "backups"
    candidate = folder / f"{db.stem}-{stamp}-{label}.db"
    n = 1
    while candidate.exists():
        n += 1
        candidate = folder / f"{db.stem}-{stamp}-{label}-{n}.db"
    return candidate


def back_up(store: Store, label: str) -> Path:
    """Back the store up into a new file beside it (see :func:`backup_path`); its path."""
    return backup_to(store.conn, backup_path(store.path, label))


def restore(store: Store, source: Path) -> None:
    """Replace the store's database with the backup ``source``.

    In-memory vector indexes must not trust the restored (older) vector log: the log is
    emptied and ``vectors_epoch`` moves past the value it had before the restore.
    """
    epoch = int(store.meta("vectors_epoch") or 0)
    restore_from(store.conn, source)
    store.set_meta("vectors_epoch", str(epoch + 1))
    with store.transaction():
        store.conn.execute("DELETE FROM vector_log")
