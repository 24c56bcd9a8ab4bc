"""What is damaged, and whether the memories can rebuild it.

Part of the database is derived from the memories and can be built again from them: the
full-text index (FTS5's tables), the vectors (sqlite-vec's tables, the embedding queue, the
vector log, the vectors of memories' views), the logs in-memory copies follow (``rank_log``,
``sqlite_sequence``) and every index (built from its table). Damage confined to those is
*derived*: ``mama doctor --repair`` rebuilds them and keeps every memory and link
(:mod:`.repair`). Anything else — the memories, the links, the schema, the header — needs a
backup.

:func:`diagnose` runs the checks of :mod:`.integrity` on a connection and places what they
find; :func:`examine` does it for a file, read-only. Damage counts as derived only when every
problem is placed in a derived part *and* every other table reads to its last row without an
index (``NOT INDEXED``): a line SQLite words in a way not placed here counts against it.
Imports: standard library, apsw, leaves.
"""

from __future__ import annotations

import math
import re
import urllib.parse
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import apsw

from ..errors import MamaError
from .connection import load_sqlite_vec
from .integrity import (
    TREE,
    check_lines,
    header_problem,
    named_trees,
    table_checks,
    tree_names,
)

Depth = Literal["structure", "quick", "integrity"]

# The derived parts, as a person reads them, in the order they are told.
VECTORS = "the vectors (sqlite-vec)"
FULL_TEXT = "the full-text index (FTS5)"
INDEXES = "the indexes of its tables"
LOGS = "the change logs"
UNUSED = "pages no table uses"
PARTS = (VECTORS, FULL_TEXT, INDEXES, LOGS, UNUSED)
# The derived parts reads can do without: a store damaged there alone is read as usual and
# searched without them until it is repaired. Not the indexes: a query through a damaged
# index can answer wrong rows; not the change logs, which every read of a copy follows.
READ_WITHOUT = frozenset({VECTORS, FULL_TEXT, UNUSED})

_VECTOR_TABLES = frozenset({"embedding_queue", "vector_log", "text_vectors"})
_LOG_TABLES = frozenset({"rank_log", "sqlite_sequence"})
_INDEX_LINE = re.compile(r"(?:missing from|wrong # of entries in|non-unique entry in) index (\S+)")
_UNUSED_LINE = re.compile(r"^Page \d+(?::| is) never used")
_FTS_LINE = re.compile(r"\bfts5\b.*\bmemories_fts\b|\bmemories_fts\b.*\bfts5\b", re.I)
_UNREADABLE_VECTORS = "the vectors cannot be read through sqlite-vec"
_GARBLED_VECTORS = "a vector holds values no embedding model writes"
# A component no embedding holds: random bytes over a vector give NaN, infinities or huge
# exponents in most of its floats, a model's vectors components of order 1 (an unnormalised
# model's, of order 100 at most).
_LARGEST_COMPONENT = 1e6
# What a check appends when it stops on an error: it names no place of its own.
_STOPPED = frozenset({"database disk image is malformed", "file is not a database"})


@dataclass(frozen=True)
class Findings:
    """What the checks found: the problems as a person reads them, and where they are.

    ``derived`` names the derived parts damaged (:data:`PARTS`) when nothing else is; it is
    empty when the file is sound or when anything else is damaged too.
    """

    problems: list[str]
    derived: tuple[str, ...] = ()


def read_without(parts: tuple[str, ...]) -> bool:
    """Whether a store damaged in ``parts`` alone can still be read (:data:`READ_WITHOUT`)."""
    return bool(parts) and READ_WITHOUT.issuperset(parts)


def listed(parts: tuple[str, ...]) -> str:
    """Parts as a sentence names them: ``a``, ``a and b``, ``a, b and c``."""
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


def part_of(table: str) -> str | None:
    """The derived part the ordinary table ``table`` belongs to, or None for a kept table."""
    if table.startswith("memory_vectors_") or table in _VECTOR_TABLES:
        return VECTORS
    if table.startswith("memories_fts_"):
        return FULL_TEXT
    if table in _LOG_TABLES or table.startswith("sqlite_stat"):
        return LOGS
    return None


def diagnose(conn: apsw.Connection, *, limit: int = 3, depth: Depth = "structure") -> Findings:
    """Check the database behind ``conn`` and place what is found (read-only).

    ``structure`` walks every b-tree (:func:`~.integrity.table_checks`); ``quick`` adds
    ``PRAGMA quick_check`` when the walk finds nothing; ``integrity`` adds
    ``PRAGMA integrity_check`` (indexes against their tables, FTS5's own check) and a read of
    every vector through sqlite-vec. Raises what SQLite raises when the schema itself cannot
    be read.
    """
    by_table = table_checks(conn, limit=limit)
    whole: list[str] = []
    if not by_table and depth != "structure":
        whole = check_lines(conn, f"quick_check({int(limit)})")
        if not whole and depth == "integrity":
            whole = check_lines(conn, f"integrity_check({int(limit)})") or _vectors_read(conn)
    lines = [line for found in by_table.values() for line in found] + whole
    if not lines:
        return Findings([])
    return Findings(named_trees(conn, lines[: max(limit, 1)]), _placed(conn, by_table, whole))


