"""Opening a store's file: checked first, migrated read-write or else opened read-only.

:func:`open_file` is :meth:`~.store.Store.open`'s work before a store exists: it never writes
into a damaged file (StoreDamaged, naming the newest backup), never creates a database where a
configured ``db_path`` names none (ConfigError), raises StoreBusyError when another writer holds
the lock past the busy timeout, and falls back to a read-only connection when the place cannot
be written. :func:`damage_of` is the one sentence for a damaged file. Imports: standard
library, apsw, leaves.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import apsw

from ..config import Config
from ..errors import ConfigError, StoreBusyError, StoreDamaged, StoreReadOnly
from .backup import backups
from .connection import connect
from .diagnosis import Findings, diagnose, examine, read_without
from .faults import READ_ONLY, cannot_write, connect_read_only, prepare, refusal
from .integrity import QUICK_CHECK_BYTES, header_problem, is_damage, sanity_read
from .migrations import LATEST, migrate, user_version

Check = Literal["auto", "quick", "none"]


def open_file(
    db: Path, config: Config, timeout: int, check: Check
) -> tuple[apsw.Connection, StoreReadOnly | None, StoreDamaged | None]:
    """A checked, migrated connection to ``db``, why it is read-only (None: it is not), and
    the damage it was opened with (None: none found).

    ``check`` is what is verified first (see :meth:`~.store.Store.open`); ``timeout`` bounds
    every wait for another writer's lock. A file damaged only where reads can do without
    (:func:`~.diagnosis.read_without`) and at the latest schema opens with that damage: read
    as usual, written never. Nothing is left open when it raises.
    """
    if check != "none" and db.exists() and (problem := header_problem(db)):
        raise damage_of(db, Findings([problem]))
    _refuse_a_new_store_at_a_configured_path(db, config)
    conn: apsw.Connection | None = None
    read_only: StoreReadOnly | None = None
    damage: StoreDamaged | None = None
    try:
        try:
            prepare(db)
            conn = connect(db, busy_timeout_ms=timeout)
            damage = _check_on_open(conn, db, check)
            if damage is None:
                migrate(conn, embedding_dim=config.settings.embedding_dim)
        except (*READ_ONLY, OSError) as exc:
            if not db.exists() or not cannot_write(exc):
                raise
            _close(conn)  # the place is read-only: open it so, every read still works
            conn = connect_read_only(db, busy_timeout_ms=timeout)
            damage = _check_on_open(conn, db, check)
            read_only = StoreReadOnly(str(db), _why_read_only(exc))
    except apsw.BusyError as exc:
        _close(conn)
        raise StoreBusyError(busy_message(db)) from exc
    except BaseException as exc:
        _close(conn)
        if is_damage(exc):
            raise damage_of(db) from exc
        if (refused := refusal(exc, db)) is not None:
            raise refused from exc
        raise
    return conn, read_only, damage


def damage_of(path: Path, findings: Findings | None = None) -> StoreDamaged:
    """The error naming what is wrong with ``path``, and the fix: ``mama doctor --repair``
    when only what the memories rebuild is damaged, else the newest backup to restore.

    ``path`` is checked now unless ``findings`` says what is wrong already.
    """
    found = findings if findings is not None and findings.problems else diagnose_file(path)
    newest = next(iter(backups(path)), None)
    return StoreDamaged(
        str(path),
        found.problems,
        (newest.path.name, newest.when) if newest is not None else None,
        derived=found.derived,
        readable=read_without(found.derived),
    )


def diagnose_file(path: Path) -> Findings:
    """What is wrong with the file at ``path`` (no problems when it checks sound), read-only."""
    return examine(path, limit=3)


def _check_on_open(conn: apsw.Connection, path: Path, check: Check) -> StoreDamaged | None:
    """The damage a readable file was found with (None: none found); raises it when the
    file cannot be read as usual, or must climb a migration step first (a write)."""
    if check == "none":
        return None
    sanity_read(conn)
    if check == "quick":
        findings = diagnose(conn, limit=3, depth="quick")
    elif os.path.getsize(path) <= QUICK_CHECK_BYTES:
        findings = diagnose(conn, limit=3, depth="structure")
    else:
        return None
    if not findings.problems:
        return None
    damage = damage_of(path, findings)
    if not damage.readable or user_version(conn) != LATEST:
        raise damage
    return damage


def _refuse_a_new_store_at_a_configured_path(db: Path, config: Config) -> None:
    """A ``db_path`` naming no file is far likelier a typo than a wish for an empty store.

    Creating one there would hide every memory behind a silently empty store, so MAMA creates
    a database only at its default place, or where the user made the (empty) file first.
    """
    configured = config.settings.db_path
    if not configured or db.exists() or db != config.db_path:
        return
    missing = db if db.parent.is_dir() else db.parent
    start = f"touch {db}" if missing == db else f"mkdir -p {db.parent} && touch {db}"
    raise ConfigError(
        f"db_path in {config.path} names {db}, but {missing} does not exist; MAMA creates a "
        "new database only at its default place. If that is a typo, fix it with `mama config "
        f"set db_path PATH` (or `mama config unset db_path`); to start a new store there, "
        f"create the empty file first: {start}"
    )


def _why_read_only(exc: BaseException) -> str:
    """Why a read-write open failed, in a few words."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return f"SQLite: {exc}"


def _close(conn: apsw.Connection | None) -> None:
    if conn is not None:
        conn.close()


def busy_message(path: Path) -> str:
    return f"the database {path} stayed locked by another writer; try again in a moment"
