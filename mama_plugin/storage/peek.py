"""A glance at what a project's memory holds, with the standard library's ``sqlite3`` alone.

The MCP front lists its first tools from it before anything else loads: opening the
:class:`~.store.Store` (apsw, sqlite-vec, the integrity walk, the repositories' imports) costs
tens of milliseconds a first ``tools/list`` cannot spare. Read-only, a short busy timeout,
nothing migrated or checked: the front's warm-up opens the store for real right after.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

PEEK_TIMEOUT_S = 0.05  # a writer's lock (rare for a reader in WAL mode) is not waited out


def kinds_present(db: Path, project: str, kinds: Iterable[str]) -> set[str]:
    """Which of the memory types ``kinds`` ``project`` has any memory of (one index probe each).

    Raises ``sqlite3.Error`` (or OSError) when the file cannot be read as a MAMA database:
    the caller decides what that means.
    """
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=PEEK_TIMEOUT_S)
    try:
        return {
            kind
            for kind in kinds
            if conn.execute(
                "SELECT EXISTS(SELECT 1 FROM memories WHERE project = ? AND type = ?)",
                (project, kind),
            ).fetchone()[0]
        }
    finally:
        conn.close()
