"""Reading the store's memories: by id or row, the newest, a session's, the awaiting, counts.

Read-only: SELECTs on the calling thread's connection, personal data masked as the store is
configured; none raises but ``require`` (NotFoundError). :class:`~.memories.Memories` adds the
write path on top. Imports: standard library, leaves.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import NotFoundError
from .records import MemoryRecord
from .repository import Repository
from .sql import SELECT_MEMORY, Scope, scope, select_in


class MemoryReads(Repository):
    """The read queries of ``store.memories`` (the base of :class:`~.memories.Memories`)."""

    def get(self, memory_id: str) -> MemoryRecord | None:
        """The memory with this id, or None."""
        rows = self.conn.execute(f"{SELECT_MEMORY} WHERE id = ?", (memory_id,)).fetchall()
        return MemoryRecord.from_row(rows[0], personal=self.masks_personal) if rows else None

    def require(self, memory_id: str) -> MemoryRecord:
        """The memory with this id; raises NotFoundError naming the id otherwise."""
        record = self.get(memory_id)
        if record is None:
            raise NotFoundError(f"no memory has id {memory_id!r} — check it with `mama search`")
        return record

    def existing_ids(self, memory_ids: Iterable[str]) -> set[str]:
        """The subset of ``memory_ids`` that name stored memories."""
        rows = select_in(self.conn, "SELECT id FROM memories WHERE id IN ({})", memory_ids)
        return {str(r[0]) for r in rows}

    def get_many(self, memory_ids: Iterable[str]) -> dict[str, MemoryRecord]:
        """The stored memories among ``memory_ids``, by id."""
        rows = select_in(self.conn, SELECT_MEMORY + " WHERE id IN ({})", memory_ids)
        return {str(r[1]): MemoryRecord.from_row(r, personal=self.masks_personal) for r in rows}

    def get_by_seq(self, seqs: Iterable[int]) -> dict[int, MemoryRecord]:
        """The stored memories among row numbers ``seqs``, by seq."""
        rows = select_in(self.conn, SELECT_MEMORY + " WHERE seq IN ({})", seqs)
        return {int(r[0]): MemoryRecord.from_row(r, personal=self.masks_personal) for r in rows}

    def counts(self) -> dict[str, Any]:
        """Totals: memories by type, by project and by status; links; relationship words."""

        def grouped(sql: str) -> dict[str, int]:
            return {str(k): int(n or 0) for k, n in self.conn.execute(sql).fetchall()}

        def total(table: str) -> int:
            value: Any = self.conn.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
            return int(value)

        return {
            "memories": total("memories"),
            "by_type": grouped("SELECT type, count(*) FROM memories GROUP BY type ORDER BY type"),
            "by_project": grouped(
                "SELECT project, count(*) FROM memories GROUP BY project ORDER BY project"
            ),
            "by_status": grouped("SELECT status, count(*) FROM memories GROUP BY status"),
            "links": total("memory_links"),
            "links_by_category": grouped(
                "SELECT link_category, count(*) FROM memory_links GROUP BY link_category"
            ),
        }

    # -- lists -----------------------------------------------------------------------------

    def _records(self, sql: str, params: tuple[Any, ...]) -> list[MemoryRecord]:
        return [
            MemoryRecord.from_row(r, personal=self.masks_personal)
            for r in self.conn.execute(sql, params).fetchall()
        ]

    def recent(
        self, *, project: Scope = None, limit: int = 10, type: str | None = None
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

    def imported(
        self, origin: str, *, project: Scope = None, type: str | None = None
    ) -> list[MemoryRecord]:
        """The memories an import from ``origin`` wrote (``metadata.imported_from``), oldest
        first, optionally of one project and type."""
        where, params = scope(project, type)
        clause = (where + " AND " if where else " WHERE ") + (
            "json_extract(metadata, '$.imported_from') = ?"
        )
        return self._records(f"{SELECT_MEMORY}{clause} ORDER BY created_at, seq", (*params, origin))

    def of_session(self, session_id: str, *, type: str | None = None) -> list[MemoryRecord]:
        """The memories saved during one Claude Code session, oldest first."""
        if not session_id:
            return []
        clause, params = ("", ()) if type is None else (" AND type = ?", (type,))
        return self._records(
            f"{SELECT_MEMORY} WHERE session_id = ?{clause} ORDER BY created_at, seq",
            (session_id, *params),
        )

    def split_sessions(self, *, before: int, limit: int) -> list[str]:
        """Sessions holding more than one rolling checkpoint (``metadata.auto``), every one
        of them last changed before ``before`` (ms): up to ``limit``, the oldest first."""
        rows = self.conn.execute(
            "SELECT session_id FROM memories WHERE type = 'checkpoint' AND session_id <> '' "
            "AND json_extract(metadata, '$.auto') GROUP BY session_id "
            "HAVING count(*) > 1 AND max(updated_at) < ? ORDER BY max(updated_at) LIMIT ?",
            (before, limit),
        ).fetchall()
        return [str(session) for (session,) in rows]

    def quiet_checkpoints(self, *, before: int, limit: int) -> list[MemoryRecord]:
        """Rolling checkpoints (``metadata.auto``) of sessions that did no work
        (``metadata.work`` false), last changed before ``before`` (ms): up to ``limit``, the
        oldest first. What else makes one trivial is ``services.story.worklog``'s to say."""
        return self._records(
            f"{SELECT_MEMORY} WHERE type = 'checkpoint' AND json_extract(metadata, '$.auto') "
            "AND json_extract(metadata, '$.work') = 0 AND updated_at < ? "
            "ORDER BY updated_at, seq LIMIT ?",
            (before, limit),
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

    def decision_topics(self, project: str) -> list[tuple[str, int]]:
        """The topics of ``project``'s current decisions with how many each has, the most
        decided first (then by name: the same store, the same order)."""
        rows = self.conn.execute(
            "SELECT topic, count(*) AS n FROM memories WHERE project = ? AND type = 'decision' "
            "AND status = 'current' GROUP BY topic ORDER BY n DESC, topic",
            (project,),
        ).fetchall()
        return [(str(topic), int(str(n))) for topic, n in rows]

    def held_by(self, project: str) -> bool:
        """Whether ``project`` (a project's key, or the global scope) holds any memory."""
        rows = self.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM memories WHERE project = ?)", (project,)
        ).fetchall()
        return bool(rows[0][0])

    def by_topic(self, topic: str, *, project: Scope = None) -> list[MemoryRecord]:
        """Every memory with exactly this topic, newest first."""
        where, params = scope(project, None)
        clause = (where + " AND" if where else " WHERE") + " topic = ?"
        return self._records(
            f"{SELECT_MEMORY}{clause} ORDER BY created_at DESC, seq DESC", (*params, topic)
        )

    def iter(self, *, project: str | None = None) -> Iterator[MemoryRecord]:
        """Every memory, oldest first, optionally of one project."""
        where, params = scope(project, None)
        for row in self.conn.execute(f"{SELECT_MEMORY}{where} ORDER BY seq", params).fetchall():
            yield MemoryRecord.from_row(row, personal=self.masks_personal)
