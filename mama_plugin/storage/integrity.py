"""Is the database file sound? The checks, and the cursor that notices damage while reading.

SQLite reports a damaged file as ``SQLITE_CORRUPT`` (any extended code: apsw raises
``CorruptError``) or ``SQLITE_NOTADB`` (``NotADBError``), only when a statement reaches a bad
page: a store can look healthy to the statements that miss it and take writes into a file that
is already broken. The checks here are what the store runs to say what is wrong before anything
is written (:mod:`.diagnosis` says which part is damaged); :class:`GuardedCursor` turns the
error of any statement into the store's :class:`~mama_plugin.errors.StoreDamaged`. Standard
library and apsw only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import apsw

DAMAGE = (apsw.CorruptError, apsw.NotADBError)
# Up to this size opening walks every b-tree (``structure_check``: 36-188 ms at 28 MB, 10k
# memories); above it, the header and schema read only. ``python -m benchmarks integrity``
# prints what each check costs (figures in docs/architecture.md).
QUICK_CHECK_BYTES = 32 * 1024 * 1024
HEADER = b"SQLite format 3\x00"


# sqlite-vec reports a damaged page of its tables as an ordinary SQL error of its own words
# ("Could not fetch vector data for 84, reading from blob failed", "chunks iter error"):
# such an error is damage only when the file then checks damaged (``Store._damaged``).
_VEC0_READ = re.compile(r"\bblob\b.*\b(failed|error)\b|blob for chunk|chunks iter error", re.I)


def is_damage(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite saying the file is damaged (not busy, full or misused)."""
    return isinstance(exc, DAMAGE)


def may_be_damage(exc: BaseException) -> bool:
    """Whether ``exc`` is damage, or sqlite-vec failing to read its tables (perhaps damage)."""
    return is_damage(exc) or (isinstance(exc, apsw.SQLError) and bool(_VEC0_READ.search(str(exc))))


def quick_check(conn: apsw.Connection, *, limit: int = 5) -> list[str]:
    """The problems ``PRAGMA quick_check`` finds (its first ``limit`` lines); [] when sound.

    O(size of the database): every page is read once, indexes are not compared with their
    tables (``integrity_check`` does that, several times slower).
    """
    return named_trees(conn, check_lines(conn, f"quick_check({int(limit)})"))


def table_checks(conn: apsw.Connection, *, limit: int = 5) -> dict[str, list[str]]:
    """The problems the b-tree walk finds, by table ({} when sound): raw lines (see below).

    Each ordinary table with its indexes is walked page by page, as quick_check does, but
    without evaluating CHECK constraints (a JSON parse per memory) or asking virtual tables
    to check themselves (FTS5 compares its index with its content): a third to a sixth of the
    cost, and still every page read, so a zeroed or overwritten page is found. Every table is
    walked even after one is found damaged (each keeps its first ``limit`` lines): what else
    is damaged decides whether the memories can rebuild it. A line naming a b-tree names it by
    its root page (``Tree 29 page 30 …``): :func:`named_trees` says which table that is.
    """
    tables = [
        str(row[0])
        for row in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' "
            "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'"
        ).fetchall()
    ]
    found: dict[str, list[str]] = {}
    conn.execute("PRAGMA ignore_check_constraints = ON")
    try:
        for table in tables:
            quoted = table.replace('"', '""')
            if lines := check_lines(conn, f'quick_check("{quoted}")'):
                found[table] = lines[:limit]
    finally:
        conn.execute("PRAGMA ignore_check_constraints = OFF")
    return found


def structure_check(conn: apsw.Connection, *, limit: int = 5) -> list[str]:
    """The problems the b-tree walk (:func:`table_checks`) finds, trees named; [] when sound."""
    lines = [line for found in table_checks(conn, limit=limit).values() for line in found]
    return named_trees(conn, lines[:limit])


def integrity_check(conn: apsw.Connection, *, limit: int = 20) -> list[str]:
    """The problems ``PRAGMA integrity_check`` finds (its first ``limit`` lines); [] when sound."""
    return named_trees(conn, check_lines(conn, f"integrity_check({int(limit)})"))


def check_lines(conn: apsw.Connection, pragma: str) -> list[str]:
    """The lines a check pragma reports ([] for "ok"), as SQLite words them.

    A check can report a few problems and then fail on a page it cannot step over: the lines
    it gave are kept, then the error's message.
    """
    rows: list[str] = []
    try:
        for row in conn.execute(f"PRAGMA {pragma}"):
            rows.append(str(row[0]))
    except DAMAGE as exc:
        rows.append(str(exc))
    # A row may hold several lines and start with "*** in database main ***".
    lines = [
        line.strip()
        for row in rows
        for line in row.splitlines()
        if line.strip() and not line.startswith("***")
    ]
    return [] if lines == ["ok"] else lines


