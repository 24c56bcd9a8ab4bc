"""``mama import``: back up, import in one transaction, verify nothing was lost, or roll back."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import LegacyImportError
from ..storage import Store
from ..storage.archive import changed_since, last_import, record_counts, record_import
from ..storage.backup import back_up, restore
from .dump import import_dump
from .result import LegacyResult
from .v1 import import_v1

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
    backup = back_up(store, "pre-import")
    started = time.perf_counter()
    with store.transaction():
        import_id = record_import(store, source.resolve(), backup)
        if fmt == "mama-v1":
            result = import_v1(store, source, project, import_id)
        else:
            result = import_dump(store, payload)
        counts = _verified(result)
        record_counts(store, import_id, counts)
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
    last = last_import(store)
    if last is None:
        raise LegacyImportError("nothing to roll back: no import is recorded in this database")
    backup, started = last
    if not backup.is_file():
        raise LegacyImportError(f"the backup {backup} is missing; it cannot be restored")
    later = changed_since(store, started)
    if later and not force:
        raise LegacyImportError(
            f"{later} memories were saved or changed after that import and would be lost; "
            "run `mama export -o keep.json` first, then `mama import --rollback --force`"
        )
    back_up(store, "pre-rollback")
    restore(store, backup)
    return backup
