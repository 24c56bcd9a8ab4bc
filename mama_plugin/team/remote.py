"""The team database's side of a sync: push a batch, read the change feed, send vectors.

Every push of a project runs behind that project's advisory lock and takes its sequence
numbers inside it, so within a project the feed commits in sequence order: a reader that has
seen ``seq`` N never later meets a smaller one committing (a cursor per project is exact).
A memory is written only over the version its pusher last saw (optimistic versioning); a
different version becomes a row of ``mama.conflicts`` and a local conflict, never an
overwrite. A change already there (same digest: its acknowledgement was lost) is taken as
acknowledged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..storage.team.apply import Pulled
from ..storage.team.conflicts import Conflict
from ..storage.team.outbox import Change, split_link_key
from ..storage.team.rows import parsed_body

_NEXT = "nextval('mama.change_seq')"


class Refused(Exception):
    """Raised when the team database refuses a batch for what a row holds (its data or its
    rules, not the connection or the role): each row is then tried alone."""


@dataclass
class Pushed:
    """What one pushed batch did on the server."""

    versions: dict[str, tuple[int, str]] = field(default_factory=dict)
    conflicts: list[Conflict] = field(default_factory=list)
    memories: int = 0  # written (inserted, changed, deleted)
    links: int = 0
    already: int = 0  # found there already (a push repeated after a lost acknowledgement)


def _lock(conn: Any, remote: str) -> None:
    conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("mama:" + remote,))


def push(
    conn: Any,
    remote: str,
    changes: list[Change],
    payloads: dict[str, dict[str, Any] | None],
    known: dict[str, tuple[int, str]],
) -> Pushed:
    """Write one batch in one transaction of the team database; what it did.

    ``payloads`` holds each key's current local state (None: deleted here), ``known`` the
    server version each memory was last seen at. Raises :class:`Refused` (nothing written)
    when the database refuses what a row holds.
    """
    from psycopg.types.json import Jsonb

    done = Pushed()
    ids = [c.key for c in changes if c.kind == "memory"]
    with _refusals(), conn.transaction():  # rolled back before the refusal is raised
        _lock(conn, remote)
        server = {
            r[0]: r[1:]
            for r in conn.execute(
                "SELECT id, version, digest, deleted, body, changed_by FROM mama.memories "
                "WHERE id = ANY(%s) FOR UPDATE",
                (ids,),
            )
        }
        inserts: list[tuple[str, dict[str, Any]]] = []
        updates: list[tuple[str, Any, int]] = []
        tombstones: list[tuple[str, Any, int]] = []
        conflicts: list[tuple[str, int, int, dict[str, Any] | None]] = []
        for memory_id in ids:
            mine = payloads[memory_id]
            base = known.get(memory_id, (0, ""))[0]
            there = server.get(memory_id)
            if there is None:
                if mine is not None:
                    inserts.append((memory_id, mine))
                    done.versions[memory_id] = (1, mine["digest"])
                continue
            version, their_digest, deleted, body, by = there
            same = deleted if mine is None else (not deleted and their_digest == mine["digest"])
            if same:
                done.versions[memory_id] = (version, their_digest)
                done.already += 1
            elif version == base:
                (tombstones if mine is None else updates).append((memory_id, mine, version + 1))
                done.versions[memory_id] = (version + 1, "" if mine is None else mine["digest"])
            else:
                theirs = None if deleted else body
                conflicts.append((memory_id, base, version, mine))
                done.conflicts.append(Conflict(0, "", memory_id, base, version, theirs, by, 0))
        conn.cursor().executemany(
            "INSERT INTO mama.memories(id, project, type, topic, content, status, "
            "outcome_status, body, version, digest, updated_at, seq) "
            f"VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 1, %s, %s, {_NEXT})",
            [
                (i, remote, *_columns(p["body"]), Jsonb(p["body"]), p["digest"], p["updated_at"])
                for i, p in inserts
            ],
        )
        conn.cursor().executemany(
            "UPDATE mama.memories SET type = %s, topic = %s, content = %s, status = %s, "
            "outcome_status = %s, body = %s, version = %s, digest = %s, updated_at = %s, "
            f"deleted = false, embedding = NULL, seq = {_NEXT}, changed_by = session_user, "
            "changed_at = now() WHERE id = %s",
            [
                (*_columns(p["body"]), Jsonb(p["body"]), v, p["digest"], p["updated_at"], i)
                for i, p, v in updates
            ],
        )
        # A tombstone keeps the id and nothing of what was said.
        conn.cursor().executemany(
            "UPDATE mama.memories SET topic = '', content = '', body = '{}', version = %s, "
            f"digest = '', deleted = true, embedding = NULL, seq = {_NEXT}, "
            "changed_by = session_user, changed_at = now() WHERE id = %s",
            [(v, i) for i, _, v in tombstones],
        )
        conn.cursor().executemany(
            f"UPDATE mama.links SET deleted = true, seq = {_NEXT}, changed_by = session_user, "
            "changed_at = now() WHERE (from_id = %s OR to_id = %s) AND NOT deleted",
            [(i, i) for i, _, _ in tombstones],
        )
        conn.cursor().executemany(
            "INSERT INTO mama.conflicts(project, memory_id, base_version, server_version, mine) "
            "VALUES (%s, %s, %s, %s, %s)",
            [
                (remote, i, b, v, None if m is None else Jsonb(m["body"]))
                for i, b, v, m in conflicts
            ],
        )
        done.memories = len(inserts) + len(updates) + len(tombstones)
        done.links = _push_links(conn, remote, changes, payloads)
        if done.memories or done.links:  # delivered at commit, to every follower listening
            conn.execute("SELECT pg_notify('mama_changes', %s)", (remote,))
    return done


@contextmanager
def _refusals() -> Iterator[None]:
    """Raise :class:`Refused`, with the first line of the database's message, for what it
    refuses a row for (its data, a constraint, a trigger's rule)."""
    import psycopg

    try:
        yield
    except (psycopg.DataError, psycopg.IntegrityError, psycopg.errors.RaiseException) as exc:
        raise Refused((str(exc).strip().splitlines() or [type(exc).__name__])[0]) from None


def _columns(body: dict[str, Any]) -> tuple[Any, ...]:
    return (
        body["type"],
        body.get("topic", ""),
        body.get("content", ""),
        body.get("status", "current"),
        body.get("outcome_status", "PENDING"),
    )


def _push_links(
    conn: Any, remote: str, changes: list[Change], payloads: dict[str, dict[str, Any] | None]
) -> int:
    from psycopg.types.json import Jsonb

    links = [c.key for c in changes if c.kind == "link"]
    moved = 0
    for key in links:
        from_id, to_id, relationship = split_link_key(key)
        body = payloads[key]
        if body is None:
            cur = conn.execute(
                f"UPDATE mama.links SET deleted = true, seq = {_NEXT}, "
                "changed_by = session_user, changed_at = now() "
                "WHERE from_id = %s AND to_id = %s AND relationship = %s AND NOT deleted",
                (from_id, to_id, relationship),
            )
        else:
            cur = conn.execute(
                "INSERT INTO mama.links(project, from_id, to_id, relationship, body, seq) "
                f"VALUES (%s, %s, %s, %s, %s, {_NEXT}) "
                "ON CONFLICT (from_id, to_id, relationship) DO UPDATE SET body = EXCLUDED.body, "
                f"deleted = false, seq = {_NEXT}, changed_by = session_user, changed_at = now() "
                "WHERE mama.links.deleted OR mama.links.body <> EXCLUDED.body",
                (remote, from_id, to_id, relationship, Jsonb(body)),
            )
        moved += max(cur.rowcount, 0)
    return moved


def pull(conn: Any, remote: str, after: int, limit: int) -> list[Pulled]:
    """The project's changes past sequence ``after``, oldest first, at most ``limit``."""
    rows = conn.execute(
        "SELECT seq, 'memory', id, version, deleted, digest, body::text, changed_by, updated_at "
        "FROM mama.memories WHERE project = %(p)s AND seq > %(after)s "
        "UNION ALL SELECT seq, 'link', from_id || chr(31) || to_id || chr(31) || relationship, "
        "0, deleted, '', body::text, changed_by, 0 FROM mama.links "
        "WHERE project = %(p)s AND seq > %(after)s ORDER BY 1 LIMIT %(n)s",
        {"p": remote, "after": after, "n": limit},
    ).fetchall()
    # Bodies as text, parsed row by row: one too deep for the driver's JSON reader would
    # otherwise fail the whole page, and every teammate's sync with it.
    return [
        Pulled(seq, kind, key, version, deleted, digest, parsed_body(body), by, at)
        for seq, kind, key, version, deleted, digest, body, by, at in rows
    ]


def push_vectors(conn: Any, rows: list[tuple[str, int, str, list[float]]]) -> int:
    """Store each memory's embedding (id, server version, model, vector) for team search; a
    memory changed since (another version) is left for its new vector."""
    if not rows:
        return 0
    with conn.transaction():
        cur = conn.cursor()
        cur.executemany(
            "UPDATE mama.memories SET embedding = %s::vector, embedding_model = %s "
            "WHERE id = %s AND version = %s",
            [(vector_text(v), model, i, version) for i, version, model, v in rows],
        )
    return len(rows)


def vector_text(vector: list[float]) -> str:
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


def may_read(conn: Any, remote: str) -> bool:
    """Whether the connected role was given the project ``remote``."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM mama.members WHERE project = %s AND member = current_user)",
        (remote,),
    ).fetchone()
    return bool(row[0])


def role(conn: Any) -> str:
    """The role this connection acts as."""
    return str(conn.execute("SELECT current_user").fetchone()[0])
