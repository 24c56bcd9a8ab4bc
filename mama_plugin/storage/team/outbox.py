"""The team tables of the user's SQLite: connected projects, the outbox, the versions seen.

Every function takes the :class:`~mama_plugin.storage.Store` and runs inside its transactions.
A memory travels as a *payload*: its shared fields as one JSON body, with a digest of that
body (``updated_at`` aside) so a change pushed twice — its acknowledgement lost to an outage —
is recognised as the same change, not a conflict.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import TeamError
from ..memories import NARRATIVE_LAYERS
from ..sql import now_ms
from .conflicts import Conflict, raise_conflict
from .tables import LINK_KEY_SEPARATOR

if TYPE_CHECKING:
    from ..store import Store

BODY_FIELDS = (
    "type",
    "topic",
    "content",
    *NARRATIVE_LAYERS,
    "outcome_status",
    "outcome",
    "confidence",
    "tags",
    "status",
    "metadata",
    "created_at",
)
LINK_FIELDS = ("reason", "evidence", "context", "confidence", "created_by", "created_at")


@dataclass(frozen=True)
class TeamProject:
    """A local project connected to a team database."""

    project: str
    remote: str
    url: str
    connected_at: int
    pulled_seq: int
    last_sync_at: int | None
    last_error: str
    last_error_at: int | None


@dataclass(frozen=True)
class Change:
    """One outbox entry, folded: the newest queue id of a memory or link key."""

    upto: int
    kind: str
    key: str


def digest(body: dict[str, Any]) -> str:
    """The identity of a memory's shared content (a hex SHA-256 of its canonical JSON)."""
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def link_key(from_id: str, to_id: str, relationship: str) -> str:
    """The outbox key of a link."""
    return LINK_KEY_SEPARATOR.join((from_id, to_id, relationship))


def split_link_key(key: str) -> tuple[str, str, str]:
    """A link key's (from_id, to_id, relationship)."""
    from_id, to_id, relationship = key.split(LINK_KEY_SEPARATOR)
    return from_id, to_id, relationship


# -- connected projects ---------------------------------------------------------------------

_PROJECT_COLUMNS = (
    "project, remote, url, connected_at, pulled_seq, last_sync_at, last_error, last_error_at"
)


def projects(store: Store, project: str | None = None) -> list[TeamProject]:
    """The connected projects (only ``project`` when given)."""
    sql = f"SELECT {_PROJECT_COLUMNS} FROM team_projects"
    rows = (
        store.conn.execute(sql + " WHERE project = ?", (project,))
        if project
        else store.conn.execute(sql + " ORDER BY project")
    )
    return [TeamProject(*row) for row in rows]


def require_project(store: Store, project: str) -> TeamProject:
    """The connection of ``project``; raises TeamError when it is not connected."""
    found = projects(store, project)
    if not found:
        raise TeamError(
            f"{project} is not connected to a team database; run `mama team connect URL` there"
        )
    return found[0]


def connect_project(store: Store, project: str, remote: str, url: str) -> int:
    """Connect ``project`` (or change where it points) and queue what it already holds.

    Returns how many memories were queued. Reconnecting to another database starts its pull
    from the beginning.
    """
    with store.transaction():
        before = projects(store, project)
        if before and (before[0].url, before[0].remote) == (url, remote):
            return 0
        store.conn.execute(
            "INSERT INTO team_projects(project, remote, url, connected_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(project) DO UPDATE SET remote = excluded.remote, url = excluded.url, "
            "connected_at = excluded.connected_at, pulled_seq = 0, last_sync_at = NULL, "
            "last_error = '', last_error_at = NULL",
            (project, remote, url, now_ms()),
        )
        now = now_ms()
        store.conn.execute(
            "INSERT INTO team_outbox(project, kind, key, queued_at) SELECT project, 'memory', "
            "id, ? FROM memories WHERE project = ? AND type <> 'checkpoint' ORDER BY seq",
            (now, project),
        )
        queued = store.conn.changes()
        store.conn.execute(
            "INSERT INTO team_outbox(project, kind, key, queued_at) "
            "SELECT f.project, 'link', l.from_id || char(31) || l.to_id || char(31) "
            "|| l.relationship, ? FROM memory_links l JOIN memories f ON f.id = l.from_id "
            "JOIN memories t ON t.id = l.to_id WHERE f.project = ? "
            "AND f.type <> 'checkpoint' AND t.type <> 'checkpoint' ORDER BY l.id",
            (now, project),
        )
    return queued


