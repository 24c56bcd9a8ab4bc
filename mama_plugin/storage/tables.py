"""The ladder's record tables: memories and their links, imports, link suggestions.

Each function is one step of :mod:`.migrations` (its DDL and any backfill), run inside that
step's transaction.
"""

from __future__ import annotations

import apsw

from ..relationships import CATEGORIES

OUTCOMES = ("PENDING", "SUCCESS", "PARTIAL", "FAILED", "SUPERSEDED")
STATUSES = ("current", "superseded")
_OUTCOMES = "(" + ",".join(f"'{o}'" for o in OUTCOMES) + ")"
_CATEGORIES = "(" + ",".join(f"'{c}'" for c in CATEGORIES) + ")"


def core_tables(conn: apsw.Connection, _dim: int) -> None:
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


def relationship_usage(conn: apsw.Connection, _dim: int) -> None:
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


def imports(conn: apsw.Connection, _dim: int) -> None:
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


def suggestions(conn: apsw.Connection, _dim: int) -> None:
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
