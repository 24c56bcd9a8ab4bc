"""Build a database of the original MAMA (JavaScript) v1.0 with its real schema, for import tests.

The schema is the v1.0 one as its migrations leave it: the base ``decisions`` table, then the
columns later migrations added with ``ALTER TABLE`` (validation, usage, evidence, kind, status …),
``decision_edges``, ``sessions``, ``checkpoints``, ``error_patterns``, ``embeddings``,
``schema_version`` and the FTS5 index ``decisions_fts`` with its shadow tables.

``build_v1_db(path)`` writes a small, realistic story (JWT → FAILED → superseded by sessions)
whose every awkward corner an importer must handle: seconds-instead-of-milliseconds timestamps
written by old defaults, a NULL reasoning, JSON and plain-text evidence, an edge without reason,
an unapproved LLM edge, a dangling edge, a leaked API key. ``synthetic=N`` adds N generated
decisions in supersede chains. The returned :class:`V1Database` holds every row written, so a
test derives its expectations from the data rather than from copies of it.
"""

from __future__ import annotations

import json
import sqlite3
import struct
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BASE_SCHEMA = """
CREATE TABLE decisions (
  id TEXT PRIMARY KEY,
  topic TEXT NOT NULL,
  decision TEXT NOT NULL,
  reasoning TEXT,
  outcome TEXT,
  failure_reason TEXT,
  limitation TEXT,
  duration_days INTEGER,
  user_involvement TEXT,
  session_id TEXT,
  supersedes TEXT,
  superseded_by TEXT,
  refined_from TEXT,
  confidence REAL DEFAULT 0.5,
  created_at INTEGER DEFAULT (unixepoch() * 1000),
  updated_at INTEGER DEFAULT (unixepoch() * 1000),
  CHECK (confidence >= 0.0 AND confidence <= 1.0),
  CHECK (outcome IN ('SUCCESS', 'FAILED', 'PARTIAL') OR outcome IS NULL)
);
CREATE INDEX idx_decisions_topic ON decisions(topic);
CREATE INDEX idx_decisions_created_at ON decisions(created_at DESC);
CREATE TABLE schema_version (
  version INTEGER PRIMARY KEY,
  applied_at INTEGER,
  description TEXT
);
"""

# The columns later v1.x migrations added to ``decisions``, in order.
LATER_DECISION_COLUMNS = (
    "needs_validation INTEGER DEFAULT 0",
    "validation_attempts INTEGER DEFAULT 0",
    "last_validated_at INTEGER",
    "usage_count INTEGER DEFAULT 0",
    "trust_context TEXT",
    "usage_success INTEGER DEFAULT 0",
    "usage_failure INTEGER DEFAULT 0",
    "time_saved INTEGER DEFAULT 0",
    "evidence TEXT",
    "alternatives TEXT",
    "risks TEXT",
    "kind TEXT DEFAULT 'decision'",
    "status TEXT DEFAULT 'active' "
    "CHECK (status IN ('active', 'superseded', 'contradicted', 'stale'))",
    "summary TEXT",
)

LATER_SCHEMA = """
CREATE TABLE decision_edges (
  from_id TEXT NOT NULL,
  to_id TEXT NOT NULL,
  relationship TEXT NOT NULL,
  reason TEXT,
  weight REAL DEFAULT 1.0,
  created_at INTEGER,
  created_by TEXT DEFAULT 'user',
  approved_by_user INTEGER DEFAULT 1,
  decision_id TEXT,
  evidence TEXT,
  PRIMARY KEY (from_id, to_id, relationship),
  CHECK (relationship IN ('supersedes', 'refines', 'contradicts', 'builds_on', 'debates',
                          'synthesizes'))
);
CREATE INDEX idx_edges_to ON decision_edges(to_id);
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  project_path TEXT,
  rolling_summary TEXT,
  latest_exchange TEXT,
  action_count INTEGER DEFAULT 0,
  decision_count INTEGER DEFAULT 0,
  started_at INTEGER,
  last_active_at INTEGER,
  ended_at INTEGER
);
CREATE TABLE checkpoints (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  timestamp INTEGER NOT NULL,
  summary TEXT NOT NULL,
  open_files TEXT,
  next_steps TEXT,
  recent_conversation TEXT DEFAULT '[]',
  status TEXT DEFAULT 'active'
);
CREATE TABLE error_patterns (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  error_pattern TEXT NOT NULL,
  solution TEXT NOT NULL,
  last_seen INTEGER NOT NULL,
  first_seen INTEGER NOT NULL,
  embedding BLOB
);
CREATE TABLE embeddings (rowid INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
CREATE VIRTUAL TABLE decisions_fts USING fts5(
  topic, decision, reasoning, content='decisions', content_rowid='rowid'
);
"""

