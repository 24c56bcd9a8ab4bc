"""The schema ladder: named steps, each in its own transaction with the bump that records it.

``PRAGMA user_version`` holds how many steps ran; ``schema_migrations`` names them. A fresh
database and an old one climb the same ladder. Several processes may open an old database at
once: each step re-reads the version after taking the write lock, so only one of them runs it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import apsw

from ..errors import SchemaError
from ..relationships import CATEGORIES
from .text import reasoning_text

_OUTCOMES = "('PENDING','SUCCESS','PARTIAL','FAILED','SUPERSEDED')"
_CATEGORIES = "(" + ",".join(f"'{c}'" for c in CATEGORIES) + ")"
RANK_LOG_KEPT = 1024  # rank_log's trim step: it holds the newest 1,024 to 2,047 entries


@dataclass(frozen=True)
class Step:
    """One migration: its recorded name, the function that applies it, what it adds.

    ``adds`` is one line of Markdown; docs/architecture.md's schema table is rendered from it.
    """

    name: str
    apply: Callable[[apsw.Connection, int], None]
    adds: str = ""


def _core_tables(conn: apsw.Connection, _dim: int) -> None:
    conn.execute(
        f"""
        CREATE TABLE schema_migrations (
            name TEXT PRIMARY KEY,
            applied_at INTEGER NOT NULL
        );
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE memories (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            type TEXT NOT NULL CHECK (type IN ('decision','checkpoint','insight','context')),
            project TEXT NOT NULL,
            topic TEXT NOT NULL DEFAULT '',
            content TEXT NOT NULL,
            specifics TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(specifics)),
            evidence TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(evidence)),
            reasoning TEXT NOT NULL DEFAULT '{{}}' CHECK (json_valid(reasoning)),
            tension TEXT NOT NULL DEFAULT '{{}}' CHECK (json_valid(tension)),
            continuity TEXT NOT NULL DEFAULT '{{}}' CHECK (json_valid(continuity)),
            outcome_status TEXT NOT NULL DEFAULT 'PENDING' CHECK (outcome_status IN {_OUTCOMES}),
            outcome TEXT NOT NULL DEFAULT '{{}}' CHECK (json_valid(outcome)),
            confidence REAL NOT NULL DEFAULT 0.7 CHECK (confidence BETWEEN 0 AND 1),
            tags TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags)),
            status TEXT NOT NULL DEFAULT 'current' CHECK (status IN ('current','superseded')),
            session_id TEXT NOT NULL DEFAULT '',
            metadata TEXT NOT NULL DEFAULT '{{}}' CHECK (json_valid(metadata)),
            times_used INTEGER NOT NULL DEFAULT 0,
            last_used INTEGER,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            version INTEGER NOT NULL DEFAULT 1,
            CHECK (type <> 'decision'
                   OR trim(coalesce(json_extract(reasoning, '$.primary'), '')) <> '')
        );
        CREATE INDEX memories_by_project ON memories(project, type, created_at);
        CREATE INDEX memories_by_topic ON memories(project, topic, created_at);
        CREATE INDEX memories_by_session ON memories(session_id) WHERE session_id <> '';
        CREATE TABLE memory_links (
            id INTEGER PRIMARY KEY,
            from_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE ON UPDATE CASCADE,
            to_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE ON UPDATE CASCADE,
            relationship TEXT NOT NULL CHECK (relationship <> ''),
            reason TEXT NOT NULL CHECK (trim(reason) <> ''),
            evidence TEXT NOT NULL DEFAULT '',
            context TEXT NOT NULL DEFAULT '',
            link_category TEXT NOT NULL CHECK (link_category IN {_CATEGORIES}),
            confidence REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1),
            created_by TEXT NOT NULL DEFAULT 'user' CHECK (created_by IN ('user','llm','system')),
            created_at INTEGER NOT NULL,
            CHECK (from_id <> to_id),
            UNIQUE (from_id, to_id, relationship)
        );
        CREATE INDEX memory_links_by_target ON memory_links(to_id);
        -- Counts changes to the link graph (cascaded deletes included), so graph caches
        -- are thrown away exactly when links change, not on every usage counter.
        INSERT INTO meta(key, value) VALUES ('links_version', '0');
        CREATE TRIGGER memory_links_added AFTER INSERT ON memory_links BEGIN
            UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'links_version';
        END;
        CREATE TRIGGER memory_links_removed AFTER DELETE ON memory_links BEGIN
            UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'links_version';
        END;
        """
    )


def _fulltext(conn: apsw.Connection, _dim: int) -> None:
    conn.execute(
        "CREATE VIRTUAL TABLE memories_fts USING fts5("
        "topic, content, reasoning, tokenize = 'porter unicode61 remove_diacritics 2')"
    )
    rows = conn.execute("SELECT seq, topic, content, reasoning FROM memories").fetchall()
    conn.executemany(
        "INSERT INTO memories_fts(rowid, topic, content, reasoning) VALUES (?, ?, ?, ?)",
        [
            (seq, topic, content, reasoning_text(json.loads(str(r))))
            for seq, topic, content, r in rows
        ],
    )


def _relationship_usage(conn: apsw.Connection, _dim: int) -> None:
    conn.execute(
        """
        CREATE TABLE relationship_usage (
            relationship TEXT PRIMARY KEY,
            link_category TEXT NOT NULL,
            uses INTEGER NOT NULL DEFAULT 0,
            first_used INTEGER NOT NULL,
            last_used INTEGER NOT NULL
        );
        INSERT INTO relationship_usage(relationship, link_category, uses, first_used, last_used)
            SELECT relationship, link_category, count(*), min(created_at), max(created_at)
            FROM memory_links GROUP BY relationship;
        """
    )


def _vectors(conn: apsw.Connection, dim: int) -> None:
    create_vector_table(conn, dim)
    conn.execute("INSERT INTO meta(key, value) VALUES ('embedding_dim', ?)", (str(int(dim)),))
    # Memories wait here until the embedder has seen them; saving never waits for a model.
    # vector_log lists the rows given a vector, in order, so an in-memory index can load only
    # what is new; meta.vectors_epoch moves when vectors are replaced or removed.
    conn.execute(
        """
        CREATE TABLE embedding_queue (
            seq INTEGER PRIMARY KEY REFERENCES memories(seq) ON DELETE CASCADE
        );
        INSERT INTO embedding_queue(seq) SELECT seq FROM memories;
        CREATE TABLE vector_log (id INTEGER PRIMARY KEY AUTOINCREMENT, seq INTEGER NOT NULL);
        INSERT INTO meta(key, value) VALUES ('vectors_epoch', '0');
        """
    )


def create_vector_table(conn: apsw.Connection, dim: int) -> None:
    """The KNN index: one partition per project, cosine distance, ``dim`` floats a vector."""
    conn.execute(
        f"CREATE VIRTUAL TABLE memory_vectors USING vec0("
        f"project text partition key, embedding float[{int(dim)}] distance_metric=cosine)"
    )


def _imports(conn: apsw.Connection, _dim: int) -> None:
    conn.execute(
        """
        CREATE TABLE imports (
            id INTEGER PRIMARY KEY,
            source TEXT NOT NULL,
            backup TEXT NOT NULL,
            started_at INTEGER NOT NULL,
            counts TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(counts))
        );
        CREATE TABLE legacy_rows (
            id INTEGER PRIMARY KEY,
            import_id INTEGER NOT NULL REFERENCES imports(id) ON DELETE CASCADE,
            source_table TEXT NOT NULL,
            row TEXT NOT NULL CHECK (json_valid(row))
        );
        CREATE INDEX legacy_rows_by_content ON legacy_rows(source_table, row);
        """
    )


def _suggestions(conn: apsw.Connection, _dim: int) -> None:
    # Proposed links wait here for a person or Claude; they never enter memory_links by
    # themselves. A judged pair is kept whatever the verdict (no_link, rejected) so it is never
    # proposed again; accepted ones point at the link they became.
    conn.execute(
        """
        CREATE TABLE link_suggestions (
            id INTEGER PRIMARY KEY,
            project TEXT NOT NULL,
            from_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE ON UPDATE CASCADE,
            to_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE ON UPDATE CASCADE,
            relationship TEXT NOT NULL CHECK (relationship <> ''),
            reason TEXT NOT NULL DEFAULT '',
            sources TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(sources)),
            score REAL NOT NULL DEFAULT 0,
            judged_by TEXT NOT NULL CHECK (judged_by IN ('llm','rules')),
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending','accepted','rejected','no_link')),
            created_at INTEGER NOT NULL,
            decided_at INTEGER,
            decided_by TEXT NOT NULL DEFAULT '',
            link_id INTEGER REFERENCES memory_links(id) ON DELETE SET NULL,
            CHECK (from_id <> to_id),
            CHECK (status = 'no_link' OR trim(reason) <> ''),
            UNIQUE (from_id, to_id)
        );
        CREATE INDEX link_suggestions_by_project ON link_suggestions(project, status);
        CREATE INDEX link_suggestions_by_target ON link_suggestions(to_id);
        """
    )


def _search_state(conn: apsw.Connection, _dim: int) -> None:
    # "Changed most recently" (Memories.latest, read by every search answer's open steps)
    # walks this index backwards instead of sorting every memory of the project and type.
    # meta.text_version names the state of the searchable text: a new random token on every
    # insert, delete and text edit of a memory (random, so neither a rolled-back write nor a
    # restored backup can bring back a token with other text under it). Word counts are
    # cached under it (storage/search.py).
    renew = "UPDATE meta SET value = lower(hex(randomblob(8))) WHERE key = 'text_version';"
    conn.execute(
        f"""
        CREATE INDEX memories_by_update ON memories(project, type, updated_at);
        INSERT INTO meta(key, value) VALUES ('text_version', lower(hex(randomblob(8))));
        CREATE TRIGGER memories_text_inserted AFTER INSERT ON memories BEGIN {renew} END;
        CREATE TRIGGER memories_text_deleted AFTER DELETE ON memories BEGIN {renew} END;
        CREATE TRIGGER memories_text_edited AFTER UPDATE OF topic, content, reasoning, tags
            ON memories BEGIN {renew} END;
        """
    )


def _text_vectors(conn: apsw.Connection, _dim: int) -> None:
    # Vectors of short texts by model: the views of a memory (its topic, its one line) that
    # prompt-time recall compares a prompt with besides its stored narrative
    # (services/recall_views.py). Keyed by the text, so an edit simply misses.
    conn.execute(
        """
        CREATE TABLE text_vectors (
            model TEXT NOT NULL,
            text TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, text)
        ) WITHOUT ROWID;
        """
    )


def _rank_log(conn: apsw.Connection, _dim: int) -> None:
    # The columns ranking reads change in place (a use, an outcome, a supersede): an in-memory
    # copy of them (storage/rank_cache.py) drops the rows this log names. Ids are never reused
    # (AUTOINCREMENT), so a reader that fell behind the trimmed log sees the gap and starts
    # over; the log keeps its newest RANK_LOG_KEPT..2×RANK_LOG_KEPT entries. A restore renews
    # meta.rank_epoch (random, like text_version): a restored log's ids name other changes.
    kept = RANK_LOG_KEPT
    columns = (
        "confidence, outcome_status, status, created_at, times_used, type, last_used, "
        "project, session_id"
    )
    conn.execute(
        f"""
        CREATE TABLE rank_log (id INTEGER PRIMARY KEY AUTOINCREMENT, seq INTEGER NOT NULL);
        INSERT INTO meta(key, value) VALUES ('rank_epoch', lower(hex(randomblob(8))));
        CREATE TRIGGER memories_rank_inserted AFTER INSERT ON memories
            BEGIN INSERT INTO rank_log(seq) VALUES (new.seq); END;
        CREATE TRIGGER memories_rank_deleted AFTER DELETE ON memories
            BEGIN INSERT INTO rank_log(seq) VALUES (old.seq); END;
        CREATE TRIGGER memories_rank_edited AFTER UPDATE OF {columns} ON memories
            BEGIN INSERT INTO rank_log(seq) VALUES (new.seq); END;
        CREATE TRIGGER rank_log_trimmed AFTER INSERT ON rank_log WHEN new.id % {kept} = 0
            BEGIN DELETE FROM rank_log WHERE id <= new.id - {kept}; END;
        """
    )


STEPS: tuple[Step, ...] = (
    Step(
        "core_tables",
        _core_tables,
        "`memories` (narrative layers as JSON, `outcome_status` column + `outcome` JSON, status, "
        "usage, `version`), `memory_links`, `meta` (with `links_version`, moved by triggers on "
        "every link insert and delete), `schema_migrations`",
    ),
    Step(
        "fulltext_index",
        _fulltext,
        "`memories_fts` (FTS5, porter + unicode61) over topic, content and reasoning text; "
        "backfilled",
    ),
    Step(
        "relationship_usage",
        _relationship_usage,
        "`relationship_usage`: per-relationship use counts, backfilled from links",
    ),
    Step(
        "embedding_vectors",
        _vectors,
        "`memory_vectors` (`vec0`, partitioned by project, cosine, dimension from "
        "`embedding_dim`, recorded in `meta`), `embedding_queue` (every memory waits there for "
        "its vector), `vector_log` and `meta.vectors_epoch` (what an in-memory index must reload)",
    ),
    Step(
        "import_records",
        _imports,
        "`imports` (source, backup, counts) and `legacy_rows` (rows of unknown v1.0 tables)",
    ),
    Step(
        "link_suggestions",
        _suggestions,
        "`link_suggestions`: proposed links with reason, sources, score and verdict (`pending`, "
        "`accepted` with the link it became, `rejected`, `no_link`)",
    ),
    Step(
        "search_state",
        _search_state,
        "`memories_by_update` (project, type, updated_at): the most recently changed memories "
        "of a kind without a sort; `meta.text_version`, a random token triggers renew on every "
        "insert, delete and text edit of a memory (cached word counts are keyed on it)",
    ),
    Step(
        "text_vectors",
        _text_vectors,
        "`text_vectors` (model, text → float32 vector): the short views of memories (topic, "
        "decision line) prompt-time recall compares a prompt with, embedded once when indexed "
        "or first recalled, not again by every session's first prompt",
    ),
    Step(
        "rank_log",
        _rank_log,
        "`rank_log` (seq of every memory inserted, deleted or changed in a column ranking "
        "reads; trimmed by a trigger to its newest entries) and `meta.rank_epoch`: what an "
        "in-memory copy of the ranking columns must drop or reload",
    ),
)
LATEST = len(STEPS)


def user_version(conn: apsw.Connection) -> int:
    """Return how many ladder steps this database has climbed."""
    value: Any = conn.execute("PRAGMA user_version").fetchall()[0][0]
    return int(value)


def migrate(conn: apsw.Connection, *, embedding_dim: int, upto: int = LATEST) -> list[str]:
    """Apply every step the database lacks, up to ``upto``; return the names applied."""
    current = user_version(conn)
    if current > LATEST:
        raise SchemaError(
            f"this database is at schema version {current}, newer than this MAMA knows "
            f"({LATEST}); upgrade MAMA (pip install -U mama-plugin) before opening it"
        )
    applied: list[str] = []
    for number, step in enumerate(STEPS[:upto], start=1):
        if current >= number:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have climbed this step between our read and the lock.
            current = user_version(conn)
            if current < number:
                step.apply(conn, embedding_dim)
                conn.execute(
                    "INSERT INTO schema_migrations(name, applied_at) VALUES (?, ?)",
                    (step.name, int(time.time() * 1000)),
                )
                conn.execute(f"PRAGMA user_version = {number}")
                applied.append(step.name)
                current = number
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return applied
