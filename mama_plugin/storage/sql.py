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


# Where memories are read from: every project (None), one project, or several (a project and
# the global scope it inherits, :data:`mama_plugin.project.GLOBAL`).
Scope = str | tuple[str, ...] | None


def projects_in(project: str | tuple[str, ...]) -> tuple[str, ...]:
    """The project keys of a scope that names some."""
    return (project,) if isinstance(project, str) else project


def scope(project: Scope, type: str | None, *, alias: str = "") -> tuple[str, tuple[Any, ...]]:
    """A WHERE clause (or "") and its parameters for memories of ``project`` and ``type``."""
    prefix = alias + "." if alias else ""
    clauses: list[str] = []
    params: list[Any] = []
    if project is not None:
        keys = projects_in(project)
        marks = "?" if len(keys) == 1 else "(" + ", ".join("?" * len(keys)) + ")"
        clauses.append(f"{prefix}project {'=' if len(keys) == 1 else 'IN'} {marks}")
        params.extend(keys)
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
