"""Copying what SQLite can still read of a damaged table (``mama doctor --salvage``).

When the memories themselves are damaged and no backup holds them, the rows on sound pages can
still be read: a damaged leaf loses the rows it holds, not the table. :func:`copy_readable`
reads a table in rowid order and, where a read meets damage, seeks past it — the smallest
start the b-tree can seek from again, found by doubling the jump and then halving it — so
the rows after a damaged page are read too. A table without rowids is read in its key order up
to its first damaged page. The rows are read through a connection of their own: within a
write transaction, a read that met damage fails every later write of it. :mod:`.repair`
copies the rows into a new database, as a rebuild does. Imports: standard library, apsw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import apsw

_FIRST = -(2**63)
_LAST = 2**63 - 1
_BATCH = 256


@dataclass(frozen=True)
class Gap:
    """Rows of ``table`` that could not be read: rowids after ``after`` and before ``before``
    (``before`` is None when nothing after the damage could be read; for a table without
    rowids, ``after`` and ``before`` are None: the rest of it)."""

    table: str
    after: int | None
    before: int | None

    def told(self) -> str:
        """The gap as a person reads it ("memories rows 41–79")."""
        if self.after is None and self.before is None:
            return f"{self.table}: the rows after its first damaged page"
        start = "the first" if self.after is None else str(self.after + 1)
        end = "the last" if self.before is None else str(self.before - 1)
        return f"{self.table} rows {start}–{end}"


def copy_readable(
    reader: apsw.Connection,
    writer: apsw.Connection,
    table: str,
    columns: list[str],
    *,
    rowids: bool,
) -> tuple[int, list[Gap]]:
    """Insert every row of ``table`` that ``reader`` can read into ``writer``'s (``columns``
    of both); how many rows, and the stretches that could not be read."""
    listed = ", ".join(f'"{c}"' for c in columns)
    quoted = table.replace('"', '""')
    marks = ", ".join("?" * len(columns))
    insert = f'INSERT OR REPLACE INTO main."{quoted}"({listed}) VALUES ({marks})'
    if not rowids:
        return _in_key_order(reader, writer, table, f'SELECT {listed} FROM "{quoted}"', insert)
    read = f'SELECT rowid, {listed} FROM "{quoted}" NOT INDEXED WHERE rowid > ? ORDER BY rowid'
    copied, last = 0, _FIRST
    gaps: list[Gap] = []
    while True:
        # A batch is read whole, then written; a batch that meets damage is read again a row
        # at a time up to it.
        rows = _read(reader, read, last, _BATCH) or _read(reader, read, last, 1)
        if rows is None:
            start = _next_start(reader, read, last)
            after = None if last == _FIRST else last
            if start is None:
                return copied, [*gaps, Gap(table, after, None)]
            gaps.append(Gap(table, after, _first_after(reader, read, start)))
            last = start
            continue
        if not rows:
            return copied, gaps
        writer.executemany(insert, [row[1:] for row in rows])
        last, copied = int(rows[-1][0]), copied + len(rows)


def _read(conn: apsw.Connection, read: str, after: int, n: int) -> list[tuple[Any, ...]] | None:
    """The next ``n`` rows after rowid ``after`` (fewer at the end); None when that meets damage."""
    try:
        return conn.execute(f"{read} LIMIT {n}", (after,)).fetchall()
    except apsw.Error:
        return None


def _in_key_order(
    reader: apsw.Connection, writer: apsw.Connection, table: str, read: str, insert: str
) -> tuple[int, list[Gap]]:
    """A table without rowids, read in its key order up to its first damaged page."""
    rows: list[tuple[Any, ...]] = []
    try:
        for row in reader.execute(read):
            rows.append(row)
    except apsw.Error:
        writer.executemany(insert, rows)
        return len(rows), [Gap(table, None, None)]
    writer.executemany(insert, rows)
    return len(rows), []


def _seeks(conn: apsw.Connection, read: str, start: int) -> bool:
    """Whether a read of the rows after ``start`` gets its first row whole (or finds none)
    without meeting damage: a damaged page of the tree, or of the row's own overflow."""
    try:
        conn.execute(f"{read} LIMIT 1", (start,)).fetchall()
    except apsw.Error:
        return False
    return True


def _next_start(conn: apsw.Connection, read: str, last: int) -> int | None:
    """The smallest start past ``last`` a read can seek from again, or None: the jump doubles
    until a seek succeeds, then halves back to the edge of the damage."""
    bad, jump = last, 1
    while True:
        good = min(last + jump, _LAST)
        if _seeks(conn, read, good):
            break
        if good == _LAST:
            return None
        bad, jump = good, jump * 2
    while good - bad > 1:
        middle = bad + (good - bad) // 2
        if _seeks(conn, read, middle):
            good = middle
        else:
            bad = middle
    return good


def _first_after(conn: apsw.Connection, read: str, start: int) -> int | None:
    rows = conn.execute(f"{read} LIMIT 1", (start,)).fetchall()
    return int(rows[0][0]) if rows else None  # type: ignore[arg-type]
