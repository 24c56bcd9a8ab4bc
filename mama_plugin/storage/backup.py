"""Whole-database backups through SQLite's online backup API (consistent under WAL).

Backups live in ``<db dir>/backups/`` (``$MAMA_HOME/backups/`` for the default store), 0600,
each a file of its own (rollback-journal mode: nothing is left beside it), written under a
hidden name and renamed once complete (a kill halfway leaves no backup that is not one). MAMA
takes one by itself once a day (:func:`daily_backup`, the ``daily`` label: the MCP server, or
a process the SessionStart hook starts detached when a session is too short for the server's
turn; never on a hook's path) and keeps the newest :data:`KEEP` of those; ``mama import`` takes
one before each import (kept: ``mama import --rollback`` restores it). ``mama doctor --restore``
puts one back (:func:`restore_file`), after setting the damaged file aside (:func:`set_aside`).
"""

from __future__ import annotations

import calendar
import contextlib
import fcntl
import os
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import apsw

from ..errors import MamaError
from ..home import FILE_MODE, create_private, private_folder
from .peek import BACKUP_DUE_STAMP

if TYPE_CHECKING:
    from .store import Store


# The checks are imported when a backup is checked, not with this module: the SessionStart
# hook reads only whether the day's backup is due (:func:`due`, a listing of the folder).
def check_file(path: Path, *, limit: int = 20) -> list[str]:
    """The problems :func:`~.diagnosis.check_file` finds in the file at ``path``."""
    from .diagnosis import check_file as check

    return check(path, limit=limit)


def backup_to(conn: apsw.Connection, dest: Path) -> Path:
    """Copy the live database behind ``conn`` into a new file ``dest`` (0600, its folder 0700).

    The copy is a file of its own, in rollback-journal mode: the live store's WAL mode, copied
    with its first page, made every later reading of the copy (its check, ``mama doctor``'s
    listing) leave a ``-wal`` and a ``-shm`` file beside it.
    """
    private_folder(dest.parent)
    create_private(dest)  # SQLite would create it with the umask's mode
    target = apsw.Connection(str(dest))
    try:
        _copy(conn, into=target)
        target.execute("PRAGMA journal_mode = DELETE")
    finally:
        target.close()
    for leftover in (Path(f"{dest}-wal"), Path(f"{dest}-shm")):
        leftover.unlink(missing_ok=True)
    return dest


def backup_complete(conn: apsw.Connection, dest: Path) -> Path:
    """Copy the live database behind ``conn`` to ``dest`` whole or not at all: written under a
    hidden name beside it and renamed once complete, so a process killed halfway leaves no
    file under a backup's name (:func:`clear_partials` removes what it left)."""
    partial = partial_of(dest)
    try:
        backup_to(conn, partial)
        os.replace(partial, dest)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return dest


def partial_of(dest: Path) -> Path:
    """The hidden name a backup is written under until it is complete."""
    return dest.with_name(f".{dest.name}.partial")


def clear_partials(folder: Path) -> None:
    """Remove the copies a process killed halfway left in ``folder`` (and their logs)."""
    for partial in folder.glob(".*.partial*"):
        partial.unlink(missing_ok=True)


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


