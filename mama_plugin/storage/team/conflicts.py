"""Conflicts a sync raised: a memory changed here and by a teammate since the version both
started from. The local version stays; the teammate's waits beside it until a person settles
it (``mama team resolve``), never silently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..sql import now_ms

if TYPE_CHECKING:
    from ..store import Store


@dataclass(frozen=True)
class Conflict:
    """A memory changed here and by a teammate since the version both started from."""

    id: int
    project: str
    memory_id: str
    base_version: int
    server_version: int
    theirs: dict[str, Any] | None  # None: the teammate deleted it
    theirs_by: str
    raised_at: int


def raise_conflict(store: Store, c: Conflict) -> None:
    """Keep a teammate's version beside ours; an open conflict of the memory is renewed."""
    theirs = None if c.theirs is None else json.dumps(c.theirs, ensure_ascii=False)
    with store.transaction():
        store.conn.execute(
            "UPDATE team_conflicts SET server_version = ?, theirs = ?, theirs_by = ? "
            "WHERE memory_id = ? AND resolved_at IS NULL",
            (c.server_version, theirs, c.theirs_by, c.memory_id),
        )
        if not store.conn.changes():
            store.conn.execute(
                "INSERT INTO team_conflicts(project, memory_id, base_version, server_version, "
                "theirs, theirs_by, raised_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    c.project,
                    c.memory_id,
                    c.base_version,
                    c.server_version,
                    theirs,
                    c.theirs_by,
                    now_ms(),
                ),
            )


def open_conflicts(store: Store, project: str | None = None) -> list[Conflict]:
    """The conflicts waiting for a person (of ``project`` when given), oldest first."""
    sql = (
        "SELECT id, project, memory_id, base_version, server_version, theirs, theirs_by, "
        "raised_at FROM team_conflicts WHERE resolved_at IS NULL"
    )
    rows = (
        store.conn.execute(sql + " AND project = ? ORDER BY id", (project,))
        if project
        else store.conn.execute(sql + " ORDER BY id")
    )
    return [
        Conflict(i, p, m, b, s, None if t is None else json.loads(t), by, at)
        for i, p, m, b, s, t, by, at in rows
    ]


def settled(store: Store, conflict_id: int, keep: str) -> None:
    """Mark a conflict settled with the side kept (``mine`` or ``theirs``)."""
    store.conn.execute(
        "UPDATE team_conflicts SET resolved_at = ?, resolution = ? WHERE id = ?",
        (now_ms(), keep, conflict_id),
    )