def disconnect(store: Store, project: str) -> int:
    """Forget the connection of ``project`` and its unsent outbox; returns the entries dropped."""
    require_project(store, project)
    with store.transaction():
        store.conn.execute("DELETE FROM team_outbox WHERE project = ?", (project,))
        dropped = store.conn.changes()
        store.conn.execute("DELETE FROM team_projects WHERE project = ?", (project,))
    return dropped


def record_sync(store: Store, project: str, error: str = "") -> None:
    """Remember when ``project`` last synced, or the error that stopped it."""
    with store.transaction():
        if error:
            store.conn.execute(
                "UPDATE team_projects SET last_error = ?, last_error_at = ? WHERE project = ?",
                (error, now_ms(), project),
            )
        else:
            store.conn.execute(
                "UPDATE team_projects SET last_sync_at = ?, last_error = '', last_error_at = NULL "
                "WHERE project = ?",
                (now_ms(), project),
            )


# -- the outbox -----------------------------------------------------------------------------


def outbox_count(store: Store, project: str) -> dict[str, int]:
    """How many memories and links of ``project`` wait to be pushed (each key once)."""
    rows = store.conn.execute(
        "SELECT kind, count(DISTINCT key) FROM team_outbox WHERE project = ? GROUP BY kind",
        (project,),
    )
    counts = {"memory": 0, "link": 0}
    counts.update({str(kind): int(n) for kind, n in rows})
    return counts


def pending(store: Store, project: str, limit: int) -> list[Change]:
    """The next ``limit`` keys to push, oldest first; a memory held by an open conflict waits."""
    rows = store.conn.execute(
        "SELECT max(o.id), o.kind, o.key FROM team_outbox o WHERE o.project = ? "
        "AND NOT EXISTS (SELECT 1 FROM team_conflicts c WHERE c.memory_id = o.key "
        "AND c.resolved_at IS NULL) GROUP BY o.kind, o.key ORDER BY min(o.id) LIMIT ?",
        (project, limit),
    )
    return [Change(int(upto), str(kind), str(key)) for upto, kind, key in rows]


def memory_payload(store: Store, memory_id: str) -> dict[str, Any] | None:
    """The shared fields of a memory as it is now, or None when it is gone."""
    record = store.memories.get(memory_id)
    if record is None:
        return None
    body = without_nul({name: getattr(record, name) for name in BODY_FIELDS})
    return {"body": body, "digest": digest(body), "updated_at": record.updated_at}


def link_payload(store: Store, key: str) -> dict[str, Any] | None:
    """The shared fields of a link as it is now, or None when it is gone."""
    from_id, to_id, relationship = split_link_key(key)
    for link in store.links.of(from_id, direction="out"):
        if link.to_id == to_id and link.relationship == relationship:
            return without_nul({name: getattr(link, name) for name in LINK_FIELDS})
    return None


