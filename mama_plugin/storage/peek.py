"""Glances at a project's memory without opening the store.

The MCP front lists its first tools from :func:`kinds_present` before anything else loads,
with the standard library's ``sqlite3`` alone: opening the :class:`~.store.Store` (apsw,
sqlite-vec, the integrity walk, the repositories' imports) costs tens of milliseconds a first
``tools/list`` cannot spare. Read-only, a short busy timeout, nothing migrated or checked: the
front's warm-up opens the store for real right after. The SessionStart hook reads the cached
cliffhanger with :func:`brief_entry` (apsw, imported then), after the checks opening the store
makes; :func:`fingerprint` is the store's own; :func:`backup_may_be_due` whether it should
start the day's backup (one stat).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

PEEK_TIMEOUT_S = 0.05  # a writer's lock (rare for a reader in WAL mode) is not waited out
# The schema version a current store is at: ``migrations.LATEST``, written here because
# importing the migrations (every table's module) is 40 ms of a 110 ms SessionStart hook.
# tests/test_migrations.py holds the two equal: a new step raises both.
SCHEMA_VERSION = 19
# In the backups folder: its modification time is when the day's backup is next due
# (``storage.backup.daily_backup`` sets it after each try).
BACKUP_DUE_STAMP = ".daily.due"


def backup_may_be_due(db: Path, now: float) -> bool:
    """Whether the day's backup of ``db`` may be due (one stat: the stamp's time is past, or
    there is no stamp yet); :func:`~.backup.due` says for sure."""
    try:
        return os.stat(db.parent / "backups" / BACKUP_DUE_STAMP).st_mtime <= now
    except OSError:
        return True


def kinds_present(db: Path, project: str, kinds: Iterable[str]) -> set[str]:
    """Which of the memory types ``kinds`` ``project`` has any memory of (one index probe each);
    the kind ``proposal`` is there when a proposed link of ``project`` waits for a verdict.

    Raises ``sqlite3.Error`` (or OSError) when the file cannot be read as a MAMA database:
    the caller decides what that means.
    """
    import sqlite3  # here: the session start's hook reads with apsw and need not load it

    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=PEEK_TIMEOUT_S)
    try:
        return {
            kind
            for kind in kinds
            if conn.execute(
                _PENDING if kind == "proposal" else _OF_TYPE,
                (project,) if kind == "proposal" else (project, kind),
            ).fetchone()[0]
        }
    finally:
        conn.close()


_OF_TYPE = "SELECT EXISTS(SELECT 1 FROM memories WHERE project = ? AND type = ?)"
_PENDING = "SELECT EXISTS(SELECT 1 FROM link_suggestions WHERE project = ? AND status = 'pending')"


def fingerprint(conn: Any, project: str) -> str:
    """Changes whenever a memory of ``project`` or of the global scope, any link or a link
    suggestion of ``project`` is written (not on usage), or a file its memories cite differs
    by its stat data from what they recorded (:func:`stat_stamp`). ``conn``: an apsw or
    sqlite3 connection to the database."""
    from ..project import GLOBAL

    count, changed = conn.execute(
        "SELECT count(*), max(updated_at) FROM memories WHERE project = ?", (project,)
    ).fetchall()[0]
    judged, decided = conn.execute(
        "SELECT count(*), count(decided_at) FROM link_suggestions WHERE project = ?", (project,)
    ).fetchall()[0]
    links = conn.execute("SELECT value FROM meta WHERE key = 'links_version'").fetchall()
    found = f"{count}:{changed}:{str(links[0][0]) if links else None}:{judged}:{decided}"
    # The global scope every project inherits: part of the key only once it holds anything.
    count, changed = conn.execute(
        "SELECT count(*), max(updated_at) FROM memories WHERE project = ?", (GLOBAL,)
    ).fetchall()[0]
    if count:
        found += f":global={count}:{changed}"
    # Stat calls only (the session start's cache key): a cited file that differs from what its
    # memory recorded renews the key; while none does, the key is what it always was.
    files = stat_stamp(conn, project)
    return f"{found}:files={files}" if files else found


def brief_entry(
    db: Path, project: str, key: str, *, busy_timeout_ms: int
) -> tuple[str, str | None] | None:
    """(``project``'s :func:`fingerprint`, ``meta``'s value under ``key``), read without
    opening the store (apsw, read-only; no repositories, no sqlite-vec), after the checks
    :meth:`Store.open` makes on a file this size. None when only the store can answer: a
    file that checks damaged, cannot be written, or is at another schema version, or any
    SQLite error; the caller then opens the store, which says what is wrong.
    """
    import apsw

    from .integrity import QUICK_CHECK_BYTES, header_problem, sanity_read, structure_check

    if header_problem(db) is not None or not all(os.access(p, os.W_OK) for p in (db, db.parent)):
        return None
    try:
        conn = apsw.Connection(
            f"{db.resolve().as_uri()}?mode=ro",
            flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
        )
    except apsw.Error:
        return None
    try:
        conn.set_busy_timeout(busy_timeout_ms)
        sanity_read(conn)
        if conn.execute("PRAGMA user_version").fetchall()[0][0] != SCHEMA_VERSION:
            return None
        if os.path.getsize(db) <= QUICK_CHECK_BYTES and structure_check(conn, limit=1):
            return None
        rows = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
        return fingerprint(conn, project), (str(rows[0][0]) if rows else None)
    except (apsw.Error, OSError):
        return None
    finally:
        conn.close()


def stat_stamp(conn: Any, project: str) -> str:
    """What differs, by stat data alone, among the files ``project``'s memories cite: "" when
    every one is as recorded; else a digest of the paths that differ, their stat data now and
    HEAD (so a commit after an edit renews it). ``conn``: apsw or sqlite3."""
    rows = conn.execute(
        "SELECT DISTINCT path, size, mtime_ns FROM memory_files WHERE project = ?", (project,)
    ).fetchall()
    if not rows:
        return ""
    import hashlib

    from ..filestate import head_commit, stat_of

    root, now, differ = Path(project), {}, []
    for path, size, mtime in rows:
        if path not in now:
            now[path] = stat_of(root, str(path))
        if now[path] != (size, mtime):
            differ.append(f"{path}:{now[path][0]}:{now[path][1]}")
    if not differ:
        return ""
    digest = hashlib.sha1(usedforsecurity=False)
    for line in sorted(set(differ)):
        digest.update(line.encode("utf-8", "surrogateescape") + b"\n")
    digest.update(head_commit(root).encode())
    return digest.hexdigest()[:16]
