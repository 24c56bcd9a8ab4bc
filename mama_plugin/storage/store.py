"""The store: one SQLite database per user, rows scoped by project.

The only place that writes SQL. It migrates itself when opened, offers a transaction context
manager (``BEGIN IMMEDIATE``: the write lock is taken up front, so two writers never deadlock
upgrading a read lock), keeps the full-text index in step within the same transaction, and runs
every text it writes through the privacy filter. Imports: standard library, apsw, sqlite-vec.
"""

from __future__ import annotations

import json
import secrets
import string
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from ..config import Config
from ..errors import ConflictError, NotFoundError, StoreBusyError, ValidationError
from ..privacy import redact_tree
from ..relationships import REPLACING
from .connection import PerThread, connect
from .links import LinkOps
from .lists import ListOps
from .migrations import migrate, user_version
from .records import (
    MemoryRecord,
    Redactions,
)
from .search import SearchOps
from .sql import SELECT_MEMORY, now_ms, select_in
from .suggestions import SuggestionOps
from .text import reasoning_text

MEMORY_TYPES = ("decision", "checkpoint", "insight", "context")

_ID_PREFIX = {"decision": "dec", "checkpoint": "chk", "insight": "ins", "context": "ctx"}
_ALPHABET = string.digits + string.ascii_lowercase
# Fields a caller may change on an existing memory; the rest are identity or bookkeeping.
_EDITABLE = frozenset(
    {"topic", "content", "specifics", "evidence", "reasoning", "tension", "continuity",
     "confidence", "tags", "metadata", "session_id"}
)  # fmt: skip
_JSON_FIELDS = ("specifics", "evidence", "reasoning", "tension", "continuity", "tags", "metadata")


def new_id(memory_type: str) -> str:
    """A short id that sorts roughly by creation time: ``dec_<time36><random>``."""
    ms, digits = now_ms(), []
    while ms:
        ms, rem = divmod(ms, 36)
        digits.append(_ALPHABET[rem])
    suffix = "".join(secrets.choice(_ALPHABET) for _ in range(5))
    return f"{_ID_PREFIX[memory_type]}_{''.join(reversed(digits))}{suffix}"