FTS_SHADOW_TABLES = ("decisions_fts_data", "decisions_fts_idx", "decisions_fts_docsize",
                     "decisions_fts_config")  # fmt: skip

# -- the story ---------------------------------------------------------------------------------

SECRET = "sk-ant-api03-Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0LmNbVcXz"
SECRET_2 = "sk-ant-api03-Pp0Oo9Ii8Uu7Yy6Tt5Rr4Ee3Ww2Qq1AaSsDdFf"

D_JWT = "decision_auth_strategy_1732230000000_k3f9"
D_SESSIONS = "decision_auth_strategy_1732500000000_m2p7"
D_TTL = "decision_session_ttl_1732600000000_q8w1"
D_POSTGRES = "decision_database_1732231000_x1y2"  # written when the default was in seconds
D_CACHE = "decision_cache_layer_1732700000000_c4c4"
D_LINT = "decision_linting_1732800000000_l1n7"
D_GHOST = "decision_message_queue_1700000000000_zzzz"  # referenced by an edge, never stored

SESSION_WITH_SUMMARY = "session_1732230000000_a1b2"
SESSION_BARE = "session_1732500000000_c3d4"
SESSION_EMPTY_SUMMARY = "session_1732600000000_e5f6"

JWT_FAILURE = "Refresh-token rotation raced across browser tabs and logged users out"
JWT_LIMITATION = "A JWT cannot be revoked before it expires"
SUPERSEDE_REASON = "JWT refresh rotation failed in production; server sessions are revocable"
TRUST_CONTEXT = {"source": {"file": "src/auth/jwt.ts", "line": 42}, "causality": "incident-17",
                 "verified": True}  # fmt: skip


def story_decisions() -> list[dict[str, Any]]:
    """The decisions of the JWT → FAILED → sessions story, as v1.0 rows."""
    return [
        {
            "id": D_JWT, "topic": "auth_strategy",
            "decision": "Use JWT access tokens with rotating refresh tokens",
            "reasoning": "Stateless verification scales horizontally without a session store",
            "outcome": "FAILED", "failure_reason": JWT_FAILURE, "limitation": JWT_LIMITATION,
            "duration_days": 12, "user_involvement": "approved", "session_id": SESSION_WITH_SUMMARY,
            "superseded_by": D_SESSIONS, "confidence": 0.8,
            "created_at": 1732230000000, "updated_at": 1732490000000,
            "needs_validation": 1, "validation_attempts": 2, "last_validated_at": 1732400000000,
            "usage_count": 7, "trust_context": json.dumps(TRUST_CONTEXT),
            "usage_success": 5, "usage_failure": 2, "time_saved": 3600,
            "evidence": json.dumps(["bench/jwt.txt: verify 0.2 ms", {"url": "https://rfc-editor.org/rfc/rfc7519"}]),
            "alternatives": json.dumps(["server-side sessions", "OAuth proxy"]),
            "risks": "refresh token theft from localStorage",
            "kind": "decision", "status": "superseded", "summary": "JWT for auth",
        },
        {
            "id": D_SESSIONS, "topic": "auth_strategy",
            "decision": "Use server-side sessions stored in Redis",
            "reasoning": "Sessions can be revoked at once and need no refresh dance",
            "outcome": "SUCCESS", "session_id": SESSION_BARE, "supersedes": D_JWT,
            "confidence": 0.9, "created_at": 1732500000000, "updated_at": 1732510000000,
            "usage_count": 2,
            "evidence": "load test 2024-11-25: p99 12 ms at 5k req/s",  # plain text, not JSON
            "alternatives": "sticky sessions on the load balancer",  # plain text, not JSON
            "risks": "Redis becomes a single point of failure",
            "kind": "decision", "status": "active",
        },
        {
            "id": D_TTL, "topic": "session_ttl",
            "decision": "Sessions expire after 14 idle days",
            "reasoning": f"Matches the key rotation policy; the old key {SECRET} leaked in a log",
            "outcome": "PARTIAL", "limitation": "Mobile clients need a longer TTL",
            "refined_from": json.dumps([D_SESSIONS, D_JWT]), "confidence": 0.6,
            "created_at": 1732600000000, "updated_at": 1732600000000,
            "trust_context": json.dumps({"note": f"api_key = {SECRET_2}"}),
            "kind": "decision", "status": "active",
        },
        {
            "id": D_POSTGRES, "topic": "database",
            "decision": "Use PostgreSQL 16 for the primary store",
            "reasoning": None,
            "confidence": 0.95, "created_at": 1732231000, "updated_at": 1732231500,  # seconds
            "kind": "decision", "status": "active",
        },
        {
            "id": D_CACHE, "topic": "cache_layer",
            "decision": "Cache rendered pages in Redis next to the sessions",
            "reasoning": "   ",  # only blanks: as good as no reasoning
            "confidence": 0.7, "created_at": 1732700000000, "updated_at": 1732700000000,
            "kind": "decision", "status": "active",
        },
        {
            "id": D_LINT, "topic": "linting",
            "decision": "Adopt Biome instead of ESLint + Prettier",
            "reasoning": "One fast tool instead of two slow ones",
            "outcome": "SUCCESS", "confidence": 0.75,
            "created_at": 1732800000, "updated_at": 1732800000000,  # created in seconds
            "kind": "decision", "status": "contradicted",
        },
    ]  # fmt: skip


