"""The store's list reads: memories by recency, topic, session, and those awaiting an outcome."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import apsw

from .records import MemoryRecord
from .sql import SELECT_MEMORY, scope


class ListOps:
    """List methods of :class:`~mama_plugin.storage.store.Store`. Read-only."""

    conn: apsw.Connection

    if TYPE_CHECKING:

        def meta(self, key: str) -> str | None: ...

    def _records(self, sql: str, params: tuple[Any, ...]) -> list[MemoryRecord]:
        return [MemoryRecord.from_row(r) for r in self.conn.execute(sql, params).fetchall()]

    def recent(
        self, *, project: str | None = None, limit: int = 10, type: str | None = None
    ) -> list[MemoryRecord]:
        """The newest memories, optionally of one project and type."""
        where, params = scope(project, type)
        return self._records(
            f"{SELECT_MEMORY}{where} ORDER BY created_at DESC, seq DESC LIMIT ?", (*params, limit)
        )

    def latest(self, *, project: str, type: str, limit: int = 1) -> list[MemoryRecord]:
        """The memories of ``type`` in ``project`` changed most recently (rolling ones too)."""
        where, params = scope(project, type)
        return self._records(
            f"{SELECT_MEMORY}{where} ORDER BY updated_at DESC, seq DESC LIMIT ?", (*params, limit)
        )

    def of_session(self, session_id: str, *, type: str | None = None) -> list[MemoryRecord]:
        """The memories saved during one Claude Code session, oldest first."""
        if not session_id:
            return []
        clause, params = ("", ()) if type is None else (" AND type = ?", (type,))
        return self._records(
            f"{SELECT_MEMORY} WHERE session_id = ?{clause} ORDER BY created_at, seq",
            (session_id, *params),
        )

    def awaiting_outcome(
        self, project: str, *, before: int, limit: int = 3
    ) -> tuple[list[MemoryRecord], int]:
        """Current decisions of ``project`` made before ``before`` with no outcome yet.

        Returns the oldest ``limit`` of them and how many there are in all.
        """
        where = (
            " WHERE project = ? AND type = 'decision' AND status = 'current' "
            "AND outcome_status = 'PENDING' AND created_at < ?"
        )
        rows = self._records(
            f"{SELECT_MEMORY}{where} ORDER BY created_at, seq LIMIT ?", (project, before, limit)
        )
        total = self.conn.execute(
            f"SELECT count(*) FROM memories{where}", (project, before)
        ).fetchall()[0][0]
        return rows, int(total or 0)

    def fingerprint(self, project: str) -> str:
        """Changes whenever a memory of ``project``, any link or a link suggestion of
        ``project`` is written (not on usage)."""
        count, changed = self.conn.execute(
            "SELECT count(*), max(updated_at) FROM memories WHERE project = ?", (project,)
        ).fetchall()[0]
        judged, decided = self.conn.execute(
            "SELECT count(*), count(decided_at) FROM link_suggestions WHERE project = ?",
            (project,),
        ).fetchall()[0]
        return f"{count}:{changed}:{self.meta('links_version')}:{judged}:{decided}"

    def by_topic(self, topic: str, *, project: str | None = None) -> list[MemoryRecord]:
        """Every memory with exactly this topic, newest first."""
        where, params = scope(project, None)
        clause = (where + " AND" if where else " WHERE") + " topic = ?"
        return self._records(
            f"{SELECT_MEMORY}{clause} ORDER BY created_at DESC, seq DESC", (*params, topic)
        )

    def iter_memories(self, *, project: str | None = None) -> Iterator[MemoryRecord]:
        """Every memory, oldest first, optionally of one project."""
        where, params = scope(project, None)
        for row in self.conn.execute(f"{SELECT_MEMORY}{where} ORDER BY seq", params).fetchall():
            yield MemoryRecord.from_row(row)
