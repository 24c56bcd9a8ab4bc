"""What the file system refuses the store: a read-only place, a full disk, a missing folder.

A store in a read-only home still opens, read-only (:func:`connect_read_only`): every read
works, every write raises :class:`~mama_plugin.errors.StoreReadOnly` saying how to fix it. A
write that meets a full disk is rolled back and raises :class:`~mama_plugin.errors.StoreFull`
(:func:`refusal`). Files are created private (0600, their folder 0700): SQLite gives the
database's ``-wal`` and ``-shm`` the database file's own mode. Standard library and apsw only.
"""

from __future__ import annotations

import errno
import urllib.parse
from pathlib import Path

import apsw

from ..errors import MamaError, StoreFull, StoreReadOnly
from ..home import create_private, fix_files, is_unwritable, private_folder
from .connection import connect
from .migrations import LATEST, user_version

# SQLite's ways of saying "this file or its folder cannot be written".
READ_ONLY = (apsw.ReadOnlyError, apsw.CantOpenError, apsw.PermissionsError)


def companions(db: Path) -> tuple[Path, Path, Path]:
    """The database file and the two SQLite keeps beside it in WAL mode."""
    return db, Path(f"{db}-wal"), Path(f"{db}-shm")


def prepare(db: Path) -> None:
    """Before a read-write open: make the files there private; create a missing one so.

    Raises StoreReadOnly when the database cannot be created (its folder is not writable).
    """
    if db.exists():
        fix_files(*companions(db))
        return
    try:
        private_folder(db.parent)
        create_private(db)  # empty: SQLite makes it a database, and its log takes its mode
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StoreFull(str(db)) from exc
        if is_unwritable(exc):
            raise StoreReadOnly(str(db), exc.strerror or str(exc), creating=True) from exc
        raise


def cannot_write(exc: BaseException) -> bool:
    """Whether opening read-write failed because the place is read-only (not a bug)."""
    return isinstance(exc, READ_ONLY) or is_unwritable(exc)


def connect_read_only(db: Path, *, busy_timeout_ms: int) -> apsw.Connection:
    """A read-only connection to ``db`` in a place MAMA cannot write.

    In WAL mode a reader needs the ``-shm`` file: when one is there (another process has the
    database open) it is used read-only and sees every commit; when none is and none can be
    made, the file is opened ``immutable`` — nobody can write it either, so nothing is missed.
    Raises StoreReadOnly when the schema is older than this MAMA (an upgrade must write).
    """
    quoted = urllib.parse.quote(str(db))
    last: BaseException | None = None
    for options in ("mode=ro", "immutable=1"):
        try:
            conn = connect(
                f"file:{quoted}?{options}", busy_timeout_ms=busy_timeout_ms, readonly=True
            )
        except apsw.Error as exc:
            last = exc
            continue
        try:
            version = user_version(conn)
        except READ_ONLY as exc:  # no -shm and none can be made: try immutable
            conn.close()
            last = exc
            continue
        if version < LATEST:
            conn.close()
            raise StoreReadOnly(
                str(db),
                f"its schema needs an upgrade that cannot be written: step {version} of {LATEST}",
            )
        return conn
    raise StoreReadOnly(str(db), str(last or "it cannot be opened"))


def refusal(exc: BaseException, db: Path) -> MamaError | None:
    """The error to raise for a write SQLite refused (disk full, read-only), or None."""
    if isinstance(exc, apsw.FullError):
        return StoreFull(str(db))
    if isinstance(exc, apsw.ReadOnlyError):
        return StoreReadOnly(str(db), "the file or its folder was made read-only")
    return None
