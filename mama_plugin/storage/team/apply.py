"""Applying a teammate's change to the local store, never over a local change not yet sent.

Runs inside :func:`.outbox.applying` (the triggers queue nothing back). A memory changed here
and not yet pushed keeps its local version: the next push meets the newer server version and
raises a conflict that shows both. A memory with an open conflict has the conflict renewed with
the newest server version instead.

Whether a memory stands (``current``) or was replaced (``superseded``) is never taken from a
teammate's memory row: it is the verdict of the replacing link, written as a local supersede
writes it (:meth:`~mama_plugin.storage.links.Links.add` marks the target in the link's
transaction; taking the link back makes it current again). A supersede that cannot be taken
so — its successor is not here, or the decision was replaced here by another — is kept as a
conflict on the replaced decision (``theirs["replaced_by"]``), settled by a person.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import ValidationError
from ...privacy import redact_tree
from ...relationships import REPLACING
from ..link_state import LinkState
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
        theirs = None if row.deleted else row.body
        if theirs is not None and mine.theirs and "replaced_by" in mine.theirs:
            theirs = {**theirs, "replaced_by": mine.theirs["replaced_by"]}  # still contested
        conflicts.raise_conflict(
            store,
            conflicts.Conflict(
                mine.id,
                mine.project,
                memory_id,
                mine.base_version,
                row.version,
                theirs,
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
    """Make the local memory ``memory_id`` hold ``body`` (None: delete it); its standing
    (current or superseded) stays the links' verdict here."""
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
        status, outcome_status, told = _standing(None, body)
        outcome = {"status": outcome_status, **told}
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
                status=status,
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
    status, outcome_status, told = _standing(current, body)
    store.conn.execute(
        "UPDATE memories SET outcome_status = ?, outcome = ?, status = ? WHERE id = ?",
        (outcome_status, json.dumps(told, ensure_ascii=False), status, memory_id),
    )
    return "updated"


def _standing(current: Any, body: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """The status, outcome status and outcome to keep of a teammate's ``body``: the status is
    this store's (a new memory stands until a replacing link arrives), and an outcome that only
    says "superseded" follows it."""
    status = "current" if current is None else current.status
    outcome_status = body.get("outcome_status", "PENDING")
    outcome = body.get("outcome", {})
    if outcome_status == "SUPERSEDED" and status == "current":
        if current is None:
            outcome_status, outcome = "PENDING", {}
        else:
            outcome_status, outcome = current.outcome_status, current.outcome
    return status, outcome_status, outcome


def apply_link(store: Store, project: str, row: Pulled) -> str:
    """Bring one link up to ``row``: inserted, deleted, seen, waiting (an end is missing here,
    e.g. a checkpoint's or another project's memory), refused (:func:`.rows.link_body`) or
    conflict (a supersede that cannot be taken here: :func:`supersede`)."""
    from_id, to_id, relationship = outbox.split_link_key(row.key)
    if row.deleted:
        found: list[Any] = store.conn.execute(
            "SELECT id FROM memory_links WHERE from_id = ? AND to_id = ? AND relationship = ?",
            (from_id, to_id, relationship),
        ).fetchall()
        if not found:
            return "seen"
        LinkState(store).delete(int(found[0][0]))  # a decision replaced by it alone stands again
        return "deleted"
    try:
        body = link_body(row.body, now_ms())
    except ValidationError:
        return "refused"
    if store.links.exists(from_id, to_id, relationship):
        return _retell(store, from_id, to_id, relationship, body)
    if relationship in REPLACING:
        return supersede(store, project, from_id, to_id, relationship, body, row.changed_by)
    try:
        _link(store, from_id, to_id, relationship, body, mark_target=False)
    except ValidationError:
        return "waiting"
    return "inserted"


def _retell(store: Store, from_id: str, to_id: str, relationship: str, body: dict[str, Any]) -> str:
    """A link here told again by a teammate (a redaction there): its text follows."""
    text, _ = redact_tree(
        {k: str(body.get(k) or "") for k in ("reason", "evidence", "context")},
        personal=store.masks_personal_data,
    )
    if not text["reason"].strip():
        return "seen"
    store.conn.execute(
        "UPDATE memory_links SET reason = ?, evidence = ?, context = ? WHERE from_id = ? "
        "AND to_id = ? AND relationship = ? AND (reason, evidence, context) IS NOT (?, ?, ?)",
        (*text.values(), from_id, to_id, relationship, *text.values()),
    )
    return "updated" if store.conn.changes() else "seen"


def supersede(
    store: Store,
    project: str,
    from_id: str,
    to_id: str,
    relationship: str,
    body: dict[str, Any],
    by: str,
) -> str:
    """Take a teammate's replacing link as a local supersede is taken (the link and the
    replaced memory's status in one transaction): ``inserted``; ``conflict`` when it cannot
    be (its successor is not here, the decision was replaced here by another, a cycle), kept
    on the replaced memory; ``waiting`` when the replaced memory is not here either."""
    target = store.memories.get(to_id)
    if target is None:
        return "waiting"  # nothing here to split
    why = refusal(store, from_id, to_id, relationship)
    if not why:
        try:
            _link(store, from_id, to_id, relationship, body, mark_target=True)
            return "inserted"
        except ValidationError as exc:
            why = str(exc)
    opened = next((c for c in conflicts.open_conflicts(store) if c.memory_id == to_id), None)
    if opened is not None and opened.theirs is not None:
        theirs: dict[str, Any] = dict(opened.theirs)
    elif opened is not None:  # the teammate deleted it: that conflict says more already
        return "conflict"
    else:
        theirs = {k: getattr(target, k) for k in outbox.BODY_FIELDS}
    theirs["replaced_by"] = {**body, "id": from_id, "relationship": relationship, "why_not": why}
    seen = outbox.known_versions(store, [to_id]).get(to_id, (0, ""))[0]
    conflicts.raise_conflict(
        store,
        conflicts.Conflict(
            0,
            opened.project if opened else project,
            to_id,
            opened.base_version if opened else seen,
            opened.server_version if opened else seen,
            theirs,
            by,
            0,
        ),
    )
    return "conflict"


def refusal(store: Store, from_id: str, to_id: str, relationship: str) -> str:
    """Why ``from_id`` cannot replace ``to_id`` here ("" when it can): its successor is
    missing, or another memory replaced it here already."""
    if store.memories.get(from_id) is None:
        return f"{to_id} replaced by {from_id}, which is not here"
    others = [
        ln.from_id
        for ln in store.links.of(to_id, direction="in")
        if ln.relationship in REPLACING and ln.from_id != from_id
    ]
    if others:
        return f"{to_id} was replaced here already by {', '.join(others)}"
    return ""


def _link(
    store: Store,
    from_id: str,
    to_id: str,
    relationship: str,
    body: dict[str, Any],
    *,
    mark_target: bool,
) -> None:
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
        mark_target=mark_target,
    )
