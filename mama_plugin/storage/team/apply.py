"""Applying a teammate's change to the local store, never over a local change not yet sent.

Runs inside :func:`.outbox.applying` (the triggers queue nothing back). A memory changed here
and not yet pushed keeps its local version: the next push meets the newer server version and
raises a conflict that shows both. A memory with an open conflict has the conflict renewed with
the newest server version instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import ValidationError
from ..memories import NARRATIVE_FIELDS
from ..records import NewMemory
from ..sql import now_ms
from . import conflicts, outbox
from .rows import link_body, memory_body

if TYPE_CHECKING:
    from ..store import Store


@dataclass(frozen=True)
class Pulled:
    """One row of the team database's change feed (a memory or a link) past our cursor."""

    seq: int
    kind: str
    key: str
    version: int
    deleted: bool
    digest: str
    body: Any  # a JSON object for a well-formed row (checked by .rows before it is stored)
    changed_by: str
    updated_at: int


def apply_memory(store: Store, project: str, row: Pulled) -> str:
    """Bring one memory up to ``row``; what happened: inserted, updated, deleted, seen, held
    (a local change waits to be pushed), conflict (an open conflict got the newer version) or
    refused (a row this store's rules reject, e.g. written by another MAMA version, or one
    :func:`.rows.memory_body` refuses)."""
    memory_id = row.key
    known = outbox.known_versions(store, [memory_id]).get(memory_id)
    if known is not None and known[0] >= row.version:
        return "seen"
    if outbox.has_pending(store, memory_id):
        opened = conflicts.open_conflicts(store)
        mine = next((c for c in opened if c.memory_id == memory_id), None)
        if mine is None:
            return "held"
        conflicts.raise_conflict(
            store,
            conflicts.Conflict(
                mine.id,
                mine.project,
                memory_id,
                mine.base_version,
                row.version,
                None if row.deleted else row.body,
                row.changed_by,
                mine.raised_at,
            ),
        )
        return "conflict"
    try:
        body = None if row.deleted else memory_body(row.body, now_ms())
        done = write_memory(store, project, memory_id, body, row)
    except ValidationError:  # not a memory this MAMA can hold: counted, the feed goes on
        return "refused"
    outbox.remember(store, {memory_id: (row.version, row.digest)})
    return done


def write_memory(
    store: Store, project: str, memory_id: str, body: dict[str, Any] | None, row: Pulled | None
) -> str:
    """Make the local memory ``memory_id`` hold ``body`` (None: delete it)."""
    current = store.memories.get(memory_id)
    if body is None:
        if current is None:
            return "seen"
        store.memories.delete(memory_id)
        return "deleted"
    updated_at = row.updated_at if row is not None and row.updated_at else None
    if updated_at is not None:
        updated_at = min(updated_at, now_ms())  # a date in the future is read as now
    if current is None:
        outcome = {"status": body.get("outcome_status", "PENDING"), **body.get("outcome", {})}
        store.memories.insert(
            NewMemory(
                type=body["type"],
                project=project,
                content=body["content"],
                topic=body.get("topic", ""),
                specifics=body.get("specifics", []),
                evidence=body.get("evidence", []),
                reasoning=body.get("reasoning"),
                tension=body.get("tension"),
                continuity=body.get("continuity"),
                outcome=outcome,
                confidence=body.get("confidence", 0.7),
                tags=body.get("tags", []),
                status=body.get("status", "current"),
                metadata=body.get("metadata"),
                id=memory_id,
                created_at=body.get("created_at"),
                updated_at=updated_at,
            )
        )
        return "inserted"
    if outbox.digest({k: getattr(current, k) for k in outbox.BODY_FIELDS}) == outbox.digest(body):
        return "seen"
    said = {k: body[k] for k in sorted(NARRATIVE_FIELDS) if k in body}
    store.memories.update(memory_id, updated_at=updated_at, **said)
    store.conn.execute(
        "UPDATE memories SET outcome_status = ?, outcome = ?, status = ? WHERE id = ?",
        (
            body.get("outcome_status", "PENDING"),
            json.dumps(body.get("outcome", {}), ensure_ascii=False),
            body.get("status", "current"),
            memory_id,
        ),
    )
    return "updated"


def apply_link(store: Store, row: Pulled) -> str:
    """Bring one link up to ``row``: inserted, deleted, seen, waiting (an end is missing here,
    e.g. a checkpoint's or another project's memory) or refused (:func:`.rows.link_body`)."""
    from_id, to_id, relationship = outbox.split_link_key(row.key)
    if row.deleted:
        store.conn.execute(
            "DELETE FROM memory_links WHERE from_id = ? AND to_id = ? AND relationship = ?",
            (from_id, to_id, relationship),
        )
        return "deleted" if store.conn.changes() else "seen"
    if store.links.exists(from_id, to_id, relationship):
        return "seen"
    try:
        body = link_body(row.body, now_ms())
    except ValidationError:
        return "refused"
    try:
        store.links.add(
            from_id,
            to_id,
            relationship,
            body.get("reason", ""),
            evidence=body.get("evidence", ""),
            context=body.get("context", ""),
            confidence=body.get("confidence", 1.0),
            created_by=body.get("created_by", "user"),
            created_at=body.get("created_at"),
            mark_target=False,
        )
    except ValidationError:
        return "waiting"
    return "inserted"