def story_edges() -> list[dict[str, Any]]:
    """decision_edges rows: a supersede with reason, a NULL reason, an unapproved and a dangling one."""
    return [
        {"from_id": D_SESSIONS, "to_id": D_JWT, "relationship": "supersedes",
         "reason": SUPERSEDE_REASON, "weight": 1.0, "created_at": 1732500000000,
         "created_by": "user", "approved_by_user": 1, "decision_id": D_SESSIONS,
         "evidence": json.dumps(["incident-17 postmortem"])},
        {"from_id": D_CACHE, "to_id": D_SESSIONS, "relationship": "builds_on", "reason": None,
         "weight": 0.8, "created_at": 1732700000, "created_by": "user", "approved_by_user": 1},
        {"from_id": D_LINT, "to_id": D_POSTGRES, "relationship": "debates",
         "reason": "The model guessed these two decisions conflict", "weight": 0.3,
         "created_at": 1732800000000, "created_by": "llm", "approved_by_user": 0},
        {"from_id": D_CACHE, "to_id": D_GHOST, "relationship": "builds_on",
         "reason": "Cache invalidation rides on the message queue", "weight": 1.0,
         "created_at": 1732700000000, "created_by": "user", "approved_by_user": 1},
    ]  # fmt: skip


def story_checkpoints() -> list[dict[str, Any]]:
    """Checkpoints; the first was stamped in seconds by an old default."""
    return [
        {"id": 1, "timestamp": 1732240000, "summary": "Chasing the JWT refresh race",
         "open_files": json.dumps(["src/auth/jwt.ts", "src/auth/refresh.ts"]),
         "next_steps": "- reproduce with two tabs\n- add a mutex around refresh",
         "recent_conversation": "[]", "status": "complete"},
        {"id": 2, "timestamp": 1732510000000, "summary": "Sessions are live in production",
         "open_files": json.dumps(["src/auth/session.ts"]),
         "next_steps": "1. remove the jwt library\n2. update the auth docs",
         "recent_conversation": json.dumps([{"role": "user", "content": "ship it"}]),
         "status": "active"},
        {"id": 3, "timestamp": 1732610000000, "summary": "TTL tuning paused",
         "open_files": None, "next_steps": None, "status": "active"},
    ]  # fmt: skip


