"""Small pieces of SQL shared by the store's parts: column lists, scoping, the clock."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import apsw

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


CHUNK = 900  # well under SQLite's limit on bound variables per statement


def select_in(conn: apsw.Connection, sql: str, values: Iterable[Any], *extra: Any) -> list[Any]:
    """Run ``sql`` (with ``{}`` where the ``IN`` list goes) over ``values`` in chunks.

    ``extra`` parameters are bound after each chunk. Duplicates are dropped; order is not kept.
    """
    wanted = list(dict.fromkeys(values))
    rows: list[Any] = []
    for start in range(0, len(wanted), CHUNK):
        chunk = wanted[start : start + CHUNK]
        rows += conn.execute(sql.format(",".join("?" * len(chunk))), (*chunk, *extra)).fetchall()
    return rows