def examine(path: Path, *, limit: int = 20, full: bool = False) -> Findings:
    """What is wrong with the database file at ``path`` (no problems: sound); read-only.

    The header, then the b-tree walk (fast, and it finds the common damage), then the full
    quick_check only when that found nothing; with ``full``, ``integrity_check`` and a read of
    the vectors too.
    """
    if problem := header_problem(path):
        return Findings([problem])
    # In a folder MAMA cannot write, a WAL database without its -shm file can be read only
    # as immutable: "attempt to write a readonly database" is not damage.
    immutable = f"file:{urllib.parse.quote(str(path))}?immutable=1"
    for name in (str(path), immutable):
        try:
            conn = apsw.Connection(name, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        except apsw.Error as exc:
            return Findings([str(exc)])
        try:
            return diagnose(conn, limit=limit, depth="integrity" if full else "quick")
        except (apsw.ReadOnlyError, apsw.CantOpenError) as exc:
            if name == immutable:
                return Findings([str(exc)])
        except apsw.Error as exc:
            return Findings([str(exc)])
        finally:
            conn.close()
    return Findings([])  # not reached: the immutable attempt returns


def check_file(path: Path, *, limit: int = 20, full: bool = False) -> list[str]:
    """The problems :func:`examine` finds in the file at ``path`` ([] when sound)."""
    return examine(path, limit=limit, full=full).problems


def _vectors_read(conn: apsw.Connection) -> list[str]:
    """Read every vector through sqlite-vec, as a search does; what failed, or [].

    sqlite-vec keeps its vectors in blobs a page check cannot judge, and reports a damaged
    one as its own error; random bytes over a blob with the page chain intact read as a
    vector all the same, of values no model writes (:func:`_garbled`). Nothing to read when
    the store has no vector table or sqlite-vec cannot be loaded.
    """
    present = conn.execute(
        "SELECT 1 FROM sqlite_schema WHERE name = 'memory_vectors' AND type = 'table'"
    ).fetchall()
    if not present:
        return []
    try:
        load_sqlite_vec(conn)
    except (apsw.Error, MamaError):
        return []
    try:
        for rowid, blob in conn.execute("SELECT rowid, embedding FROM memory_vectors"):
            if isinstance(blob, bytes) and _garbled(blob):
                return [f"{_GARBLED_VECTORS} (memory row {rowid}): random bytes over its page?"]
    except apsw.Error as exc:
        return [f"{_UNREADABLE_VECTORS}: {exc}"]
    return []


def _garbled(blob: bytes) -> bool:
    """Whether a float32 vector holds a NaN, an infinity or a component no model writes."""
    values = array("f")
    values.frombytes(blob[: len(blob) - len(blob) % 4])
    if not values:
        return False
    try:
        total = math.fsum(values)  # NaN or an infinity makes the sum one (or raises)
    except (ValueError, OverflowError):
        return True
    return (
        not math.isfinite(total)
        or max(values) > _LARGEST_COMPONENT
        or min(values) < -_LARGEST_COMPONENT
    )


def _placed(
    conn: apsw.Connection, by_table: dict[str, list[str]], whole: list[str]
) -> tuple[str, ...]:
    """The derived parts the problems are in, or () when any is elsewhere (or not placed)."""
    trees = tree_names(conn)
    found: set[str] = set()
    for table, lines in by_table.items():
        if (part := part_of(table)) is not None:
            found.add(part)  # the walk of a derived table: all it finds is in that part
            continue
        for line in lines:
            if (placed := _line_part(line, trees)) is None:
                return ()
            found.add(placed)
    for line in whole:
        if (placed := _line_part(line, trees)) is None:
            return ()
        found.add(placed)
    parts = tuple(part for part in PARTS if part in found)
    return parts if parts and _kept_tables_read(conn) else ()


def _line_part(line: str, trees: dict[int, tuple[str, str, str]]) -> str | None:
    """The derived part one raw line of a check is about; "" for a line that places nothing
    (the kept tables' read decides), None for one about kept data or not understood."""
    if tree := TREE.match(line):
        name, kind, table = trees.get(int(tree[1]), ("", "", ""))
        if not name:
            return None  # the schema's own tree, or a root page the schema does not name
        return part_of(table) or (INDEXES if kind == "index" else None)
    if index := _INDEX_LINE.search(line):
        owner = next((t for n, k, t in trees.values() if n == index[1] and k == "index"), "")
        return (part_of(owner) or INDEXES) if owner else None
    if _FTS_LINE.search(line):
        return FULL_TEXT
    if line.startswith((_UNREADABLE_VECTORS, _GARBLED_VECTORS)):
        return VECTORS
    if _UNUSED_LINE.match(line):
        return UNUSED
    return "" if line in _STOPPED else None


def _kept_tables_read(conn: apsw.Connection) -> bool:
    """Whether every table that is not derived reads to its last row without an index."""
    try:
        rows = conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' "
            "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'"
        ).fetchall()
        for (name,) in rows:
            if part_of(str(name)) is None:
                quoted = str(name).replace('"', '""')
                for _ in conn.execute(f'SELECT * FROM "{quoted}" NOT INDEXED'):
                    pass
    except apsw.Error:  # damage, or sqlite-vec's own error
        return False
    return True
