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
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

from ..config import Config
from ..errors import ConflictError, NotFoundError, StoreBusyError, ValidationError
from ..privacy import redact_tree
from ..relationships import REPLACING, category_of, normalise
from .connection import connect
from .fts import match_query, query_words, quoted
from .migrations import migrate, user_version
from .records import (
    LINK_COLUMNS,
    MEMORY_COLUMNS,
    LinkRecord,
    MemoryRecord,
    RankFields,
    Redactions,
)
from .text import reasoning_text

MEMORY_TYPES = ("decision", "checkpoint", "insight", "context")
COMMON_WORD_MIN = 2_000  # see text_ranks
_ID_PREFIX = {"decision": "dec", "checkpoint": "chk", "insight": "ins", "context": "ctx"}
_ALPHABET = string.digits + string.ascii_lowercase
_SELECT_MEMORY = "SELECT " + ", ".join(MEMORY_COLUMNS) + " FROM memories"
_SELECT_LINK = "SELECT " + ", ".join(LINK_COLUMNS) + " FROM memory_links"
# Fields a caller may change on an existing memory; the rest are identity or bookkeeping.
_EDITABLE = frozenset(
    {"topic", "content", "specifics", "evidence", "reasoning", "tension", "continuity",
     "confidence", "tags", "metadata", "session_id"}
)  # fmt: skip
_JSON_FIELDS = ("specifics", "evidence", "reasoning", "tension", "continuity", "tags", "metadata")


def now_ms() -> int:
    """Milliseconds since the epoch, the store's one time unit."""
    return int(time.time() * 1000)


def new_id(memory_type: str) -> str:
    """A short id that sorts roughly by creation time: ``dec_<time36><random>``."""
    ms, digits = now_ms(), []
    while ms:
        ms, rem = divmod(ms, 36)
        digits.append(_ALPHABET[rem])
    suffix = "".join(secrets.choice(_ALPHABET) for _ in range(5))
    return f"{_ID_PREFIX[memory_type]}_{''.join(reversed(digits))}{suffix}"