class Store(LinkOps, ListOps, SearchOps, SuggestionOps):
    """A migrated, configured database, one connection per thread (PerThread). Use :meth:`open`."""

    def __init__(self, conns: PerThread, path: Path) -> None:
        self._conns = conns
        self.path = path
        self._local = threading.local()  # the transaction depth, per thread like its connection

    @property  # the mixins declare a plain attribute: it is the calling thread's connection
    def conn(self) -> apsw.Connection:  # type: ignore[override]
        """The calling thread's connection (opened on its first use)."""
        return self._conns.get()

    @property
    def _depth(self) -> int:
        depth: int = getattr(self._local, "depth", 0)
        return depth

    @_depth.setter
    def _depth(self, value: int) -> None:
        self._local.depth = value

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path | str | None = None,
        *,
        config: Config,
        busy_timeout_ms: int | None = None,
    ) -> Store:
        """Open the database at ``path`` (or the configured one), creating and migrating it.

        ``busy_timeout_ms`` (default: the configured one) bounds every wait for another
        writer's lock, on each thread's connection.
        """
        db = Path(path) if path is not None else config.db_path
        timeout = (
            busy_timeout_ms if busy_timeout_ms is not None else config.settings.busy_timeout_ms
        )
        conn = connect(db, busy_timeout_ms=timeout)
        try:
            migrate(conn, embedding_dim=config.settings.embedding_dim)
        except apsw.BusyError as exc:
            conn.close()
            raise StoreBusyError(_busy_message(db)) from exc
        except BaseException:
            conn.close()
            raise
        return cls(PerThread(conn, lambda: connect(db, busy_timeout_ms=timeout)), db)

    def close(self) -> None:
        """Close every thread's connection; the store is unusable afterwards."""
        self._conns.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """How many migration steps this database has climbed."""
        return user_version(self.conn)

    @contextmanager
    def snapshot(self) -> Iterator[Store]:
        """Run several reads against one consistent state of the database (read-only)."""
        if self._depth or not self.conn.getautocommit():
            yield self  # already inside a transaction: its view is consistent
            return
        self.conn.execute("BEGIN")
        try:
            yield self
        finally:
            if not self.conn.getautocommit():
                self.conn.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """Run the block atomically; nested blocks become savepoints of the outer one."""
        if self._depth:
            name = f"mama_sp{self._depth}"
            self.conn.execute(f"SAVEPOINT {name}")
            self._depth += 1
            try:
                yield self
            except BaseException:
                self.conn.execute(f"ROLLBACK TO {name}")
                self.conn.execute(f"RELEASE {name}")
                raise
            else:
                self.conn.execute(f"RELEASE {name}")
            finally:
                self._depth -= 1
            return
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except apsw.BusyError as exc:
            raise StoreBusyError(_busy_message(self.path)) from exc
        self._depth = 1
        try:
            yield self
        except BaseException:
            # SQLite may have rolled back already (disk full, I/O error): keep the real error.
            if not self.conn.getautocommit():
                self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")
        finally:
            self._depth = 0

    # -- memories: writes ------------------------------------------------------------------

    def insert_memory(
        self,
        *,
        type: str,
        project: str,
        content: str,
        topic: str = "",
        specifics: Iterable[Any] = (),
        evidence: Iterable[Any] = (),
        reasoning: dict[str, Any] | None = None,
        tension: dict[str, Any] | None = None,
        continuity: dict[str, Any] | None = None,
        outcome: dict[str, Any] | None = None,
        confidence: float = 0.7,
        tags: Iterable[str] = (),
        status: str = "current",
        session_id: str = "",
        metadata: dict[str, Any] | None = None,
        id: str | None = None,
        created_at: int | None = None,
        updated_at: int | None = None,
        version: int = 1,
        times_used: int = 0,
        last_used: int | None = None,
    ) -> tuple[MemoryRecord, Redactions]:
        """Write one memory and its full-text row; return it with what was redacted.

        Raises ValidationError for a duplicate id, an unknown type or a decision without
        ``reasoning.primary``; nothing is written then.
        """
        if type not in MEMORY_TYPES:
            raise ValidationError([f"type must be one of {', '.join(MEMORY_TYPES)} (got {type!r})"])
        layers, found = redact_tree(
            {
                "topic": topic,
                "content": content,
                "specifics": list(specifics),
                "evidence": list(evidence),
                "reasoning": dict(reasoning or {}),
                "tension": dict(tension or {}),
                "continuity": dict(continuity or {}),
                "outcome": dict(outcome or {}),
                "tags": list(tags),
                "metadata": dict(metadata or {}),
            }
        )
        outcome_body = layers["outcome"]
        outcome_status = str(outcome_body.pop("status", None) or "PENDING")
        memory_id = id or new_id(type)
        created = created_at if created_at is not None else now_ms()
        row = {
            **{k: layers[k] for k in ("topic", "content")},
            **{k: json.dumps(layers[k], ensure_ascii=False) for k in _JSON_FIELDS},
            "id": memory_id,
            "type": type,
            "project": project,
            "outcome_status": outcome_status,
            "outcome": json.dumps(outcome_body, ensure_ascii=False),
            "confidence": confidence,
            "status": status,
            "session_id": session_id,
            "times_used": times_used,
            "last_used": last_used,
            "created_at": created,
            "updated_at": updated_at if updated_at is not None else created,
            "version": version,
        }
        names = list(row)
        with self.transaction():
            try:
                self.conn.execute(
                    f"INSERT INTO memories({', '.join(names)}) "
                    f"VALUES ({', '.join(':' + n for n in names)})",
                    row,
                )
            except apsw.ConstraintError as exc:
                raise ValidationError([_memory_constraint(exc, memory_id)]) from None
            seq = self.conn.last_insert_rowid()
            self._index(seq, layers["topic"], layers["content"], layers["reasoning"])
            self.conn.execute("INSERT INTO embedding_queue(seq) VALUES (?)", (seq,))
        redactions = Redactions()
        redactions.add(dict(found))
        return self.require(memory_id), redactions

    def update_memory(
        self, memory_id: str, *, expected_version: int | None = None, **changes: Any
    ) -> tuple[MemoryRecord, Redactions]:
        """Change editable fields of a memory, bumping its row version.

        With ``expected_version``, raises ConflictError if another writer changed the row
        first (optimistic concurrency). Raises NotFoundError for an unknown id.
        """
        unknown = set(changes) - _EDITABLE
        if unknown:
            raise ValidationError([f"cannot change {', '.join(sorted(unknown))}"])
        clean, found = redact_tree(changes)
        sets = {
            k: json.dumps(v, ensure_ascii=False) if k in _JSON_FIELDS else v
            for k, v in clean.items()
        }
        with self.transaction():
            current = self.require(memory_id)
            if expected_version is not None and current.version != expected_version:
                raise ConflictError(_conflict(memory_id, expected_version, current.version))
            assignments = ", ".join(f"{k} = :{k}" for k in sets)
            sets.update(id=memory_id, version=current.version, now=now_ms())
            self.conn.execute(
                f"UPDATE memories SET {assignments + ', ' if assignments else ''}"
                "version = version + 1, updated_at = :now WHERE id = :id AND version = :version",
                sets,
            )
            updated = self.require(memory_id)
            self._index(
                updated.seq, updated.topic, updated.content, updated.reasoning, replace=True
            )
            if {"topic", "content", "reasoning"} & set(changes):
                self.conn.execute(
                    "INSERT OR IGNORE INTO embedding_queue(seq) VALUES (?)", (updated.seq,)
                )
        redactions = Redactions()
        redactions.add(dict(found))
        return updated, redactions

    def set_outcome(
        self,
        memory_id: str,
        status: str,
        *,
        details: str = "",
        evidence: Iterable[str] = (),
        learned: Iterable[str] = (),
        expected_version: int | None = None,
    ) -> MemoryRecord:
        """Record what happened after a memory (SUCCESS / PARTIAL / FAILED / SUPERSEDED)."""
        body, _ = redact_tree(
            {"details": details, "evidence": list(evidence), "learned": list(learned),
             "recorded_at": now_ms()}
        )  # fmt: skip
        with self.transaction():
            current = self.require(memory_id)
            if expected_version is not None and current.version != expected_version:
                raise ConflictError(_conflict(memory_id, expected_version, current.version))
            self.conn.execute(
                "UPDATE memories SET outcome_status = ?, outcome = ?, version = version + 1, "
                "updated_at = ? WHERE id = ?",
                (status, json.dumps(body, ensure_ascii=False), body["recorded_at"], memory_id),
            )
        return self.require(memory_id)

    def delete_memory(self, memory_id: str) -> None:
        """Delete a memory, its index rows and (by cascade) its links.

        A decision it had replaced becomes current again unless something else replaced it:
        a superseded memory is never left without a successor.
        """
        with self.transaction():
            seq = self.require(memory_id).seq
            replaced = [ln.to_id for ln in self.links(memory_id, direction="out")
                        if ln.relationship in REPLACING]  # fmt: skip
            self.conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
            self.conn.execute("DELETE FROM memory_vectors WHERE rowid = ?", (seq,))
            self.conn.execute("DELETE FROM vector_log")  # in-memory copies must reload
            self.conn.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vectors_epoch'"
            )
            self.conn.execute("DELETE FROM memories WHERE seq = ?", (seq,))
            for orphan in replaced:
                if not any(
                    ln.relationship in REPLACING for ln in self.links(orphan, direction="in")
                ):
                    self.conn.execute(
                        "UPDATE memories SET status = 'current', version = version + 1, "
                        "updated_at = ?, outcome_status = CASE outcome_status "
                        "WHEN 'SUPERSEDED' THEN 'PENDING' ELSE outcome_status END WHERE id = ?",
                        (now_ms(), orphan),
                    )

    def touch(self, memory_ids: Iterable[str]) -> None:
        """Count a use of each memory. Usage is bookkeeping: the row version does not change."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return
        with self.transaction():
            self.conn.executemany(
                "UPDATE memories SET times_used = times_used + 1, last_used = ? WHERE id = ?",
                [(now_ms(), i) for i in ids],
            )

    def _index(
        self,
        seq: int,
        topic: str,
        content: str,
        reasoning: dict[str, Any],
        *,
        replace: bool = False,
    ) -> None:
        if replace:
            self.conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
        self.conn.execute(
            "INSERT INTO memories_fts(rowid, topic, content, reasoning) VALUES (?, ?, ?, ?)",
            (seq, topic, content, reasoning_text(reasoning)),
        )

    def get_many(self, memory_ids: Iterable[str]) -> dict[str, MemoryRecord]:
        """The stored memories among ``memory_ids``, by id."""
        rows = select_in(self.conn, SELECT_MEMORY + " WHERE id IN ({})", memory_ids)
        return {str(r[1]): MemoryRecord.from_row(r) for r in rows}

    def get_by_seq(self, seqs: Iterable[int]) -> dict[int, MemoryRecord]:
        """The stored memories among row numbers ``seqs``, by seq."""
        rows = select_in(self.conn, SELECT_MEMORY + " WHERE seq IN ({})", seqs)
        return {int(r[0]): MemoryRecord.from_row(r) for r in rows}

    # -- memories: reads -------------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryRecord | None:
        """The memory with this id, or None."""
        rows = self.conn.execute(f"{SELECT_MEMORY} WHERE id = ?", (memory_id,)).fetchall()
        return MemoryRecord.from_row(rows[0]) if rows else None

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

    # -- metadata --------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        """A value from the store's key-value table, or None."""
        rows = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a key in the store's key-value table."""
        with self.transaction():
            self.conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )


def _memory_constraint(exc: apsw.ConstraintError, memory_id: str) -> str:
    text = str(exc)
    if "UNIQUE" in text and "memories.id" in text:
        return f"a memory with id {memory_id!r} already exists"
    if "json_extract(reasoning" in text or "reasoning" in text:
        return "reasoning.primary is required for a decision — explain WHY"
    if "confidence" in text:
        return "confidence must be between 0 and 1"
    return f"the memory breaks a rule of the schema ({text})"


def _conflict(memory_id: str, expected: int, actual: int) -> str:
    return (
        f"memory {memory_id} changed since you read it (you had version {expected}, it is now "
        f"{actual}); reload it and apply your change again"
    )


def _busy_message(path: Path) -> str:
    return f"the database {path} stayed locked by another writer; try again in a moment"