def story_sessions() -> list[dict[str, Any]]:
    """One session with a rolling summary, two bookkeeping rows without one."""
    return [
        {"id": SESSION_WITH_SUMMARY, "project_path": "/home/dev/shop",
         "rolling_summary": "Chose JWT for auth, then hit the refresh race across tabs",
         "latest_exchange": "user: why are people logged out?", "action_count": 14,
         "decision_count": 1, "started_at": 1732230000000, "last_active_at": 1732240000000,
         "ended_at": 1732250000000},
        {"id": SESSION_BARE, "project_path": "/home/dev/shop", "rolling_summary": None,
         "action_count": 3, "decision_count": 1, "started_at": 1732500000,
         "last_active_at": 1732500600},
        {"id": SESSION_EMPTY_SUMMARY, "project_path": "/home/dev/shop", "rolling_summary": "",
         "action_count": 0, "decision_count": 0, "started_at": 1732600000000},
    ]  # fmt: skip


EMBEDDING_BLOB = struct.pack("<4f", 0.25, -0.5, 0.75, 1.0)


def story_error_patterns() -> list[dict[str, Any]]:
    """Error patterns; the first carries an embedding BLOB, the second a leaked key."""
    return [
        {"id": 1, "error_pattern": "TypeError: Cannot read properties of undefined (reading 'exp')",
         "solution": "Check the token is present before decoding it",
         "last_seen": 1732300000000, "first_seen": 1732235000, "embedding": EMBEDDING_BLOB},
        {"id": 2, "error_pattern": "ECONNREFUSED 127.0.0.1:6379",
         "solution": f"Start Redis; the CI job needs ANTHROPIC_KEY {SECRET_2}",
         "last_seen": 1732505000000, "first_seen": 1732505000000, "embedding": None},
    ]  # fmt: skip


def story_schema_versions() -> list[dict[str, Any]]:
    """schema_version bookkeeping rows (the first written in seconds)."""
    return [
        {"version": 1, "applied_at": 1732000000, "description": "Initial schema"},
        {"version": 2, "applied_at": 1732100000000, "description": "Add validation tracking"},
        {"version": 3, "applied_at": 1732150000000, "description": "Add decision edges"},
        {"version": 4, "applied_at": 1732200000000, "description": "Add evidence, kind, status"},
    ]


# -- synthetic decisions -----------------------------------------------------------------------