class Store:
    """A migrated, configured connection to the MAMA database. Use :meth:`open`."""

    def __init__(self, conn: apsw.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._depth = 0
        self._commits = 0

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | str | None = None, *, config: Config | None = None) -> Store:
        """Open the database at ``path`` (or the configured one), creating and migrating it."""
        config = config or Config()
        db = Path(path) if path is not None else config.db_path
        conn = connect(db, busy_timeout_ms=config.get("busy_timeout_ms"))
        try:
            migrate(conn, embedding_dim=config.get("embedding_dim"))
        except apsw.BusyError as exc:
            conn.close()
            raise StoreBusyError(_busy_message(db)) from exc
        except BaseException:
            conn.close()
            raise
        return cls(conn, db)

    def close(self) -> None:
        """Close the connection; the store is unusable afterwards."""
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """How many migration steps this database has climbed."""
        return user_version(self.conn)

    @property
    def generation(self) -> tuple[int, int]:
        """A token that changes whenever anyone commits a change: caches key on it.

        ``PRAGMA data_version`` moves when *other* connections commit; our own commits are
        counted here.
        """
        value: Any = self.conn.execute("PRAGMA data_version").fetchall()[0][0]
        return int(value), self._commits

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
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")
            self._commits += 1
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
        """Delete a memory, its index rows and (by cascade) its links."""
        with self.transaction():
            seq = self.require(memory_id).seq
            self.conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (seq,))
            self.conn.execute("DELETE FROM memory_vectors WHERE rowid = ?", (seq,))
            self.conn.execute("DELETE FROM vector_log")  # in-memory copies must reload
            self.conn.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vectors_epoch'"
            )
            self.conn.execute("DELETE FROM memories WHERE seq = ?", (seq,))

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

    # -- links -----------------------------------------------------------------------------

    def add_link(
        self,
        from_id: str,
        to_id: str,
        relationship: str,
        reason: str,
        *,
        evidence: str = "",
        context: str = "",
        confidence: float = 1.0,
        created_by: str = "user",
        created_at: int | None = None,
        mark_target: bool = True,
    ) -> tuple[LinkRecord, Redactions]:
        """Link two memories with a reason; a replacing link marks its target superseded.

        Stating an existing link again returns it unchanged. ``mark_target=False`` leaves the
        target's status alone (restoring a dump whose statuses are already right). Raises
        ValidationError for an empty reason, an unknown id, a self-link or a supersede cycle.
        """
        try:
            word = normalise(relationship)
        except ValueError as exc:
            raise ValidationError([str(exc)]) from None
        if not reason or not reason.strip():
            raise ValidationError(["every link needs a reason — say in one sentence why"])
        if from_id == to_id:
            raise ValidationError([f"a memory cannot link to itself ({from_id})"])
        if not 0.0 <= confidence <= 1.0:
            raise ValidationError([f"confidence must be between 0 and 1 (got {confidence!r})"])
        text, found = redact_tree(
            {"reason": reason.strip(), "evidence": evidence, "context": context}
        )
        created = created_at if created_at is not None else now_ms()
        with self.transaction():
            missing = [i for i in (from_id, to_id) if i not in self.existing_ids([from_id, to_id])]
            if missing:
                end = "from_id" if missing[0] == from_id else "to_id"
                raise ValidationError(
                    [f"unknown {end} {missing[0]!r}: no memory has that id — search for it first"]
                )
            if word in REPLACING and self._replaces(to_id, from_id):
                raise ValidationError(
                    [
                        f"{to_id} already (transitively) {word} {from_id}: "
                        "this link would make a cycle"
                    ]
                )
            existing = self.conn.execute(
                f"{_SELECT_LINK} WHERE from_id = ? AND to_id = ? AND relationship = ?",
                (from_id, to_id, word),
            ).fetchall()
            if existing:
                return LinkRecord.from_row(existing[0]), Redactions()
            category = category_of(word)
            self.conn.execute(
                "INSERT INTO memory_links(from_id, to_id, relationship, reason, evidence, context, "
                "link_category, confidence, created_by, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (from_id, to_id, word, text["reason"], text["evidence"], text["context"],
                 category, confidence, created_by, created),
            )  # fmt: skip
            link_id = self.conn.last_insert_rowid()
            self.conn.execute(
                "INSERT INTO relationship_usage(relationship, link_category, uses, first_used, "
                "last_used) VALUES (?, ?, 1, ?, ?) ON CONFLICT(relationship) DO UPDATE SET "
                "uses = uses + 1, last_used = max(last_used, excluded.last_used)",
                (word, category, created, created),
            )
            if word in REPLACING and mark_target:
                self._mark_superseded(to_id)
            row = self.conn.execute(f"{_SELECT_LINK} WHERE id = ?", (link_id,)).fetchall()[0]
        redactions = Redactions()
        redactions.add(dict(found))
        return LinkRecord.from_row(row), redactions

    def _replaces(self, start: str, target: str) -> bool:
        """True if ``start`` reaches ``target`` by following replacing links forward."""
        marks = ",".join("?" * len(REPLACING))
        rows = self.conn.execute(
            f"""WITH RECURSIVE chain(id) AS (
                    SELECT ? UNION
                    SELECT l.to_id FROM memory_links l JOIN chain ON l.from_id = chain.id
                    WHERE l.relationship IN ({marks}))
                SELECT 1 FROM chain WHERE id = ? LIMIT 1""",
            (start, *sorted(REPLACING), target),
        ).fetchall()
        return bool(rows)

    def _mark_superseded(self, memory_id: str) -> None:
        self.conn.execute(
            "UPDATE memories SET status = 'superseded', version = version + 1, updated_at = ?, "
            "outcome_status = CASE outcome_status WHEN 'PENDING' THEN 'SUPERSEDED' "
            "ELSE outcome_status END WHERE id = ?",
            (now_ms(), memory_id),
        )

    def restore_superseded(self, memory_id: str) -> None:
        """Mark a memory superseded as history already had it: times and version unchanged.

        For importers replaying a past supersession; live writes go through :meth:`add_link`.
        """
        self.conn.execute(
            "UPDATE memories SET status = 'superseded', "
            "outcome_status = CASE outcome_status WHEN 'PENDING' THEN 'SUPERSEDED' "
            "ELSE outcome_status END WHERE id = ?",
            (memory_id,),
        )

    def link_exists(self, from_id: str, to_id: str, relationship: str) -> bool:
        """True if this exact link (relationship spelled canonically) is stored."""
        rows = self.conn.execute(
            "SELECT 1 FROM memory_links WHERE from_id = ? AND to_id = ? AND relationship = ?",
            (from_id, to_id, relationship),
        ).fetchall()
        return bool(rows)

    def links(
        self, memory_id: str, *, direction: str = "both", categories: Iterable[str] | None = None
    ) -> list[LinkRecord]:
        """Links touching a memory: ``out`` (from it), ``in`` (to it) or ``both``; oldest first."""
        where = {"out": "from_id = :id", "in": "to_id = :id"}.get(
            direction, "(from_id = :id OR to_id = :id)"
        )
        params: dict[str, Any] = {"id": memory_id}
        if categories is not None:
            cats = list(categories)
            where += " AND link_category IN (" + ",".join(f":c{i}" for i in range(len(cats))) + ")"
            params.update({f"c{i}": c for i, c in enumerate(cats)})
        rows = self.conn.execute(f"{_SELECT_LINK} WHERE {where} ORDER BY created_at, id", params)
        return [LinkRecord.from_row(r) for r in rows.fetchall()]

    def links_among(self, memory_ids: Iterable[str], *, direction: str) -> list[LinkRecord]:
        """Every link leaving (``out``) or entering (``in``) any of ``memory_ids``."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return []
        column = "from_id" if direction == "out" else "to_id"
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(f"{_SELECT_LINK} WHERE {column} IN ({marks})", ids)
        return [LinkRecord.from_row(r) for r in rows.fetchall()]

    def get_many(self, memory_ids: Iterable[str]) -> dict[str, MemoryRecord]:
        """The stored memories among ``memory_ids``, by id."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(f"{_SELECT_MEMORY} WHERE id IN ({marks})", ids).fetchall()
        return {str(r[1]): MemoryRecord.from_row(r) for r in rows}

    def get_by_seq(self, seqs: Iterable[int]) -> dict[int, MemoryRecord]:
        """The stored memories among row numbers ``seqs``, by seq."""
        wanted = list(dict.fromkeys(seqs))
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        rows = self.conn.execute(f"{_SELECT_MEMORY} WHERE seq IN ({marks})", wanted).fetchall()
        return {int(r[0]): MemoryRecord.from_row(r) for r in rows}  # type: ignore[arg-type]

    def rank_fields(self, seqs: Iterable[int]) -> dict[int, RankFields]:
        """The few columns ranking needs, without decoding any narrative JSON."""
        wanted = list(dict.fromkeys(seqs))
        out: dict[int, RankFields] = {}
        for start in range(0, len(wanted), 900):  # stay under SQLite's variable limit
            chunk = wanted[start : start + 900]
            rows = self.conn.execute(
                "SELECT seq, confidence, outcome_status, status, created_at, times_used "
                f"FROM memories WHERE seq IN ({','.join('?' * len(chunk))})",
                chunk,
            ).fetchall()
            for row in rows:
                out[int(row[0])] = RankFields(*row)  # type: ignore[arg-type]
        return out

    def session_order(
        self, seqs: Iterable[int], *, project: str | None = None
    ) -> dict[str, list[int]]:
        """For the sessions the given memories belong to: every memory of each, in time order."""
        wanted = list(dict.fromkeys(seqs))
        sessions: set[str] = set()
        for start in range(0, len(wanted), 900):  # stay under SQLite's variable limit
            chunk = wanted[start : start + 900]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(
                "SELECT DISTINCT session_id FROM memories "
                f"WHERE seq IN ({marks}) AND session_id <> ''",
                chunk,
            ).fetchall()
            sessions.update(str(r[0]) for r in rows)
        if not sessions:
            return {}
        names = sorted(sessions)
        scope = " AND project = ?" if project is not None else ""
        marks = ",".join("?" * len(names))
        rows = self.conn.execute(
            f"SELECT seq, session_id FROM memories WHERE session_id IN ({marks})"
            f" AND session_id <> ''{scope} ORDER BY session_id, created_at, seq",
            (*names, *([project] if project is not None else [])),
        ).fetchall()
        order: dict[str, list[int]] = {}
        for seq, session in rows:
            order.setdefault(str(session), []).append(int(seq))  # type: ignore[arg-type]
        return order

    def iter_links(self) -> Iterator[LinkRecord]:
        """Every link, oldest first."""
        for row in self.conn.execute(f"{_SELECT_LINK} ORDER BY id").fetchall():
            yield LinkRecord.from_row(row)

    def relationship_usage(self) -> list[tuple[str, str, int]]:
        """(relationship, category, uses), most used first: candidates for promotion."""
        rows = self.conn.execute(
            "SELECT relationship, link_category, uses FROM relationship_usage "
            "ORDER BY uses DESC, relationship"
        )
        return [tuple(r) for r in rows.fetchall()]  # type: ignore[misc]

    # -- memories: reads -------------------------------------------------------------------

    def get(self, memory_id: str) -> MemoryRecord | None:
        """The memory with this id, or None."""
        rows = self.conn.execute(f"{_SELECT_MEMORY} WHERE id = ?", (memory_id,)).fetchall()
        return MemoryRecord.from_row(rows[0]) if rows else None

    def require(self, memory_id: str) -> MemoryRecord:
        """The memory with this id; raises NotFoundError naming the id otherwise."""
        record = self.get(memory_id)
        if record is None:
            raise NotFoundError(f"no memory has id {memory_id!r} — check it with `mama search`")
        return record

    def existing_ids(self, memory_ids: Iterable[str]) -> set[str]:
        """The subset of ``memory_ids`` that name stored memories."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return set()
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(f"SELECT id FROM memories WHERE id IN ({marks})", ids)
        return {str(r[0]) for r in rows.fetchall()}

    def recent(
        self, *, project: str | None = None, limit: int = 10, type: str | None = None
    ) -> list[MemoryRecord]:
        """The newest memories, optionally of one project and type."""
        where, params = _scope(project, type)
        rows = self.conn.execute(
            f"{_SELECT_MEMORY}{where} ORDER BY created_at DESC, seq DESC LIMIT ?", (*params, limit)
        )
        return [MemoryRecord.from_row(r) for r in rows.fetchall()]

    def by_topic(self, topic: str, *, project: str | None = None) -> list[MemoryRecord]:
        """Every memory with exactly this topic, newest first."""
        where, params = _scope(project, None)
        clause = (where + " AND" if where else " WHERE") + " topic = ?"
        rows = self.conn.execute(
            f"{_SELECT_MEMORY}{clause} ORDER BY created_at DESC, seq DESC", (*params, topic)
        )
        return [MemoryRecord.from_row(r) for r in rows.fetchall()]

    def search_text(
        self, query: str, *, project: str | None = None, limit: int = 10
    ) -> list[tuple[MemoryRecord, float]]:
        """Full-text (BM25) matches for the words of ``query``, best first, with their score."""
        expression = match_query(query)
        if expression is None:
            return []
        where, params = _scope(project, None, alias="m")
        clause = where.replace(" WHERE", " AND") if where else ""
        columns = ", ".join("m." + c for c in MEMORY_COLUMNS)
        rows = self.conn.execute(
            f"SELECT {columns}, -bm25(memories_fts) AS score FROM memories_fts "
            f"JOIN memories m ON m.seq = memories_fts.rowid "
            f"WHERE memories_fts MATCH ?{clause} ORDER BY score DESC LIMIT ?",
            (expression, *params, limit),
        )
        return [(MemoryRecord.from_row(r[:-1]), float(r[-1] or 0.0)) for r in rows.fetchall()]

    def text_ranks(
        self, query: str, *, project: str | None = None, limit: int = 50
    ) -> list[tuple[int, float]]:
        """Full-text (BM25) matches as (seq, score), best first, without loading the rows.

        A word found in more than half of all memories carries almost no BM25 weight
        (IDF ≤ log 2) yet costs the most to score; once its list is long
        (``COMMON_WORD_MIN`` memories) it is left out, unless every word is that common.
        """
        words = query_words(query)
        if not words:
            return []
        frequency = {w: self._document_frequency(w) for w in words}
        total = self._memory_count()
        common = {w for w, n in frequency.items() if n >= COMMON_WORD_MIN and n > total / 2}
        kept = [w for w in words if w not in common and frequency[w]] or words
        expression = " OR ".join(quoted(w) for w in kept)
        if project is None or self._only_project() == project:
            rows = self.conn.execute(
                "SELECT rowid, -bm25(memories_fts) AS score FROM memories_fts "
                "WHERE memories_fts MATCH ? ORDER BY score DESC LIMIT ?",
                (expression, limit),
            )
        else:
            rows = self.conn.execute(
                "SELECT f.rowid, -bm25(memories_fts) AS score FROM memories_fts f "
                "JOIN memories m ON m.seq = f.rowid "
                "WHERE memories_fts MATCH ? AND m.project = ? ORDER BY score DESC LIMIT ?",
                (expression, project, limit),
            )
        return [(int(seq), float(score or 0.0)) for seq, score in rows.fetchall()]  # type: ignore[arg-type]

    def _document_frequency(self, word: str) -> int:
        """How many memories contain ``word`` (as the index tokenizes it)."""
        row = self.conn.execute(
            "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (quoted(word),)
        ).fetchall()[0]
        return int(row[0] or 0)  # type: ignore[arg-type]

    def _only_project(self) -> str | None:
        """The project every memory belongs to, or None when there are several (or none).

        Two index probes: a filter that keeps every row is skipped instead of joined.
        """
        # One aggregate per query: SQLite answers a lone min() or max() from the index.
        low = self.conn.execute("SELECT min(project) FROM memories").fetchall()[0][0]
        high = self.conn.execute("SELECT max(project) FROM memories").fetchall()[0][0]
        return str(low) if low is not None and low == high else None

    def _memory_count(self) -> int:
        row = self.conn.execute("SELECT count(*) FROM memories").fetchall()[0]
        return int(row[0] or 0)  # type: ignore[arg-type]

    def iter_memories(self, *, project: str | None = None) -> Iterator[MemoryRecord]:
        """Every memory, oldest first, optionally of one project."""
        where, params = _scope(project, None)
        for row in self.conn.execute(f"{_SELECT_MEMORY}{where} ORDER BY seq", params).fetchall():
            yield MemoryRecord.from_row(row)

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


def _scope(
    project: str | None, type: str | None, *, alias: str = ""
) -> tuple[str, tuple[Any, ...]]:
    prefix = alias + "." if alias else ""
    clauses, params = [], []
    if project is not None:
        clauses.append(f"{prefix}project = ?")
        params.append(project)
    if type is not None:
        clauses.append(f"{prefix}type = ?")
        params.append(type)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


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
