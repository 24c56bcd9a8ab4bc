"""The schema ladder: named steps, each in its own transaction with the bump that records it.

``PRAGMA user_version`` holds how many steps ran; ``schema_migrations`` names them. A fresh
database and an old one climb the same ladder. Several processes may open an old database at
once: each step re-reads the version after taking the write lock, so only one of them runs it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import apsw

from ..errors import SchemaError
from . import (
    confidence,
    file_states,
    link_state,
    link_tags,
    notes,
    pending_lines,
    relationship_words,
    search_tables,
    shared_files,
    tables,
)
from .team.tables import team_set_aside, team_tables


@dataclass(frozen=True)
class Step:
    """One migration: its recorded name, the function that applies it, what it adds.

    ``adds`` is one line of Markdown; docs/architecture.md's schema table is rendered from it.
    """

    name: str
    apply: Callable[[apsw.Connection, int], None]
    adds: str = ""


# Each step's function lives with its kind of table: records (.tables), search
# (.search_tables), the files memories cite (.file_states).
STEPS: tuple[Step, ...] = (
    Step(
        "core_tables",
        tables.core_tables,
        "`memories` (narrative layers as JSON, `outcome_status` column + `outcome` JSON, status, "
        "usage, `version`), `memory_links`, `meta` (with `links_version`, moved by triggers on "
        "every link insert and delete), `schema_migrations`",
    ),
    Step(
        "fulltext_index",
        search_tables.fulltext,
        "`memories_fts` (FTS5, porter + unicode61) over topic, content and reasoning text; "
        "backfilled",
    ),
    Step(
        "relationship_usage",
        tables.relationship_usage,
        "`relationship_usage`: per-relationship use counts, backfilled from links",
    ),
    Step(
        "embedding_vectors",
        search_tables.vectors,
        "`memory_vectors` (`vec0`, partitioned by project, cosine, dimension from "
        "`embedding_dim`, recorded in `meta`), `embedding_queue` (every memory waits there for "
        "its vector), `vector_log` and `meta.vectors_epoch` (what an in-memory index must reload)",
    ),
    Step(
        "import_records",
        tables.imports,
        "`imports` (source, backup, counts) and `legacy_rows` (rows of unknown v1.0 tables)",
    ),
    Step(
        "link_suggestions",
        tables.suggestions,
        "`link_suggestions`: proposed links with reason, sources, score and verdict (`pending`, "
        "`accepted` with the link it became, `rejected`, `no_link`)",
    ),
    Step(
        "search_state",
        search_tables.search_state,
        "`memories_by_update` (project, type, updated_at): the most recently changed memories "
        "of a kind without a sort; `meta.text_version`, a random token triggers renew on every "
        "insert, delete and text edit of a memory (cached word counts are keyed on it)",
    ),
    Step(
        "text_vectors",
        search_tables.text_vectors,
        "`text_vectors` (model, text → float32 vector): the short views of memories (topic, "
        "decision line) prompt-time recall compares a prompt with, embedded once when indexed "
        "or first recalled, not again by every session's first prompt",
    ),
    Step(
        "rank_log",
        search_tables.rank_log,
        "`rank_log` (seq of every memory inserted, deleted or changed in a column ranking "
        "reads; trimmed by a trigger to its newest entries) and `meta.rank_epoch`: what an "
        "in-memory copy of the ranking columns must drop or reload",
    ),
    Step(
        "memory_files",
        file_states.memory_files,
        "`memory_files` (memory, project, path → the commit, git blob hash, size and mtime when "
        "it was recorded; cascades with its memory): the files a memory cites, checked against "
        "the working tree before it is told",
    ),
    Step(
        "shared_files",
        shared_files.shared_files,
        "`shared_files` (project, memory → path and hash of its `.mama/` file as last shared or "
        "imported, tombstone flag): the common ancestor of a share's three-way merge; "
        "`share_conflicts` (both versions of a memory changed here and by a teammate; a "
        "trigger drops it with its memory, `mama redact` masks it)",
    ),
    Step(
        "confidence_history",
        confidence.confidence_history,
        "`confidence_history` (memory, when, from, to, why, the memory whose outcome moved it, "
        "the outcome's key, hops; cascades with its memory): every move of a confidence "
        "learned from an outcome, and when a memory was last judged or verified",
    ),
    Step(
        "team_outbox",
        team_tables,
        "`team_projects` (a project connected to a team database: its name there, URL without "
        "password, the server sequence pulled through, last sync and error), `team_outbox` "
        "(filled by triggers on memories and links of connected projects, checkpoints aside, "
        "in the write's own transaction), `team_versions` (the server version and digest last "
        "seen per memory), `team_conflicts` (a teammate's version kept beside the local one)",
    ),
    Step(
        "relationship_words",
        relationship_words.relationship_words,
        "`relationship_words` (word → canonical word, cluster id, category inferred from its "
        "meaning with its confidence, who decided): what `mama graph tidy` and merges record; "
        "links keep the word their writer chose",
    ),
    Step(
        "memory_notes",
        notes.memory_notes,
        "`memory_notes` (memory, the memory that caused it, when, kind `link` with the "
        "relationship or `outcome` with the verdict, key; cascades with either memory): the "
        "dated notes a memory gains when a later memory builds on it or what it builds on "
        "FAILED; ids and words, never memory text",
    ),
    Step(
        "link_tags",
        link_tags.link_tags,
        "`link_tags` (link, tag; cascades with its link, indexed by tag): extra words on a "
        "link beside its relationship, to group and filter links by (`mama links --tag`)",
    ),
    Step(
        "link_state",
        link_state.link_state,
        "`memory_links.used_at` (the last answer that told both its ends: a link's strength "
        "fades from then) and `archived_links` (links the periodic pass pruned, as they were, "
        "with when and why; cascades with their memories): what `mama graph archived` lists "
        "and `mama graph restore` puts back",
    ),
    Step(
        "pending_lines",
        pending_lines.pending_lines,
        "`pending_lines` (session, project, its rolling checkpoint and that checkpoint's "
        "version when queued, when; cascades with the checkpoint): sessions whose checkpoint "
        "lines wait for the model, so the wait outlives the server that was to run it",
    ),
    Step(
        "team_set_aside",
        team_set_aside,
        "`team_aside` (project, kind, key, the team database's error, when): outbox entries "
        "the team database refused on their own, set aside so the entries behind them go on",
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
