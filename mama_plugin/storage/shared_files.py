"""What was last shared through a repository's ``.mama/`` folder: the ladder's step and its rows.

``shared_files`` keeps, per (project, memory), the hash of the file text as it was last
written or imported — the common ancestor that tells *who* changed a memory since (this
clone, a teammate, or both). ``share_conflicts`` keeps both versions of a memory changed on
both sides until someone chooses; a memory forgotten here takes its conflict with it (a
trigger), and ``mama redact`` masks both texts (``erasure``), so nothing of a removed text
stays behind.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import apsw

from ..plain import picked
from .repository import Repository
from .sql import now_ms


def shared_files(conn: apsw.Connection, _dim: int) -> None:
    """The ladder's step: ``shared_files`` and ``share_conflicts``."""
    conn.execute(
        """
        CREATE TABLE shared_files (
            project TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            path TEXT NOT NULL,
            hash TEXT NOT NULL,
            deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
            shared_at INTEGER NOT NULL,
            PRIMARY KEY (project, memory_id)
        ) WITHOUT ROWID;
        CREATE TABLE share_conflicts (
            id INTEGER PRIMARY KEY,
            project TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            path TEXT NOT NULL,
            theirs TEXT NOT NULL,
            theirs_hash TEXT NOT NULL,
            mine TEXT NOT NULL,
            found_at INTEGER NOT NULL,
            UNIQUE (project, memory_id)
        );
        CREATE TRIGGER share_conflicts_forgotten AFTER DELETE ON memories BEGIN
            DELETE FROM share_conflicts WHERE memory_id = old.id AND mine <> '';
        END;
        """
    )


@dataclass(frozen=True)
class SharedBase:
    """A memory's file as last shared: its hash, and whether it was a tombstone."""

    memory_id: str
    path: str
    hash: str
    deleted: bool


@dataclass(frozen=True)
class ShareConflict:
    """A memory changed here and in ``.mama/`` since the last share: both versions."""

    memory_id: str
    path: str
    theirs: str  # the file's text (a teammate's version)
    theirs_hash: str
    mine: str  # this clone's memory rendered as a file ("" once forgotten here)
    found_at: int

    def as_dict(self) -> dict[str, Any]:
        return picked(self, "id=memory_id", "path", "theirs", "mine", "found_at")


class SharedFiles(Repository):
    """A project's shared state: ``SharedFiles(store)`` (rows of this step's two tables)."""

    def bases(self, project: str) -> dict[str, SharedBase]:
        """Every memory of ``project`` shared so far, by id."""
        rows = self.conn.execute(
            "SELECT memory_id, path, hash, deleted FROM shared_files WHERE project = ?", (project,)
        ).fetchall()
        return {str(r[0]): SharedBase(str(r[0]), str(r[1]), str(r[2]), bool(r[3])) for r in rows}

    def record(
        self, project: str, memory_id: str, path: str, hash_: str, *, deleted: bool = False
    ) -> None:
        """Record ``hash_`` as the memory's last shared file, at ``path``."""
        with self.transaction():
            self.conn.execute(
                "INSERT INTO shared_files(project, memory_id, path, hash, deleted, shared_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(project, memory_id) DO UPDATE SET "
                "path = excluded.path, hash = excluded.hash, deleted = excluded.deleted, "
                "shared_at = excluded.shared_at",
                (project, memory_id, path, hash_, int(deleted), now_ms()),
            )

    def conflicts(self, project: str) -> list[ShareConflict]:
        """The project's open conflicts, by id."""
        rows = self.conn.execute(
            "SELECT memory_id, path, theirs, theirs_hash, mine, found_at FROM share_conflicts "
            "WHERE project = ? ORDER BY memory_id",
            (project,),
        ).fetchall()
        return [
            ShareConflict(str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), int(r[5] or 0))
            for r in rows
        ]

    def conflicted(self, project: str) -> set[str]:
        """The ids of the project's open conflicts."""
        return {c.memory_id for c in self.conflicts(project)}

    def add_conflict(
        self, project: str, memory_id: str, path: str, theirs: str, theirs_hash: str, mine: str
    ) -> None:
        """Keep both versions (a newer file replaces the older one of the same memory)."""
        with self.transaction():
            self.conn.execute(
                "INSERT INTO share_conflicts(project, memory_id, path, theirs, theirs_hash, mine, "
                "found_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(project, memory_id) DO UPDATE "
                "SET path = excluded.path, theirs = excluded.theirs, "
                "theirs_hash = excluded.theirs_hash, mine = excluded.mine",
                (project, memory_id, path, theirs, theirs_hash, mine, now_ms()),
            )

    def settle(self, project: str, memory_ids: Iterable[str]) -> None:
        """Drop the conflicts of ``memory_ids`` (chosen, or converged)."""
        with self.transaction():
            self.conn.executemany(
                "DELETE FROM share_conflicts WHERE project = ? AND memory_id = ?",
                [(project, i) for i in memory_ids],
            )

    def set_standing(
        self, memory_id: str, *, status: str, outcome_status: str, outcome: str
    ) -> None:
        """Set a memory's status and outcome as a shared file states them (no version bump:
        the caller's update of the same memory, in the same transaction, made one)."""
        with self.transaction():
            self.conn.execute(
                "UPDATE memories SET status = ?, outcome_status = ?, outcome = ? WHERE id = ?",
                (status, outcome_status, outcome, memory_id),
            )