def without_nul(value: Any) -> Any:
    """``value`` with every NUL character dropped from its strings (keys included):
    PostgreSQL's text and jsonb refuse one, and a memory holding one blocked every push."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [without_nul(v) for v in value]
    if isinstance(value, dict):
        return {without_nul(k): without_nul(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class SetAside:
    """An outbox entry the team database refused on its own, kept out of the way with why."""

    kind: str
    key: str
    error: str
    set_aside_at: int


def set_aside(store: Store, project: str, change: Change, error: str) -> None:
    """Take ``change`` out of the outbox (up to the id pushed) and keep it aside with the
    database's ``error``: the entries behind it go on. A later change of its key queues it
    again, and it is tried anew."""
    with store.transaction():
        store.conn.execute(
            "DELETE FROM team_outbox WHERE project = ? AND key = ? AND id <= ?",
            (project, change.key, change.upto),
        )
        store.conn.execute(
            "INSERT INTO team_aside(project, kind, key, error, set_aside_at) "
            "VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(project, key) DO UPDATE SET error = excluded.error, "
            "set_aside_at = excluded.set_aside_at",
            (project, change.kind, change.key, error, now_ms()),
        )


def aside(store: Store, project: str) -> list[SetAside]:
    """The entries of ``project`` the team database refused, oldest first."""
    rows = store.conn.execute(
        "SELECT kind, key, error, set_aside_at FROM team_aside WHERE project = ? "
        "ORDER BY set_aside_at, key",
        (project,),
    )
    return [SetAside(str(k), str(key), str(e), int(at)) for k, key, e, at in rows]


def known_versions(store: Store, memory_ids: list[str]) -> dict[str, tuple[int, str]]:
    """The server version and digest last seen of each memory (absent: never synced)."""
    found: dict[str, tuple[int, str]] = {}
    for start in range(0, len(memory_ids), 500):
        part = memory_ids[start : start + 500]
        rows = store.conn.execute(
            "SELECT memory_id, version, digest FROM team_versions "
            f"WHERE memory_id IN ({','.join('?' * len(part))})",
            part,
        )
        found.update({str(i): (int(v), str(d)) for i, v, d in rows})
    return found


def acknowledge(
    store: Store,
    project: str,
    done: list[Change],
    versions: dict[str, tuple[int, str]],
    conflicts: list[Conflict],
) -> None:
    """After the server committed a batch: drop its outbox entries (up to the ids pushed, not
    a change queued since), remember the versions, keep the conflicts it raised."""
    with store.transaction():
        store.conn.executemany(
            "DELETE FROM team_outbox WHERE project = ? AND key = ? AND id <= ?",
            [(project, c.key, c.upto) for c in done],
        )
        store.conn.executemany(
            "DELETE FROM team_aside WHERE project = ? AND key = ?",
            [(project, c.key) for c in done],
        )
        remember(store, versions)
        for c in conflicts:
            raise_conflict(store, c)


def remember(store: Store, versions: dict[str, tuple[int, str]]) -> None:
    """Record the server version and digest now known of each memory (a new one: vector to
    send again)."""
    store.conn.executemany(
        "INSERT INTO team_versions(memory_id, version, digest) VALUES (?, ?, ?) "
        "ON CONFLICT(memory_id) DO UPDATE SET version = excluded.version, "
        "digest = excluded.digest, vector_sent = vector_sent AND digest = excluded.digest",
        [(i, v, d) for i, (v, d) in versions.items()],
    )


def unsent_vectors(store: Store, project: str, limit: int) -> list[tuple[str, int, bytes]]:
    """Memories of ``project`` on the server whose vector was not sent: (id, server version,
    float32 blob); one still waiting to be embedded again waits for its new vector."""
    rows: list[Any] = store.conn.execute(
        "SELECT v.memory_id, v.version, mv.embedding FROM team_versions v "
        "JOIN memories m ON m.id = v.memory_id JOIN memory_vectors mv ON mv.rowid = m.seq "
        "WHERE m.project = ? AND v.vector_sent = 0 AND v.digest <> '' "
        "AND NOT EXISTS (SELECT 1 FROM embedding_queue q WHERE q.seq = m.seq) LIMIT ?",
        (project, limit),
    ).fetchall()
    return [(str(i), int(v), bytes(blob)) for i, v, blob in rows]


def vectors_sent(store: Store, sent: list[tuple[str, int]]) -> None:
    """Record the vectors sent, each for the server version it was sent with."""
    with store.transaction():
        store.conn.executemany(
            "UPDATE team_versions SET vector_sent = 1 WHERE memory_id = ? AND version = ?", sent
        )


def queue(store: Store, project: str, memory_id: str) -> None:
    """Queue a memory to be pushed as it is now."""
    store.conn.execute(
        "INSERT INTO team_outbox(project, kind, key, queued_at) VALUES (?, 'memory', ?, ?)",
        (project, memory_id, now_ms()),
    )


def unqueue(store: Store, key: str) -> None:
    """Drop what waits to be pushed of ``key``."""
    store.conn.execute("DELETE FROM team_outbox WHERE key = ?", (key,))


def has_pending(store: Store, key: str) -> bool:
    """Whether a local change of ``key`` waits in the outbox or in an open conflict."""
    return bool(
        store.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM team_outbox WHERE key = ?) OR EXISTS (SELECT 1 FROM "
            "team_conflicts WHERE memory_id = ? AND resolved_at IS NULL)",
            (key, key),
        ).fetchall()[0][0]
    )


@contextmanager
def applying(store: Store) -> Iterator[Store]:
    """A write transaction whose changes are a teammate's: the triggers queue none of them."""
    with store.transaction():
        store.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('team_applying', '1')")
        try:
            yield store
        finally:
            store.conn.execute("DELETE FROM meta WHERE key = 'team_applying'")


def set_pulled(store: Store, project: str, seq: int) -> None:
    """Record the server sequence ``project`` has pulled through."""
    store.conn.execute(
        "UPDATE team_projects SET pulled_seq = max(pulled_seq, ?) WHERE project = ?",
        (seq, project),
    )