def backup_path(db: Path, label: str, *, now: float | None = None) -> Path:
    """Where a backup of ``db`` taken now (or at ``now``) goes:
    ``<db dir>/backups/<stem>-<time>-<label>.db``."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now))
    folder = db.parent / "backups"
    candidate = folder / f"{db.stem}-{stamp}-{label}.db"
    n = 1
    while candidate.exists():
        n += 1
        candidate = folder / f"{db.stem}-{stamp}-{label}-{n}.db"
    return candidate


@dataclass(frozen=True)
class Backup:
    """One backup file and when it was taken (UTC, from its name; else its modification time)."""

    path: Path
    taken: float  # seconds since the epoch

    @property
    def when(self) -> str:
        """When it was taken, as a person reads it: ``2026-11-23 15:04 UTC``."""
        return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(self.taken))

    @property
    def automatic(self) -> bool:
        """Whether MAMA took it by itself (:func:`daily_backup`), so rotates it out."""
        return bool(_AUTOMATIC_NAME.search(self.path.name))


_STAMP = re.compile(r"-(\d{8}T\d{6})-")
AUTOMATIC = "daily"  # the label of the backups MAMA takes by itself
_AUTOMATIC_NAME = re.compile(rf"-\d{{8}}T\d{{6}}-{AUTOMATIC}(?:-\d+)?\.db$")
# Automatic backups kept: the newest three days a session ran on. A backup is a whole copy
# (16 MB at 2,000 memories), and damage is found when the store is opened: the newest sound
# copy is the one a restore wants.
KEEP = 3
LOCK = ".daily.lock"  # held while a backup is taken, or backups are rewritten (backup_erasure)
EVERY_S = 24 * 3600  # an automatic backup is taken when the newest is this old
RETRY_S = 3600  # after a try that took none (read-only, damaged, failed), the next is this late


def backups(db: Path) -> list[Backup]:
    """The backups of ``db`` in ``<db dir>/backups`` (see :func:`backup_path`), newest first."""
    folder = db.parent / "backups"
    found = []
    for path in folder.glob(f"{db.stem}-*.db") if folder.is_dir() else ():
        match = _STAMP.search(path.name[len(db.stem) :])
        try:
            taken = (
                calendar.timegm(time.strptime(match.group(1), "%Y%m%dT%H%M%S"))
                if match
                else path.stat().st_mtime
            )
        except (OSError, ValueError):
            continue
        found.append(Backup(path, taken))
    return sorted(found, key=lambda b: (b.taken, b.path.name), reverse=True)


def back_up(store: Store, label: str) -> Path:
    """Back the store up into a new file beside it (see :func:`backup_path`), whole or not at
    all (:func:`backup_complete`); its path."""
    return backup_complete(store.conn, backup_path(store.path, label))


def problem_of(b: Backup) -> str:
    """What is wrong with the backup ``b`` ("" when it reads and checks sound): a copy torn
    by a kill of an older MAMA, or damaged since. Read-only; reads every page."""
    if not os.access(b.path, os.R_OK):
        return "cannot be read (permission denied)"
    problems = check_file(b.path, limit=1)
    return problems[0] if problems else ""


def daily_backup(store: Store, *, now: float | None = None, keep: int = KEEP) -> Path | None:
    """The day's automatic backup: taken when the newest automatic one is :data:`EVERY_S`
    old (or there is none), checked, and the automatic ones beyond the newest ``keep``
    (``backups_max_count``) deleted. The path of the new backup; None when none was due, the
    store cannot take one (read-only, damaged) or another process is taking it.

    It reads every page and checks the copy (tens of ms at 2,000 memories, seconds at
    100,000): the MCP server calls it from a worker thread after its start, never a hook.
    The copy is written under a hidden name and renamed once it checks sound, so a process
    killed halfway leaves no backup that is not one. Raises MamaError when the copy does not
    check sound: it is deleted, the older backups are kept (a damaged copy never pushes out a
    sound one) and the store is checked (:meth:`~.store.Store.verify`).
    """
    now = time.time() if now is None else now
    if store.read_only is not None or store.damage is not None:
        _stamp_due(store.path, now + RETRY_S)
        return None
    if not due(store.path, now):
        _stamp_due(store.path, _next_due(store.path))
        return None
    folder = private_folder(store.path.parent / "backups")
    _stamp_due(store.path, now + RETRY_S)  # a failure below is tried again in an hour
    with _held(folder / LOCK) as held:
        if not held or not due(store.path, now):  # another process took it meanwhile
            return None
        clear_partials(folder)  # left by a process killed halfway
        final = backup_path(store.path, AUTOMATIC, now=now)
        partial = partial_of(final)
        backup_to(store.conn, partial)
        if problems := check_file(partial, limit=1):
            partial.unlink(missing_ok=True)
            store.verify()
            raise MamaError(
                f"the day's backup of {store.path} does not check sound ({problems[0]}): it was "
                "deleted and the older backups kept; `mama doctor` checks the store"
            )
        os.replace(partial, final)
        for old in [b for b in backups(store.path) if b.automatic][max(keep, 1) :]:
            old.path.unlink(missing_ok=True)
        _stamp_due(store.path, _next_due(store.path))
    return final


def backups_bytes(db: Path) -> int:
    """How many bytes the backups of ``db`` take together (those that can be read)."""
    total = 0
    for b in backups(db):
        with contextlib.suppress(OSError):
            total += b.path.stat().st_size
    return total


def over_caps(
    db: Path, *, keep: int, max_bytes: int, protected: Path | None = None
) -> list[tuple[Backup, int]]:
    """The backups of ``db`` beyond its caps, oldest first, each with its size in bytes.

    Beyond the caps: the automatic ones older than the newest ``keep``, then the oldest of
    any kind while all of them together take more than ``max_bytes``. Never the newest
    backup, nor ``protected`` (the one ``mama import --rollback`` restores). Read-only.
    """
    found = []
    for b in backups(db):
        with contextlib.suppress(OSError):
            found.append((b, b.path.stat().st_size))
    automatic = [b for b, _ in found if b.automatic]
    doomed = {b.path for b in automatic[max(keep, 1) :]}
    spare = [(b, size) for b, size in found[1:] if protected is None or b.path != protected]
    total = sum(size for b, size in found if b.path not in doomed)
    for b, size in reversed(spare):  # oldest first
        if total <= max_bytes:
            break
        if b.path not in doomed:
            doomed.add(b.path)
            total -= size
    return [(b, size) for b, size in reversed(found) if b.path in doomed]


def _next_due(db: Path) -> float:
    newest = next((b for b in backups(db) if b.automatic), None)
    return 0.0 if newest is None else newest.taken + EVERY_S


def _stamp_due(db: Path, at: float) -> None:
    """Record when the day's backup is next due, for the SessionStart hook's one stat
    (:func:`~.peek.backup_may_be_due`); a stamp that cannot be written is no stamp (due)."""
    with contextlib.suppress(OSError):
        stamp = private_folder(db.parent / "backups") / BACKUP_DUE_STAMP
        create_private(stamp)
        os.utime(stamp, (at, at))


def due(db: Path, now: float) -> bool:
    """Whether the day's backup of ``db`` is due: the newest automatic one is
    :data:`EVERY_S` old, or there is none (a listing of the folder)."""
    newest = next((b for b in backups(db) if b.automatic), None)
    return newest is None or now - newest.taken >= EVERY_S


@contextlib.contextmanager
def _held(lock: Path) -> Iterator[bool]:
    """An exclusive lock on ``lock`` if no other process holds it: True, else False at once."""
    create_private(lock)
    with open(lock, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def restore(store: Store, source: Path) -> None:
    """Replace the store's database with the backup ``source``.

    In-memory vector indexes must not trust the restored (older) vector log: the log is
    emptied and ``vectors_epoch`` moves past the value it had before the restore. The copy of
    the ranking columns starts over too (:func:`_forget_ranks`).
    """
    epoch = int(store.meta("vectors_epoch") or 0)
    restore_from(store.conn, source)
    store.set_meta("vectors_epoch", str(epoch + 1))
    with store.transaction():
        store.conn.execute("DELETE FROM vector_log")
        _forget_ranks(store)


def set_aside(db: Path) -> Path:
    """Copy a damaged ``db`` (and its write-ahead log) into ``<db dir>/damaged/``; the copy.

    Nothing is deleted: the copy is what a later repair (or a person) can still read from.
    """
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    folder = private_folder(db.parent / "damaged")
    dest = folder / f"{db.stem}-{stamp}.db"
    n = 1
    while dest.exists():
        n += 1
        dest = folder / f"{db.stem}-{stamp}-{n}.db"
    _private_copy(db, dest)
    wal = Path(f"{db}-wal")
    if wal.is_file() and wal.stat().st_size:
        _private_copy(wal, Path(f"{dest}-wal"))
    return dest


def _private_copy(source: Path, dest: Path) -> None:
    """Copy ``source`` into a new 0600 file ``dest`` (``shutil.copy2`` would copy its mode)."""
    create_private(dest)
    shutil.copyfile(source, dest)
    shutil.copystat(source, dest)
    os.chmod(dest, FILE_MODE)


def restore_file(db: Path, source: Path) -> bool:
    """Put the backup ``source`` in place of the (damaged) ``db``; True when done in place.

    In place means through SQLite's backup API, under its locks, so processes that have the
    database open see the restored content. When the damaged file cannot take that (its header
    is gone, it is cut short) it is replaced instead: a new file, its log and shared memory
    removed — processes holding the old one must reopen it. Set the damaged file aside first
    (:func:`set_aside`).
    """
    try:
        target = apsw.Connection(str(db))
        try:
            target.set_busy_timeout(5000)
            restore_from(target, source)
            from .integrity import quick_check

            if not quick_check(target, limit=1):
                return True
        finally:
            target.close()
    except apsw.Error:
        pass
    fresh = db.with_name(f".{db.name}.restoring")
    _private_copy(source, fresh)
    for leftover in (Path(f"{db}-wal"), Path(f"{db}-shm")):
        leftover.unlink(missing_ok=True)
    os.replace(fresh, db)
    return False


def forget_vectors(store: Store) -> None:
    """After a restore: in-memory vector indexes must reload (they may hold newer vectors),
    and copies of the ranking columns start over.

    ``vectors_epoch`` takes the time in ms, unlike any value a counter reached before, and
    the restored vector log is emptied.
    """
    store.set_meta(
        "vectors_epoch",
        str(max(int(store.meta("vectors_epoch") or 0) + 1, int(time.time() * 1000))),
    )
    with store.transaction():
        store.conn.execute("DELETE FROM vector_log")
        _forget_ranks(store)


def _forget_ranks(store: Store) -> None:
    """In-memory copies of the ranking columns start over (``storage/rank_cache.py``): the
    restored rank log's ids name other changes than the ones they saw. (A backup of a schema
    before the log has none: it gets one when the store is next opened.)"""
    if not store.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'rank_log'").fetchall():
        return
    store.conn.execute("DELETE FROM rank_log")
    store.conn.execute("UPDATE meta SET value = lower(hex(randomblob(8))) WHERE key = 'rank_epoch'")
