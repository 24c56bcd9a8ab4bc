"""Sessions whose rolling checkpoint's lines wait for the model: the ladder's step and its rows.

The Stop hook queues a session for the model's checkpoint lines (:mod:`mama_plugin.assist.
stopped`) in the running server's memory, and here, so that the wait outlives the server: a
session that closes within the job's delay leaves its row, and the next server started on the
project finds it and runs the job. A row is one session (its key: queuing it again replaces
its row, so a row is written once however often it is queued), with its project, the rolling
checkpoint it was queued for and that checkpoint's version then; it goes with its checkpoint
(``ON DELETE CASCADE``). It holds ids, a version and a time, never memory text. A job clears
the row it ran for only while the row is still the one it read (:meth:`PendingLines.clear`):
a turn that queued the session again meanwhile keeps it waiting. Imports: standard library,
apsw, leaves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import apsw

from .repository import Repository
from .sql import now_ms


def pending_lines(conn: apsw.Connection, _dim: int) -> None:
    """The ladder's step: ``pending_lines``, one row a session, by project."""
    conn.execute(
        """
        CREATE TABLE pending_lines (
            session_id TEXT PRIMARY KEY CHECK (session_id <> ''),
            project TEXT NOT NULL,
            memory_id TEXT NOT NULL
                REFERENCES memories(id) ON DELETE CASCADE ON UPDATE CASCADE,
            version INTEGER NOT NULL,
            queued_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX pending_lines_by_project ON pending_lines(project, queued_at);
        CREATE INDEX pending_lines_by_memory ON pending_lines(memory_id);
        """
    )


@dataclass(frozen=True)
class Pending:
    """A session waiting for its checkpoint lines: the checkpoint and its version when queued,
    and when (ms)."""

    session_id: str
    project: str
    memory_id: str
    version: int
    queued_at: int


# What a waiting session's row is read with (:func:`_pending` reads it back).
_SELECT = "SELECT session_id, project, memory_id, version, queued_at FROM pending_lines"


class PendingLines(Repository):
    """The store's sessions waiting for their checkpoint lines."""

    def add(self, session_id: str, project: str, memory_id: str, version: int) -> None:
        """Queue ``session_id`` for its checkpoint ``memory_id`` at ``version`` (replacing
        what it waited for before)."""
        self.conn.execute(
            """
            INSERT INTO pending_lines(session_id, project, memory_id, version, queued_at)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(session_id) DO UPDATE SET
                project = excluded.project, memory_id = excluded.memory_id,
                version = excluded.version, queued_at = excluded.queued_at
            """,
            (session_id, project, memory_id, version, now_ms()),
        )

    def of_project(self, project: str) -> list[Pending]:
        """The sessions of ``project`` waiting, oldest queued first."""
        rows = self.conn.execute(
            f"{_SELECT} WHERE project = ? ORDER BY queued_at, session_id",
            (project,),
        ).fetchall()
        return [_pending(row) for row in rows]

    def get(self, session_id: str) -> Pending | None:
        """What ``session_id`` waits for, or None."""
        rows = self.conn.execute(f"{_SELECT} WHERE session_id = ?", (session_id,)).fetchall()
        return _pending(rows[0]) if rows else None

    def clear(self, pending: Pending) -> bool:
        """Drop ``pending``'s row if it is still the one read (same checkpoint and version): a
        session queued again since keeps waiting. Returns whether a row went."""
        self.conn.execute(
            "DELETE FROM pending_lines WHERE session_id = ? AND memory_id = ? AND version = ?",
            (pending.session_id, pending.memory_id, pending.version),
        )
        return self.conn.changes() > 0


def _pending(row: Sequence[Any]) -> Pending:
    session_id, project, memory_id, version, queued_at = row
    return Pending(str(session_id), str(project), str(memory_id), int(version), int(queued_at))
