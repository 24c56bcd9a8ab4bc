"""Small pieces of SQL shared by the store's parts: column lists, scoping, the clock."""

from __future__ import annotations

import time
from typing import Any

from .records import LINK_COLUMNS, MEMORY_COLUMNS

SELECT_MEMORY = "SELECT " + ", ".join(MEMORY_COLUMNS) + " FROM memories"
SELECT_LINK = "SELECT " + ", ".join(LINK_COLUMNS) + " FROM memory_links"


def now_ms() -> int:
    """Milliseconds since the epoch, the store's one time unit."""
    return int(time.time() * 1000)


def scope(project: str | None, type: str | None, *, alias: str = "") -> tuple[str, tuple[Any, ...]]:
    prefix = alias + "." if alias else ""
    clauses, params = [], []
    if project is not None:
        clauses.append(f"{prefix}project = ?")
        params.append(project)
    if type is not None:
        clauses.append(f"{prefix}type = ?")
        params.append(type)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)
