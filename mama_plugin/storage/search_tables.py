"""The ladder's search tables: full text, vectors, and the state search caches are keyed on.

Each function is one step of :mod:`.migrations` (its DDL and any backfill), run inside that
step's transaction; :func:`create_vector_table` is also what a re-embedding with another
dimension rebuilds (``storage/vectors.py``).
"""

from __future__ import annotations

import json

import apsw

from .text import reasoning_text

RANK_LOG_KEPT = 1024  # rank_log's trim step: it holds the newest 1,024 to 2,047 entries


def fulltext(conn: apsw.Connection, _dim: int) -> None:
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


def vectors(conn: apsw.Connection, dim: int) -> None:
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


def search_state(conn: apsw.Connection, _dim: int) -> None:
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


def text_vectors(conn: apsw.Connection, _dim: int) -> None:
    # Vectors of short texts by model: the views of a memory (its topic, its one line) that
    # prompt-time recall compares a prompt with besides its stored narrative
    # (services/search/views.py). Keyed by the text, so an edit simply misses.
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


def rank_log(conn: apsw.Connection, _dim: int) -> None:
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