def named_trees(conn: apsw.Connection, lines: list[str]) -> list[str]:
    """``lines`` as a person reads them: ``Tree 29 …`` becomes ``memory_vectors_… (tree 29) …``."""
    names = tree_names(conn) if any(TREE.match(line) for line in lines) else {}
    return [
        TREE.sub(lambda m: f"{names.get(int(m[1]), ('tree',))[0]} (tree {m[1]})", line, count=1)
        for line in lines
    ]


TREE = re.compile(r"^Tree (\d+)")


def tree_names(conn: apsw.Connection) -> dict[int, tuple[str, str, str]]:
    """Root page → (name, ``table`` or ``index``, the table it belongs to) of every b-tree."""
    try:
        rows = conn.execute(
            "SELECT rootpage, name, type, tbl_name FROM sqlite_schema WHERE rootpage > 0"
        ).fetchall()
    except apsw.Error:
        return {}
    return {int(root): (str(name), str(kind), str(table)) for root, name, kind, table in rows}  # type: ignore[arg-type]


def sanity_read(conn: apsw.Connection) -> None:
    """Read the header and the whole schema (cheap at any size); raises on a damaged file."""
    conn.execute("SELECT count(*), max(rootpage) FROM sqlite_schema").fetchall()
    conn.execute("PRAGMA user_version").fetchall()


def header_problem(path: Path) -> str | None:
    """What is wrong with the file's first 100 bytes or its length, or None.

    The header records the database's size in pages (valid when its change counter matches
    the "version valid for" field); a file shorter than that was cut off (a copy interrupted,
    a disk full). Only judged while the write-ahead log is empty: a checkpoint in progress
    writes page 1 before the pages that make the file longer.
    """
    try:
        with open(path, "rb") as handle:
            head = handle.read(100)
        size = os.path.getsize(path)
    except OSError as exc:
        return f"the file cannot be read: {exc.strerror or exc}"
    if not head:
        return None  # an empty file is a new database
    if len(head) < 100 or not head.startswith(HEADER):
        return (
            "the file does not start with an SQLite header "
            "(it is not a database, or its first page was overwritten)"
        )
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    counter, pages, valid_for = (int.from_bytes(head[i : i + 4], "big") for i in (24, 28, 92))
    if page_size < 512 or page_size & (page_size - 1):
        return f"the header gives an impossible page size ({page_size})"
    if counter == valid_for and pages and size < pages * page_size and not _wal_frames(path):
        return (
            f"the file is cut short: {size // page_size} of the {pages} pages its header "
            "records are there"
        )
    return None


def file_identity(path: Path) -> tuple[int, ...]:
    """What changes when the file is replaced or written (its log included)."""
    out: tuple[int, ...] = ()
    for name in (str(path), f"{path}-wal"):
        try:
            st = os.stat(name)
        except OSError:
            out += (0, 0, 0)
        else:
            out += (st.st_ino, st.st_size, st.st_mtime_ns)
    return out


def _wal_frames(path: Path) -> bool:
    try:
        return os.path.getsize(f"{path}-wal") > 0
    except OSError:
        return False


_CAUGHT = (*DAMAGE, apsw.SQLError)


class GuardedCursor(apsw.Cursor):
    """A cursor that hands damage errors (:func:`may_be_damage`) to ``on_damage``, which
    raises the store's error (or ``exc`` itself when the file checks sound).

    Install with :func:`guarded_cursor`. ``fetchall`` and ``fetchone`` stay in C; only an
    explicit ``for row in cursor`` goes through a Python generator.
    """

    @staticmethod
    def on_damage(exc: BaseException) -> NoReturn:
        raise exc

    def _met(self, exc: apsw.Error) -> NoReturn:
        if may_be_damage(exc):
            self.on_damage(exc)
        raise exc

    def execute(self, statements: str, bindings: Any = None, **kwargs: Any) -> apsw.Cursor:
        try:
            return super().execute(statements, bindings, **kwargs)
        except _CAUGHT as exc:
            self._met(exc)

    def executemany(self, statements: str, sequenceofbindings: Any, **kwargs: Any) -> apsw.Cursor:
        try:
            return super().executemany(statements, sequenceofbindings, **kwargs)
        except _CAUGHT as exc:
            self._met(exc)

    def fetchall(self) -> list[tuple[apsw.SQLiteValue, ...]]:
        try:
            return super().fetchall()
        except _CAUGHT as exc:
            self._met(exc)

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except _CAUGHT as exc:
            self._met(exc)

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        return self._rows()

    def _rows(self) -> Iterator[Any]:
        while True:
            try:
                row = apsw.Cursor.__next__(self)
            except StopIteration:
                return
            except _CAUGHT as exc:
                self._met(exc)
            yield row


def guarded_cursor(on_damage: Callable[[BaseException], NoReturn]) -> type[GuardedCursor]:
    """A cursor class for ``Connection.cursor_factory`` that calls ``on_damage`` on damage."""
    return type("StoreCursor", (GuardedCursor,), {"on_damage": staticmethod(on_damage)})