def synthetic_rows(
    n: int, *, chain_length: int = 4
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``n`` decisions in supersede chains of ``chain_length`` (one chain per topic), and edges.

    Every later decision of a chain supersedes the one before it through the ``supersedes`` /
    ``superseded_by`` columns; in every other chain the step is also a ``decision_edges`` row
    with a reason. Every tenth decision was stamped in seconds.
    """
    base = 1733000000000
    ids = [
        f"decision_synthetic_topic_{i // chain_length}_{base + i * 1000}_s{i:04d}" for i in range(n)
    ]
    decisions: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    for i, memory_id in enumerate(ids):
        chain, pos = divmod(i, chain_length)
        created = base + i * 1000
        last_of_chain = pos == chain_length - 1 or i == n - 1
        decisions.append({
            "id": memory_id, "topic": f"synthetic_topic_{chain}",
            "decision": f"Synthetic choice {pos} for topic {chain}",
            "reasoning": f"Step {pos} of chain {chain}" if i % 7 else None,
            "outcome": ("SUCCESS", "FAILED", "PARTIAL", None)[i % 4],
            "failure_reason": "did not scale" if i % 4 == 1 else None,
            "supersedes": ids[i - 1] if pos else None,
            "superseded_by": None if last_of_chain else ids[i + 1],
            "confidence": (i % 10) / 10,
            "created_at": created // 1000 if i % 10 == 0 else created,
            "updated_at": created,
            "usage_count": i % 5,
            "status": "active" if last_of_chain else "superseded",
        })  # fmt: skip
        if pos and chain % 2 == 0:
            edges.append({
                "from_id": memory_id, "to_id": ids[i - 1], "relationship": "supersedes",
                "reason": f"chain {chain}: step {pos} replaces step {pos - 1}",
                "created_at": created, "created_by": "user", "approved_by_user": 1,
            })  # fmt: skip
    return decisions, edges


# -- the builder -------------------------------------------------------------------------------


@dataclass
class V1Database:
    """A v1.0 database on disk and every row written to it, by table."""

    path: Path
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def decisions(self) -> list[dict[str, Any]]:
        return self.rows.get("decisions", [])

    @property
    def edges(self) -> list[dict[str, Any]]:
        return self.rows.get("decision_edges", [])

    def decision(self, memory_id: str) -> dict[str, Any]:
        """The v1 row of one decision."""
        return next(d for d in self.decisions if d["id"] == memory_id)


def _insert(conn: sqlite3.Connection, table: str, rows: list[dict[str, Any]]) -> None:
    for row in rows:
        names = list(row)
        conn.execute(
            f'INSERT INTO "{table}" ({", ".join(names)}) VALUES ({", ".join("?" * len(names))})',
            [row[n] for n in names],
        )


def build_v1_db(
    path: Path | str,
    *,
    story: bool = True,
    synthetic: int = 0,
    chain_length: int = 4,
    decisions: list[dict[str, Any]] | None = None,
    edges: list[dict[str, Any]] | None = None,
    checkpoints: list[dict[str, Any]] | None = None,
    sessions: list[dict[str, Any]] | None = None,
    error_patterns: list[dict[str, Any]] | None = None,
    embeddings: bool = True,
    base_only: bool = False,
) -> V1Database:
    """Create a v1.0 database at ``path`` (which must not exist) and fill it.

    With ``story`` (the default) it holds the story rows of this module; ``synthetic`` adds that
    many generated decisions in supersede chains. The keyword lists add rows of their own to the
    matching tables (each row is a dict of column → value; omitted columns take their default).
    ``base_only`` stops at the first v1.0 migration: ``decisions`` without the later columns and
    ``schema_version``, nothing else (give ``story=False`` and base-column ``decisions`` then).
    """
    path = Path(path)
    if path.exists():
        raise FileExistsError(path)
    rows: dict[str, list[dict[str, Any]]] = {
        "decisions": [], "decision_edges": [], "checkpoints": [], "sessions": [],
        "error_patterns": [], "embeddings": [], "schema_version": [],
    }  # fmt: skip
    if story:
        rows["decisions"] += story_decisions()
        rows["decision_edges"] += story_edges()
        rows["checkpoints"] += story_checkpoints()
        rows["sessions"] += story_sessions()
        rows["error_patterns"] += story_error_patterns()
        rows["schema_version"] += story_schema_versions()
        if embeddings:
            rows["embeddings"] += [{"rowid": 1, "embedding": EMBEDDING_BLOB}]
    if synthetic:
        more_decisions, more_edges = synthetic_rows(synthetic, chain_length=chain_length)
        rows["decisions"] += more_decisions
        rows["decision_edges"] += more_edges
    rows["decisions"] += decisions or []
    rows["decision_edges"] += edges or []
    rows["checkpoints"] += checkpoints or []
    rows["sessions"] += sessions or []
    rows["error_patterns"] += error_patterns or []

    with closing(sqlite3.connect(path)) as conn:
        conn.executescript(BASE_SCHEMA)
        if not base_only:
            for column in LATER_DECISION_COLUMNS:
                conn.execute(f"ALTER TABLE decisions ADD COLUMN {column}")
            conn.executescript(LATER_SCHEMA)
        with conn:
            for table, table_rows in rows.items():
                if table_rows:
                    _insert(conn, table, table_rows)
            if not base_only:
                conn.execute("INSERT INTO decisions_fts(decisions_fts) VALUES ('rebuild')")
    return V1Database(path, rows)


def build_sqlite_without_decisions(path: Path | str) -> Path:
    """An SQLite file that is not a MAMA v1.0 database (it has no ``decisions`` table)."""
    path = Path(path)
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("INSERT INTO notes(body) VALUES ('hello')")
    return path


def corrupt_table(path: Path | str, table: str) -> None:
    """Overwrite the root page of ``table`` with garbage, leaving the schema page readable."""
    path = Path(path)
    with closing(sqlite3.connect(path)) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()[0]
    assert root > 1, "the table's root page must not be the schema page"
    with path.open("r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\xa5" * page_size)
