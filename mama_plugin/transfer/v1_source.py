"""Reading a MAMA v1.0 (JavaScript) database: its tables, its rows and its column values.

The source is opened read-only; a damaged or foreign file becomes a LegacyImportError that
names it. Values are normalised the way v1.0 wrote them: JSON or plain text in the same
column, timestamps in milliseconds or (from old defaults) seconds, confidences as fractions
or percentages.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import apsw

from ..errors import LegacyImportError


def open_source(source: Path) -> tuple[apsw.Connection, dict[str, str]]:
    """Open the v1.0 database read-only; return it with its tables (name → CREATE statement)."""
    try:
        src = apsw.Connection(
            f"file:{source}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
        )
        rows = src.execute(
            "SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table'"
        ).fetchall()
    except apsw.Error as exc:
        raise LegacyImportError(f"cannot read {source} as an SQLite database: {exc}") from exc
    return src, {str(name): str(sql) for name, sql in rows}


def read(src: apsw.Connection, sql: str) -> list[tuple[Any, ...]]:
    """Run a query on the source; a damaged source becomes an error that names it."""
    try:
        return list(src.execute(sql).fetchall())
    except apsw.Error as exc:
        raise LegacyImportError(
            f"cannot read {src.filename} ({exc}); nothing was imported"
        ) from exc


def rows(src: apsw.Connection, table: str) -> list[dict[str, Any]]:
    """Every row of ``table`` as a dict of column name → value."""
    # Name the columns up front: apsw cannot describe a statement that has run to completion.
    quoted = table.replace('"', '""')
    names = [str(r[1]) for r in read(src, f'PRAGMA table_info("{quoted}")')]
    if not names:
        return []
    columns = ", ".join('"' + n.replace('"', '""') + '"' for n in names)
    found = read(src, f'SELECT {columns} FROM "{quoted}"')
    return [dict(zip(names, row, strict=True)) for row in found]


def ms(value: Any) -> int | None:
    """A v1.0 timestamp in milliseconds; values too small to be milliseconds are seconds."""
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number * 1000) if number < 1e11 else int(number)


def _loads(value: Any) -> Any:
    """Parse a JSON column, keeping plain text as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def as_list(value: Any) -> list[Any]:
    """A JSON or plain-text column as a list (empty for nothing, one item for a scalar)."""
    parsed = _loads(value)
    if parsed is None or parsed == "":
        return []
    return parsed if isinstance(parsed, list) else [parsed]


def as_text(item: Any) -> str:
    """A list item as text: strings as they are, anything else as JSON."""
    return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)


def jsonable(value: Any) -> Any:
    """A column value ready for JSON: bytes as base64, JSON text parsed."""
    if isinstance(value, bytes):
        return {"base64": base64.b64encode(value).decode("ascii")}
    return _loads(value)


def confidence(value: Any, default: float = 0.5) -> float:
    """A confidence in [0, 1]; a value over 1 (up to 100) is a percentage."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    if number > 1.0 and number <= 100.0:
        number /= 100.0  # a percentage
    return min(1.0, max(0.0, number))


def steps(text: Any) -> list[dict[str, str]]:
    """A bulleted or numbered list of next steps as checkpoint steps."""
    lines = [
        re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", ln).strip() for ln in str(text or "").splitlines()
    ]
    return [{"step": ln, "priority": "MEDIUM", "context": ""} for ln in lines if ln]
