"""``mama import``: back up, import in one transaction, verify nothing was lost, or roll back."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LegacyImportError
from .backup import backup_path, backup_to, restore_from
from .dump import import_dump
from .legacy import LegacyResult, import_v1
from .store import Store, now_ms

_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass
class ImportReport:
    """What an import did: source format, backup taken, per-table counts, time spent."""

    source: Path
    format: str
    backup: Path
    counts: dict[str, dict[str, int]]
    skipped: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form of the report."""
        return {
            "source": str(self.source),
            "format": self.format,
            "backup": str(self.backup),
            "counts": self.counts,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 4),
        }


def detect_format(path: Path) -> str:
    """``mama-v1`` for an SQLite file, ``mama-export`` for a JSON dump; else LegacyImportError."""
    try:
        with path.open("rb") as handle:
            head = handle.read(len(_SQLITE_MAGIC))
    except OSError as exc:
        raise LegacyImportError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if head == _SQLITE_MAGIC:
        return "mama-v1"
    if head.lstrip()[:1] == b"{":
        return "mama-export"
    raise LegacyImportError(f"{path} is neither a MAMA v1.0 SQLite database nor a MAMA JSON export")


def import_file(store: Store, source: Path, *, project: str) -> ImportReport:
    """Import ``source`` into ``store``: all rows arrive or none do; the backup stays either way."""
    source = source.expanduser()
    fmt = detect_format(source)
    payload: Any = None
    if fmt == "mama-export":
        try:
            payload = json.loads(source.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise LegacyImportError(f"{source} is not readable JSON: {exc}") from exc
        if not isinstance(payload, dict):
            raise LegacyImportError(f"{source} must hold a JSON object (a MAMA export)")
    backup = backup_to(store.conn, backup_path(store.path, "pre-import"))
    started = time.perf_counter()
    with store.transaction():
        store.conn.execute(
            "INSERT INTO imports(source, backup, started_at) VALUES (?, ?, ?)",
            (str(source.resolve()), str(backup), now_ms()),
        )
        import_id = store.conn.last_insert_rowid()
        if fmt == "mama-v1":
            result = import_v1(store, source, project, import_id)
        else:
            result = import_dump(store, payload)
        counts = _verified(result)
        store.conn.execute(
            "UPDATE imports SET counts = ? WHERE id = ?", (json.dumps(counts), import_id)
        )
    return ImportReport(
        source, fmt, backup, counts, dict(result.skipped), time.perf_counter() - started
    )


def _verified(result: LegacyResult) -> dict[str, dict[str, int]]:
    """Every source row must be imported, already present or archived: 0% loss."""
    counts = {table: dict(c) for table, c in result.counts.items()}
    for table, c in counts.items():
        accounted = sum(n for kind, n in c.items() if kind != "source")
        if accounted != c.get("source", 0):
            raise LegacyImportError(
                f"{table}: {c.get('source', 0)} source rows but {accounted} accounted for; "
                "the import was rolled back"
            )
    return counts


def rollback_last_import(store: Store, *, force: bool = False) -> Path:
    """Restore the backup taken before the most recent import; return its path.

    Memories saved or changed since that import would be lost with it: unless ``force``,
    that is refused with a count. The current state is backed up first either way.
    """
    rows = store.conn.execute(
        "SELECT backup, started_at FROM imports ORDER BY id DESC LIMIT 1"
    ).fetchall()
    if not rows:
        raise LegacyImportError("nothing to roll back: no import is recorded in this database")
    backup, started = Path(str(rows[0][0])), int(rows[0][1])  # type: ignore[arg-type]
    if not backup.is_file():
        raise LegacyImportError(f"the backup {backup} is missing; it cannot be restored")
    later = store.conn.execute(
        "SELECT count(*) FROM memories WHERE created_at > ? OR updated_at > ?", (started, started)
    ).fetchall()[0][0]
    if later and not force:
        raise LegacyImportError(
            f"{later} memories were saved or changed after that import and would be lost; "
            "run `mama export -o keep.json` first, then `mama import --rollback --force`"
        )
    backup_to(store.conn, backup_path(store.path, "pre-rollback"))
    epoch = int(store.meta("vectors_epoch") or 0)
    restore_from(store.conn, backup)
    # In-memory vector indexes must not trust the restored (older) vector log.
    store.set_meta("vectors_epoch", str(epoch + 1))
    with store.transaction():
        store.conn.execute("DELETE FROM vector_log")
    return backup
