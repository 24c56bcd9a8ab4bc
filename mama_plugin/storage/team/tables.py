"""The local side of the team store: the outbox and what sync remembers, in the user's SQLite.

One step of :mod:`mama_plugin.storage.migrations` (``team_outbox``). Triggers queue a change
of a connected project's memory or link in the same transaction as the write itself, whatever
wrote it (a tool, a hook, the CLI): nothing can be saved without its outbox row, and a hook
pays one indexed insert. Checkpoints stay personal: the Stop hook's rolling checkpoint is one
developer's session, not the team's knowledge. Rows written by sync itself (a teammate's
change being applied) are not queued back: sync sets ``meta.team_applying`` inside its own
write transaction, which no other connection can see.
"""

from __future__ import annotations

import apsw

# Milliseconds since the epoch, in SQL (unixepoch('subsec') needs SQLite 3.42).
_NOW_MS = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
_SYNCING = "NOT EXISTS (SELECT 1 FROM meta WHERE key = 'team_applying')"
# The columns whose change is the team's business (not usage counters, not the row version).
_SHARED_COLUMNS = (
    "type, project, topic, content, specifics, evidence, reasoning, tension, continuity, "
    "outcome_status, outcome, confidence, tags, status, metadata"
)
LINK_KEY_SEPARATOR = "\x1f"


def _queue_memory(row: str) -> str:
    return (
        f"INSERT INTO team_outbox(project, kind, key, queued_at) "
        f"SELECT {row}.project, 'memory', {row}.id, {_NOW_MS} "
        f"FROM team_projects WHERE project = {row}.project;"
    )


def _queue_link(row: str) -> str:
    # A link cascaded away with its memory finds no memory here: the memory's own tombstone
    # carries that deletion to the team.
    return (
        f"INSERT INTO team_outbox(project, kind, key, queued_at) "
        f"SELECT f.project, 'link', "
        f"{row}.from_id || char(31) || {row}.to_id || char(31) || {row}.relationship, {_NOW_MS} "
        f"FROM memories f JOIN memories t ON t.id = {row}.to_id "
        f"JOIN team_projects p ON p.project = f.project "
        f"WHERE f.id = {row}.from_id AND f.type <> 'checkpoint' AND t.type <> 'checkpoint';"
    )


def team_tables(conn: apsw.Connection, _dim: int) -> None:
    conn.execute(
        f"""
        CREATE TABLE team_projects (
            project TEXT PRIMARY KEY,
            remote TEXT NOT NULL CHECK (remote <> ''),
            url TEXT NOT NULL,
            connected_at INTEGER NOT NULL,
            pulled_seq INTEGER NOT NULL DEFAULT 0,
            last_sync_at INTEGER,
            last_error TEXT NOT NULL DEFAULT '',
            last_error_at INTEGER
        );
        CREATE TABLE team_outbox (
            id INTEGER PRIMARY KEY,
            project TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('memory', 'link')),
            key TEXT NOT NULL,
            queued_at INTEGER NOT NULL
        );
        CREATE INDEX team_outbox_by_project ON team_outbox(project, id);
        CREATE INDEX team_outbox_by_key ON team_outbox(key);
        CREATE TABLE team_versions (
            memory_id TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            digest TEXT NOT NULL,
            vector_sent INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE team_conflicts (
            id INTEGER PRIMARY KEY,
            project TEXT NOT NULL,
            memory_id TEXT NOT NULL,
            base_version INTEGER NOT NULL,
            server_version INTEGER NOT NULL,
            theirs TEXT CHECK (theirs IS NULL OR json_valid(theirs)),
            theirs_by TEXT NOT NULL DEFAULT '',
            raised_at INTEGER NOT NULL,
            resolved_at INTEGER,
            resolution TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX team_conflicts_open ON team_conflicts(memory_id) WHERE resolved_at IS NULL;
        CREATE TRIGGER team_memory_added AFTER INSERT ON memories
            WHEN NEW.type <> 'checkpoint' AND {_SYNCING}
            BEGIN {_queue_memory("NEW")} END;
        CREATE TRIGGER team_memory_changed AFTER UPDATE OF {_SHARED_COLUMNS} ON memories
            WHEN NEW.type <> 'checkpoint' AND {_SYNCING}
            BEGIN {_queue_memory("NEW")} END;
        CREATE TRIGGER team_memory_removed AFTER DELETE ON memories
            WHEN OLD.type <> 'checkpoint' AND {_SYNCING}
            BEGIN {_queue_memory("OLD")} END;
        CREATE TRIGGER team_link_added AFTER INSERT ON memory_links WHEN {_SYNCING}
            BEGIN {_queue_link("NEW")} END;
        CREATE TRIGGER team_link_removed AFTER DELETE ON memory_links WHEN {_SYNCING}
            BEGIN {_queue_link("OLD")} END;
        -- A forgotten memory's text leaves every copy here: the teammate's version kept in an
        -- open conflict too (the server keeps its own until the conflict is settled there).
        CREATE TRIGGER team_conflict_forgotten AFTER DELETE ON memories
            BEGIN DELETE FROM team_conflicts WHERE memory_id = OLD.id; END;
        """
    )


def team_set_aside(conn: apsw.Connection, _dim: int) -> None:
    """``team_aside``: outbox entries the team database refused on their own (a row its rules
    reject), kept with the error so the entries behind them are pushed."""
    conn.execute(
        """
        CREATE TABLE team_aside (
            project TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('memory', 'link')),
            key TEXT NOT NULL,
            error TEXT NOT NULL,
            set_aside_at INTEGER NOT NULL,
            PRIMARY KEY (project, key)
        );
        -- A forgotten memory's entry goes with it (its key is its id; its text was never here).
        CREATE TRIGGER team_aside_forgotten AFTER DELETE ON memories
            BEGIN DELETE FROM team_aside WHERE key = OLD.id; END;
        """
    )
