"""The backups, with what a forget, an edit or a redaction removed from the store removed too.

A backup is a whole copy of the store, so it keeps every text the store no longer holds.
Each backup in ``backups/`` is opened as a store of its own (migrated like any old file), the
same change is applied to it and it is compacted as the live file is
(:meth:`~.erasure.Erasure.compact`): it stays a backup to restore, without the text. One
that cannot be opened or changed (damaged, from a newer MAMA) is deleted instead — it would
keep the text — and named. Copies of a damaged store set aside in ``damaged/`` are not
backups MAMA restores: they are left alone (a person repairs by hand from them).

All of it runs under the lock the daily backup is taken under (:data:`~.backup.LOCK`): a
backup copied while a change is applied would otherwise carry the old text past it.
Imports: standard library, apsw, leaves.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import apsw

from ..config import Config
from ..errors import MamaError
from ..home import create_private, private_folder
from .backup import LOCK, backups
from .store import Store


@dataclass
class BackupsChanged:
    """What became of each backup: rewritten (it held the text), untouched, or deleted."""

    rewritten: list[Path] = field(default_factory=list)
    untouched: list[Path] = field(default_factory=list)
    deleted: list[tuple[Path, str]] = field(default_factory=list)  # with why

    def summary(self) -> str:
        """One sentence a person reads: how many backups were rewritten or deleted."""
        parts = [f"{len(self.rewritten)} backup(s) rewritten"]
        if self.deleted:
            parts.append(
                f"{len(self.deleted)} deleted ("
                + "; ".join(f"{p.name}: {why}" for p, why in self.deleted)
                + ")"
            )
        return ", ".join(parts)


@contextlib.contextmanager
def backups_held(db: Path) -> Iterator[None]:
    """Hold the backups' lock of ``db`` (waiting for a daily backup being taken to finish)."""
    lock = private_folder(db.parent / "backups") / LOCK
    create_private(lock)
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # a daily backup holds it for seconds at most
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def change_backups(db: Path, config: Config, change: Callable[[Store], bool]) -> BackupsChanged:
    """Apply ``change`` to every backup of ``db``; it returns whether it changed anything.

    Call it holding :func:`backups_held`. A backup ``change`` changed is compacted; one that
    cannot be opened or changed is deleted (see the module's docstring). Leftovers of a daily
    backup killed halfway (``.*.partial`` and its log) are deleted.
    """
    done = BackupsChanged()
    folder = db.parent / "backups"
    for partial in folder.glob(".*.partial*") if folder.is_dir() else ():
        partial.unlink(missing_ok=True)
    for backup in backups(db):
        try:
            with Store.open(backup.path, config=config) as copy:
                if copy.read_only is not None:
                    raise copy.read_only
                if not change(copy):
                    done.untouched.append(backup.path)
                    continue
                if not copy.erasure.compact():
                    raise MamaError("its write-ahead log could not be emptied")
            done.rewritten.append(backup.path)
        except (MamaError, apsw.Error, OSError) as exc:
            for leftover in (backup.path, *_logs(backup.path)):
                leftover.unlink(missing_ok=True)
            done.deleted.append((backup.path, str(exc).split(";")[0][:160]))
    return done


def _logs(path: Path) -> tuple[Path, Path]:
    return Path(f"{path}-wal"), Path(f"{path}-shm")
