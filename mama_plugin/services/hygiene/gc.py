"""``mama gc``: what the store keeps that it no longer needs, and giving it back.

Three things, each bounded by a setting: a session's old rolling checkpoints folded into one
(:mod:`.compaction`, ``checkpoint_horizon_days``), the backups beyond their caps deleted
(``backups_max_count`` automatic ones, ``backups_max_mb`` for all), and the file rewritten
without its free pages when that pays (:func:`~mama_plugin.storage.space.vacuum_pays`).
:func:`plan` says what would go (read-only: ``mama gc --dry-run``, ``mama status``);
:func:`collect` does it, one session a transaction, calling ``pause`` between them so the
server's background run (:func:`due`, once a day) never holds the write lock for long.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...plain import picked
from ...settings import Settings
from ...storage import Store, now_ms
from ...storage.archive import last_import
from ...storage.backup import Backup, backups_bytes, over_caps
from ...storage.space import Space, space, vacuum, vacuum_pays
from ..story.compaction import Fold, drop_trivial, fold, planned, trivial_due

LAST_RUN = "gc_at"  # meta key: when gc last ran to its end (ms)
EVERY_MS = 24 * 3600 * 1000  # the background run's pace: at most once a day
FOLDS_PER_RUN = 500  # sessions folded by one run at most; the next run takes the rest
MB = 1_000_000


@dataclass(frozen=True)
class Plan:
    """What ``gc`` would do now: the folds, the backups it would delete, whether it would
    rewrite the file, and the store's size as it is."""

    space: Space
    folds: list[Fold]
    trivial: list[str]  # checkpoints of sessions that did nothing ("hello"), to drop
    backups: list[tuple[Backup, int]]  # (backup, bytes)
    backups_bytes: int  # every backup, kept or not
    vacuum: bool

    @property
    def folded(self) -> int:
        """How many rolling checkpoints would be folded away."""
        return sum(len(f.folded) for f in self.folds)

    @property
    def frees(self) -> int:
        """Bytes it would give back, about: the backups deleted, and when the file is
        rewritten its free pages and the rows folded away (without the rewrite SQLite keeps
        them for its next rows)."""
        rows = sum(f.bytes for f in self.folds)
        rewritten = rows + self.space.free_bytes if self.vacuum else 0
        return sum(size for _, size in self.backups) + rewritten

    def as_dict(self) -> dict[str, Any]:
        """The plan as ``--json`` output reports it."""
        return {
            "database": self.space.as_dict(),
            "backups_bytes": self.backups_bytes,
            "frees_bytes": self.frees,
            "folds": [f.as_dict() for f in self.folds],
            "trivial": list(self.trivial),
            "backups": [
                {"path": str(b.path), "taken": b.when, "bytes": size} for b, size in self.backups
            ],
            "vacuum": self.vacuum,
        }


@dataclass
class Collected:
    """What a ``gc`` run did."""

    bytes_before: int
    bytes_after: int = 0
    sessions: int = 0  # sessions whose checkpoints were folded
    folded: int = 0  # checkpoints folded away
    trivial: int = 0  # trivial sessions' checkpoints dropped
    backups: list[str] = field(default_factory=list)  # the backups deleted
    backup_bytes: int = 0
    vacuum_s: float | None = None  # how long the rewrite took; None when it did not pay

    def as_dict(self) -> dict[str, Any]:
        """The run as ``--json`` output reports it."""
        return picked(
            self,
            *("bytes_before", "bytes_after", "sessions", "folded", "trivial"),
            "backups_deleted=backups",
            *("backup_bytes", "vacuum_s"),
        )


def plan(store: Store, settings: Settings, *, now: int | None = None) -> Plan:
    """What :func:`collect` would do now (read-only)."""
    now = now_ms() if now is None else now
    folds = planned(
        store, horizon_days=settings.checkpoint_horizon_days, now=now, limit=FOLDS_PER_RUN
    )
    held = space(store)
    doomed, total = _backups(store, settings)
    rows = sum(f.bytes for f in folds)
    # Folded rows become free pages: the rewrite is judged on what it would find after them.
    after = Space(
        held.file_bytes,
        held.wal_bytes,
        held.page_size,
        held.pages,
        min(held.pages, held.free_pages + rows // max(held.page_size, 1)),
    )
    trivial = trivial_due(
        store, horizon_days=settings.checkpoint_horizon_days, now=now, limit=FOLDS_PER_RUN
    )
    return Plan(held, folds, trivial, doomed, total, vacuum_pays(after))


def collect(
    store: Store,
    settings: Settings,
    *,
    now: int | None = None,
    pause: Callable[[], None] = lambda: None,
    rewrite: Callable[[Space], bool] = vacuum_pays,
) -> Collected:
    """Fold the sessions due, delete the backups beyond their caps, rewrite the file when
    ``rewrite`` says it pays; what it did. Records the run (:data:`LAST_RUN`).

    Each session is folded in a transaction of its own, ``pause`` called after each. A
    session changed since it was planned is left for the next run. Raises the store's errors
    (a read-only store: StoreReadOnly) with what was done so far committed.
    """
    now = now_ms() if now is None else now
    done = Collected(bytes_before=space(store).file_bytes)
    planned = plan(store, settings, now=now)
    for due_fold in planned.folds:
        if fold(store, due_fold) is not None:
            done.sessions += 1
            done.folded += len(due_fold.folded)
        pause()
    if planned.trivial:
        done.trivial = drop_trivial(store, planned.trivial)
    doomed, _ = _backups(store, settings)
    for backup, size in doomed:
        backup.path.unlink(missing_ok=True)
        done.backups.append(backup.path.name)
        done.backup_bytes += size
    if rewrite(space(store)):
        done.vacuum_s = vacuum(store)
    store.set_meta(LAST_RUN, str(now))
    done.bytes_after = space(store).file_bytes
    return done


def due(store: Store, *, now: int | None = None) -> bool:
    """Whether the background run is due: the last one ended :data:`EVERY_MS` ago, or never."""
    now = now_ms() if now is None else now
    last = store.meta(LAST_RUN)
    return last is None or not last.isdigit() or now - int(last) >= EVERY_MS


def _backups(store: Store, settings: Settings) -> tuple[list[tuple[Backup, int]], int]:
    """The backups beyond the caps and the bytes all backups take now."""
    imported = last_import(store)
    doomed = over_caps(
        store.path,
        keep=settings.backups_max_count,
        max_bytes=settings.backups_max_mb * MB,
        protected=imported[0] if imported else None,
    )
    return doomed, backups_bytes(store.path)
