"""The import ledger and the archive of source rows that ``mama import`` keeps.

Every import is recorded in ``imports`` (source, backup, start time, per-table counts); source
rows that have no memory or link form are kept verbatim in ``legacy_rows``. Writes run inside
the caller's transaction.
"""

from __future__ import annotations

import json
from pathlib import Path

from .sql import now_ms
from .store import Store


def record_import(store: Store, source: Path, backup: Path) -> int:
    """Record an import of ``source`` starting now, with the backup taken before it; its id."""
    store.conn.execute(
        "INSERT INTO imports(source, backup, started_at) VALUES (?, ?, ?)",
        (str(source), str(backup), now_ms()),
    )
    return int(store.conn.last_insert_rowid())


def record_counts(store: Store, import_id: int, counts: dict[str, dict[str, int]]) -> None:
    """Store the verified per-table counts of import ``import_id``."""
    store.conn.execute(
        "UPDATE imports SET counts = ? WHERE id = ?", (json.dumps(counts), import_id)
    )


def last_import(store: Store) -> tuple[Path, int] | None:
    """(backup path, start time in ms) of the most recent import, or None if there was none."""
    rows = store.conn.execute(
        "SELECT backup, started_at FROM imports ORDER BY id DESC LIMIT 1"
    ).fetchall()
    if not rows:
        return None
    return Path(str(rows[0][0])), int(rows[0][1])  # type: ignore[arg-type]


def changed_since(store: Store, at: int) -> int:
    """How many memories were created or updated after ``at`` (ms)."""
    value = store.conn.execute(
        "SELECT count(*) FROM memories WHERE created_at > ? OR updated_at > ?", (at, at)
    ).fetchall()[0][0]
    return int(value)  # type: ignore[arg-type]


def keep_row(store: Store, import_id: int, label: str, row: str) -> bool:
    """Archive the JSON text ``row`` under ``label`` unless that very row is kept already.

    Returns True when the row was new (and is now kept), False when it was already present.
    """
    seen = store.conn.execute(
        "SELECT 1 FROM legacy_rows WHERE source_table = ? AND row = ? LIMIT 1", (label, row)
    ).fetchall()
    if seen:
        return False
    store.conn.execute(
        "INSERT INTO legacy_rows(import_id, source_table, row) VALUES (?, ?, ?)",
        (import_id, label, row),
    )
    return True
