"""Rebuilding what the memories derive, when only that is damaged (``mama doctor --repair``).

A damaged table cannot be dropped in place: dropping it reads its pages, and SQLite stops at
the damaged one. So the kept tables (:func:`~.diagnosis.part_of` is None: the memories, the
links and the rest) are copied row by row, read without their indexes, into a new database
that climbs the same ladder to the same step; there the full-text index is built from the
memories and every memory is queued for its vector. Then the damaged file is set aside
(``damaged/``, kept) and the new one is put in its place through SQLite's backup API, so
processes that have it open see it (:func:`~.backup.restore_file`). The vectors are embedded
afterwards by the caller, as ``mama reindex`` does (``services.indexing.reindex``): storage
runs no model. Imports: standard library, apsw, leaves.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from ..bootstrap.launcher import mama_command
from ..errors import MamaError
from ..home import create_private
from .backup import restore_file, set_aside
from .connection import connect
from .diagnosis import part_of
from .integrity import file_identity, quick_check
from .migrations import migrate, user_version
from .salvage import Gap, copy_readable
from .text import fulltext_row

_KEPT_LAST = "meta"
_READ_ONLY = (
    apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
)  # copied after the rest: the triggers of the copies write into it


@dataclass(frozen=True)
class Rebuilt:
    """What a rebuild kept, and where the damaged file went; a salvage's ``gaps`` (the rows
    it could not read) and ``dropped`` (rows left without the memory they belong to)."""

    memories: int
    links: int
    aside: Path
    in_place: bool  # False: the file was replaced, running processes must reopen it
    gaps: tuple[Gap, ...] = ()
    dropped: int = 0


def rebuild(db: Path, *, embedding_dim: int, salvage: bool = False) -> Rebuilt:
    """Rebuild ``db``'s derived tables from its memories; every memory and link is kept.

    ``embedding_dim`` sizes the vector table when the store records no dimension. Raises
    MamaError, nothing changed, when a kept table cannot be read to its end (the memories
    themselves are damaged: only a backup helps), the new database does not check sound, or
    the file changed while it was copied (a save would be lost: run it again). ``salvage``:
    the kept tables are read as far as they can be (:mod:`.salvage`), what lost the memory it
    belongs to is dropped, and the rest is kept — for damage no backup holds.
    """
    fresh = db.with_name(f".{db.name}.rebuilding")
    _remove(fresh)
    create_private(fresh)
    before = _written(db)
    try:
        conn = connect(fresh)
        try:
            memories, links, gaps, dropped = _fill(conn, db, embedding_dim, salvage)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            conn.close()
        # A session that had not met the damage may have saved meanwhile: its save is not in
        # the copy, and putting the copy in place would lose it.
        if _written(db) != before:
            raise MamaError(
                f"{db} changed while it was being rebuilt (a session saved into it): nothing "
                f"was replaced; run `{mama_command()} doctor --repair` again"
            )
        aside = set_aside(db)
        in_place = restore_file(db, fresh)
    finally:
        _remove(fresh)
    return Rebuilt(memories, links, aside, in_place, tuple(gaps), dropped)


def _written(db: Path) -> tuple[int, ...]:
    """What a commit into ``db`` changes: the file, or its write-ahead log once it holds
    frames (an empty log is none: opening the file read-only may create it)."""
    identity = file_identity(db)
    return identity[:3] + (identity[3:] if identity[4] else (0, 0, 0))


def _fill(
    conn: apsw.Connection, db: Path, embedding_dim: int, salvage: bool
) -> tuple[int, int, list[Gap], int]:
    """Copy ``db``'s kept tables into ``conn``'s empty database and derive the rest there;
    the memories and links counted in both (a salvage: in the copy), the stretches a salvage
    could not read, and the rows it dropped."""
    source = f"file:{urllib.parse.quote(str(db))}?mode=ro"
    try:
        conn.execute("ATTACH DATABASE ? AS damaged", (source,))
        version = int(conn.execute("PRAGMA damaged.user_version").fetchall()[0][0])  # type: ignore[arg-type]
        dim = _recorded_dim(conn) or embedding_dim
        conn.execute("DETACH DATABASE damaged")  # the ladder's names must all mean main
        migrate(conn, embedding_dim=dim, upto=version)
        conn.execute("ATTACH DATABASE ? AS damaged", (source,))
        conn.execute("PRAGMA foreign_keys = OFF")  # rows arrive table by table
        gaps: list[Gap] = []
        dropped = 0
        # A salvage reads through a connection of its own: a read that meets damage inside
        # this write transaction would fail every later write of it.
        reader = apsw.Connection(source, flags=_READ_ONLY) if salvage else None
        try:
            with _transaction(conn):
                for table in _kept(conn):
                    if reader is not None:
                        gaps += _copy_readable(conn, reader, table)
                    else:
                        _copy(conn, table)
                if salvage:
                    dropped = _drop_orphans(conn)
                _derive(conn)
        finally:
            if reader is not None:
                reader.close()
        counts = (_count(conn, "main", "memories"), _count(conn, "main", "memory_links"))
        if not salvage and counts != (
            _count(conn, "damaged", "memories"),
            _count(conn, "damaged", "memory_links"),
        ):
            raise MamaError(f"the rebuilt copy of {db} lost rows; {db} is left as it is")
    except apsw.Error as exc:
        if salvage:
            raise MamaError(
                f"nothing of {db} could be salvaged ({exc}): SQLite cannot read the list of its "
                "tables. A backup can bring the memories back (`"
                f"{mama_command()} doctor` lists them), or a page-level recovery of a copy "
                "(the sqlite3 shell's `.recover`); the file is left as it is"
            ) from exc
        raise MamaError(
            f"{db} could not be rebuilt from its memories ({exc}): the memories or links "
            "themselves cannot be read, so only a backup can bring them back "
            f"(`{mama_command()} doctor` lists them), or `{mama_command()} doctor --salvage` "
            "keeps every row SQLite can still read; the file is left as it is"
        ) from exc
    finally:
        if conn.execute("SELECT 1 FROM pragma_database_list WHERE name = 'damaged'").fetchall():
            conn.execute("DETACH DATABASE damaged")
    conn.execute("PRAGMA foreign_keys = ON")
    if problems := quick_check(conn, limit=3):
        raise MamaError(f"the rebuilt copy of {db} does not check sound ({problems[0]})")
    if user_version(conn) != version:
        raise MamaError(f"the rebuilt copy of {db} is at another schema step")
    return (*counts, gaps, dropped)


def _recorded_dim(conn: apsw.Connection) -> int:
    if not _has(conn, "damaged", "meta"):
        return 0
    rows = conn.execute("SELECT value FROM damaged.meta WHERE key = 'embedding_dim'").fetchall()
    return int(str(rows[0][0])) if rows else 0


def _kept(conn: apsw.Connection) -> list[str]:
    """The ordinary tables of the damaged database the memories do not rebuild, meta last."""
    rows = conn.execute(
        "SELECT name FROM damaged.sqlite_schema WHERE type = 'table' "
        "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' AND name NOT LIKE 'sqlite%'"
    ).fetchall()
    names = [str(n) for (n,) in rows if part_of(str(n)) is None]
    return sorted(names, key=lambda n: n == _KEPT_LAST)


def _copy(conn: apsw.Connection, table: str) -> None:
    """Every row of one kept table, read without its indexes (they may be what is damaged)."""
    wanted = _columns(conn, "main", table)
    columns = [c for c in wanted if c in set(_columns(conn, "damaged", table))]
    if not columns:
        raise MamaError(f"the table {table} of the damaged database has no column MAMA knows")
    listed = ", ".join(f'"{c}"' for c in columns)
    quoted = table.replace('"', '""')
    conn.execute(
        f'INSERT OR REPLACE INTO main."{quoted}"({listed}) '
        f'SELECT {listed} FROM damaged."{quoted}" NOT INDEXED'
    )


def _copy_readable(conn: apsw.Connection, reader: apsw.Connection, table: str) -> list[Gap]:
    """A salvage's copy of one kept table: every row ``reader`` can read of it; the stretches
    it cannot."""
    present = set(_columns(reader, "main", table))
    columns = [c for c in _columns(conn, "main", table) if c in present]
    if not columns:
        return [Gap(table, None, None)]
    without = reader.execute(
        "SELECT sql LIKE '%WITHOUT ROWID%' FROM sqlite_schema WHERE name = ?", (table,)
    ).fetchall()
    rowids = not (without and without[0][0])
    return copy_readable(reader, conn, table, columns, rowids=rowids)[1]


def _drop_orphans(conn: apsw.Connection) -> int:
    """Delete the rows whose memory (or link) a salvage lost, until none is left without its
    parent (a link's tags go with it); how many."""
    tables = [
        str(name)
        for (name,) in conn.execute(
            "SELECT name FROM main.sqlite_schema WHERE type = 'table' "
            "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' AND name NOT LIKE 'sqlite%'"
        ).fetchall()
    ]
    keys = [
        (table, str(parent), str(column), str(to or "rowid"))
        for table in tables
        for parent, column, to in conn.execute(
            'SELECT "table", "from", "to" FROM pragma_foreign_key_list(?, \'main\')', (table,)
        ).fetchall()
    ]
    dropped, more = 0, True
    while more:
        more = False
        for table, parent, column, to in keys:
            conn.execute(
                f'DELETE FROM main."{table}" WHERE "{column}" IS NOT NULL '
                f'AND "{column}" NOT IN (SELECT "{to}" FROM main."{parent}")'
            )
            if changed := conn.changes():
                dropped, more = dropped + changed, True
    return dropped


def _derive(conn: apsw.Connection) -> None:
    """Build what the memories derive: the full-text rows, the embedding queue, fresh logs."""
    rows = conn.execute("SELECT seq, topic, content, reasoning, tags FROM main.memories")
    conn.executemany(
        "INSERT INTO main.memories_fts(rowid, topic, content, reasoning) VALUES (?, ?, ?, ?)",
        [
            (seq, *fulltext_row(str(topic), str(content), _reasoning(reasoning), _tags(tags)))
            for seq, topic, content, reasoning, tags in rows.fetchall()
        ],
    )
    if _has(conn, "main", "embedding_queue"):
        conn.execute("INSERT INTO main.embedding_queue(seq) SELECT seq FROM main.memories")
        # In-memory vector indexes reload: the epoch takes the time, past any earlier value.
        conn.execute(
            "UPDATE main.meta SET value = max(CAST(value AS INTEGER) + 1, ?) "
            "WHERE key = 'vectors_epoch'",
            (int(time.time() * 1000),),
        )
    if _has(conn, "main", "rank_log"):  # the copies' triggers logged every memory
        conn.execute("DELETE FROM main.rank_log")
    conn.execute(
        "UPDATE main.meta SET value = lower(hex(randomblob(8))) "
        "WHERE key IN ('rank_epoch', 'text_version')"
    )


def _reasoning(raw: object) -> dict[str, Any]:
    value = _loaded(raw)
    return value if isinstance(value, dict) else {}


def _tags(raw: object) -> list[str]:
    value = _loaded(raw)
    return [str(tag) for tag in value] if isinstance(value, list) else []


def _loaded(raw: object) -> Any:
    """A JSON column's value (the schema checks it is JSON; None if not, all the same)."""
    try:
        return json.loads(str(raw))
    except ValueError:
        return None


def _columns(conn: apsw.Connection, schema: str, table: str) -> list[str]:
    rows = conn.execute("SELECT name FROM pragma_table_info(?, ?)", (table, schema)).fetchall()
    return [str(name) for (name,) in rows]


def _has(conn: apsw.Connection, schema: str, table: str) -> bool:
    return bool(_columns(conn, schema, table))


def _count(conn: apsw.Connection, schema: str, table: str) -> int:
    if not _has(conn, schema, table):
        return 0
    return int(conn.execute(f"SELECT count(*) FROM {schema}.{table} NOT INDEXED").fetchall()[0][0])  # type: ignore[arg-type]


@contextmanager
def _transaction(conn: apsw.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back when the block raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _remove(path: Path) -> None:
    for leftover in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)
