"""The store's memories: writing them (privacy-filtered, indexed, queued to embed).

Every write runs in the store's transaction and raises ValidationError, ConflictError or
NotFoundError with nothing written; the reads come from :class:`~.memory_reads.MemoryReads`.
Imports: standard library, apsw, leaves.
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Iterable
from typing import Any

import apsw

from ..errors import ConflictError, ValidationError
from ..privacy import redact_tree
from ..relationships import REPLACING
from .memory_reads import MemoryReads
from .records import MemoryRecord, NewMemory, Redactions
from .sql import now_ms
from .text import fulltext_row

MEMORY_TYPES = ("decision", "checkpoint", "insight", "context")

_ID_PREFIX = {"decision": "dec", "checkpoint": "chk", "insight": "ins", "context": "ctx"}
_ALPHABET = string.digits + string.ascii_lowercase
# The layers a memory's story is told in, each stored as JSON.
NARRATIVE_LAYERS = ("specifics", "evidence", "reasoning", "tension", "continuity")
# Fields a caller may change on an existing memory; the rest are identity or bookkeeping.
_EDITABLE = frozenset(
    {"topic", "content", *NARRATIVE_LAYERS, "confidence", "tags", "metadata", "session_id"}
)
# What a memory says, as a teammate's copy carries it: the editable fields but its session.
NARRATIVE_FIELDS = _EDITABLE - {"session_id"}
_JSON_FIELDS = (*NARRATIVE_LAYERS, "tags", "metadata")


def new_id(memory_type: str) -> str:
    """A short id that sorts roughly by creation time: ``dec_<time36><random>``."""
    ms, digits = now_ms(), []
    while ms:
        ms, rem = divmod(ms, 36)
        digits.append(_ALPHABET[rem])
    suffix = "".join(secrets.choice(_ALPHABET) for _ in range(5))
    return f"{_ID_PREFIX[memory_type]}_{''.join(reversed(digits))}{suffix}"


class Memories(MemoryReads):
    """The memories of one store: ``store.memories``; the write path over the reads."""

    def insert(self, new: NewMemory) -> tuple[MemoryRecord, Redactions]:
        """Write one memory and its full-text row; return it with what was redacted.

        Raises ValidationError for a duplicate id, an unknown type or a decision without
        ``reasoning.primary``; nothing is written then.
        """
        if new.type not in MEMORY_TYPES:
            raise ValidationError(
                [f"type must be one of {', '.join(MEMORY_TYPES)} (got {new.type!r})"]
            )
        layers, found = redact_tree(
            {
                "topic": new.topic,
                "content": new.content,
                "specifics": list(new.specifics),
                "evidence": list(new.evidence),
                "reasoning": dict(new.reasoning or {}),
                "tension": dict(new.tension or {}),
                "continuity": dict(new.continuity or {}),
                "outcome": dict(new.outcome or {}),
                "tags": list(new.tags),
                "metadata": dict(new.metadata or {}),
            },
            personal=self.masks_personal,
        )
        outcome_body = layers["outcome"]
        outcome_status = str(outcome_body.pop("status", None) or "PENDING")
        memory_id = new.id or new_id(new.type)
        created = new.created_at if new.created_at is not None else now_ms()
        row = {
            **{k: layers[k] for k in ("topic", "content")},
            **{k: json.dumps(layers[k], ensure_ascii=False) for k in _JSON_FIELDS},
            "id": memory_id,
            "type": new.type,
            "project": new.project,
            "outcome_status": outcome_status,
            "outcome": json.dumps(outcome_body, ensure_ascii=False),
            "confidence": new.confidence,
            "status": new.status,
            "session_id": new.session_id,
            "times_used": new.times_used,
            "last_used": new.last_used,
            "created_at": created,
            "updated_at": new.updated_at if new.updated_at is not None else created,
            "version": new.version,
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
            self._index(
                seq, layers["topic"], layers["content"], layers["reasoning"], layers["tags"]
            )
            self.conn.execute("INSERT INTO embedding_queue(seq) VALUES (?)", (seq,))
        redactions = Redactions()
        redactions.add(dict(found))
        return self.require(memory_id), redactions

    def update(
        self,
        memory_id: str,
        *,
        expected_version: int | None = None,
        updated_at: int | None = None,
        **changes: Any,
    ) -> tuple[MemoryRecord, Redactions]:
        """Change editable fields of a memory, bumping its row version.

        With ``expected_version``, raises ConflictError if another writer changed the row
        first (optimistic concurrency). ``updated_at`` is the row's new change time (default:
        now; compaction keeps the old one, so a folded session does not become the newest).
        Raises NotFoundError for an unknown id.
        """
        unknown = set(changes) - _EDITABLE
        if unknown:
            raise ValidationError([f"cannot change {', '.join(sorted(unknown))}"])
        clean, found = redact_tree(changes, personal=self.masks_personal)
        sets = {
            k: json.dumps(v, ensure_ascii=False) if k in _JSON_FIELDS else v
            for k, v in clean.items()
        }
        with self.transaction():
            current = self.require(memory_id)
            if expected_version is not None and current.version != expected_version:
                raise ConflictError(_conflict(memory_id, expected_version, current.version))
            assignments = ", ".join(f"{k} = :{k}" for k in sets)
            sets.update(
                id=memory_id,
                version=current.version,
                now=now_ms() if updated_at is None else updated_at,
            )
            self.conn.execute(
                f"UPDATE memories SET {assignments + ', ' if assignments else ''}"
                "version = version + 1, updated_at = :now WHERE id = :id AND version = :version",
                sets,
            )
            updated = self.require(memory_id)
            self._index(
                updated.seq,
                updated.topic,
                updated.content,
                updated.reasoning,
                updated.tags,
                replace=True,
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
        extra: dict[str, Any] | None = None,
    ) -> MemoryRecord:
        """Record what happened after a memory (SUCCESS / PARTIAL / FAILED / SUPERSEDED).

        ``extra``: more of the outcome's fields (what was expected, would we repeat it, what
        to do next time), kept in its JSON beside the details."""
        body, _ = redact_tree(
            {
                **(extra or {}),
                "details": details,
                "evidence": list(evidence),
                "learned": list(learned),
                "recorded_at": now_ms(),
            },
            personal=self.masks_personal,
        )
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

    def delete(self, memory_id: str) -> None:
        """Delete a memory, its index rows and (by cascade) its links.

        A decision it had replaced becomes current again unless something else replaced it:
        a superseded memory is never left without a successor.
        """
        with self.transaction():
            seq = self.require(memory_id).seq
            replaced = [
                ln.to_id
                for ln in self._store.links.of(memory_id, direction="out")
                if ln.relationship in REPLACING
            ]
            self.conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
            self.conn.execute("DELETE FROM memory_vectors WHERE rowid = ?", (seq,))
            self._store.vectors.bump_epoch()  # in-memory copies must reload
            self.conn.execute("DELETE FROM memories WHERE seq = ?", (seq,))
            for orphan in replaced:
                if not any(
                    ln.relationship in REPLACING
                    for ln in self._store.links.of(orphan, direction="in")
                ):
                    self.conn.execute(
                        "UPDATE memories SET status = 'current', version = version + 1, "
                        "updated_at = ?, outcome_status = CASE outcome_status "
                        "WHEN 'SUPERSEDED' THEN 'PENDING' ELSE outcome_status END WHERE id = ?",
                        (now_ms(), orphan),
                    )

    def rescope(self, memory_id: str, project: str) -> MemoryRecord:
        """Move a memory to ``project`` (a project's key, or the global scope), its vector with it.

        The files it cited are forgotten: they were paths under the old project's root. Its
        links stay. Raises NotFoundError for an unknown id.
        """
        with self.transaction():
            seq = self.require(memory_id).seq
            self.conn.execute(
                "UPDATE memories SET project = ?, version = version + 1, updated_at = ? "
                "WHERE seq = ?",
                (project, now_ms(), seq),
            )
            self.conn.execute("DELETE FROM memory_files WHERE memory_id = ?", (memory_id,))
            # vec0 partitions by project: the vector moves as a delete and an insert.
            found = self.conn.execute(
                "SELECT embedding FROM memory_vectors WHERE rowid = ?", (seq,)
            ).fetchall()
            if found:
                self.conn.execute("DELETE FROM memory_vectors WHERE rowid = ?", (seq,))
                self.conn.execute(
                    "INSERT INTO memory_vectors(rowid, project, embedding) VALUES (?, ?, ?)",
                    (seq, project, found[0][0]),
                )
                self._store.vectors.bump_epoch()  # in-memory copies must reload
        return self.require(memory_id)

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
        tags: Iterable[str] = (),
        *,
        replace: bool = False,
    ) -> None:
        """Write the memory's full-text row; its tags are indexed with its topic (searchable)."""
        if replace:
            self.conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
        self.conn.execute(
            "INSERT INTO memories_fts(rowid, topic, content, reasoning) VALUES (?, ?, ?, ?)",
            (seq, *fulltext_row(topic, content, reasoning, tags)),
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
