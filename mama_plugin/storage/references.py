"""How many memories reference each memory: what makes a hub. Read-only.

A reference is a link into a memory from another one, whatever its relationship, except an
outcome's own event (``outcome_of``: the verdict told again, not a memory resting on it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .repository import Repository
from .sql import select_in

_COUNTED = "relationship <> 'outcome_of'"


class References(Repository):
    """Counts of the links into memories: ``store.references``."""

    def counts(self, memory_ids: Iterable[str]) -> dict[str, int]:
        """How many distinct memories reference each of ``memory_ids`` (absent: none)."""
        sql = (
            "SELECT to_id, count(DISTINCT from_id) FROM memory_links "
            f"WHERE {_COUNTED} AND to_id IN ({{}}) GROUP BY to_id"
        )
        return {str(i): int(n) for i, n in select_in(self.conn, sql, memory_ids)}

    def at_least(self, project: str, minimum: int) -> list[tuple[str, int]]:
        """The memories of ``project`` referenced by ``minimum`` or more others, the most
        referenced first."""
        rows: list[Any] = self.conn.execute(
            "SELECT l.to_id, count(DISTINCT l.from_id) AS n FROM memory_links l "
            f"JOIN memories m ON m.id = l.to_id WHERE m.project = ? AND l.{_COUNTED} "
            "GROUP BY l.to_id HAVING n >= ? ORDER BY n DESC, l.to_id",
            (project, minimum),
        ).fetchall()
        return [(str(i), int(n)) for i, n in rows]

    def hub_seqs(self, seqs: Iterable[int], minimum: int) -> set[int]:
        """The row numbers among ``seqs`` of the memories referenced by ``minimum`` or more
        others (one index look-up a memory: ranking asks about its candidates)."""
        sql = (
            "SELECT m.seq FROM memories m JOIN memory_links l ON l.to_id = m.id "
            f"WHERE m.seq IN ({{}}) AND l.{_COUNTED} GROUP BY m.seq "
            "HAVING count(DISTINCT l.from_id) >= ?"
        )
        return {int(r[0]) for r in select_in(self.conn, sql, seqs, minimum)}

    def referrers(self, memory_id: str) -> list[str]:
        """The memories that reference ``memory_id``, oldest link first."""
        rows = self.conn.execute(
            f"SELECT from_id FROM memory_links WHERE to_id = ? AND {_COUNTED} "
            "GROUP BY from_id ORDER BY min(created_at), min(id)",
            (memory_id,),
        ).fetchall()
        return [str(r[0]) for r in rows]
