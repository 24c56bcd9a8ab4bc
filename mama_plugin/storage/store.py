"""The store: one SQLite database per user, rows scoped by project, parts by concept.

The only place that writes SQL. A :class:`Store` owns the connections (one per thread) and the
transactions (``BEGIN IMMEDIATE``: the write lock is taken up front, so two writers never
deadlock upgrading a read lock); its repositories — ``memories``, ``links``, ``suggestions``,
``search``, ``vectors`` — run their statements inside them. It migrates itself when opened.
Imports: standard library, apsw, sqlite-vec.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

from ..config import Config
from ..errors import StoreBusyError
from .connection import PerThread, connect
from .links import Links
from .memories import Memories
from .migrations import migrate, user_version
from .search import Search
from .suggestions import Suggestions
from .vectors import Vectors


class Store:
    """A migrated, configured database, one connection per thread (PerThread). Use :meth:`open`.

    Rows are reached through its repositories: ``store.memories``, ``store.links``,
    ``store.suggestions``, ``store.search`` and ``store.vectors``.
    """

    def __init__(self, conns: PerThread, path: Path) -> None:
        self._conns = conns
        self.path = path
        self._local = threading.local()  # the transaction depth, per thread like its connection
        self.memories = Memories(self)
        self.links = Links(self)
        self.suggestions = Suggestions(self)
        self.search = Search(self)
        self.vectors = Vectors(self)

    @property
    def conn(self) -> apsw.Connection:
        """The calling thread's connection (opened on its first use)."""
        return self._conns.get()

    @property
    def _depth(self) -> int:
        depth: int = getattr(self._local, "depth", 0)
        return depth

    @_depth.setter
    def _depth(self, value: int) -> None:
        self._local.depth = value

    # -- lifecycle -------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: Path | str | None = None,
        *,
        config: Config,
        busy_timeout_ms: int | None = None,
    ) -> Store:
        """Open the database at ``path`` (or the configured one), creating and migrating it.

        ``busy_timeout_ms`` (default: the configured one) bounds every wait for another
        writer's lock, on each thread's connection.
        """
        db = Path(path) if path is not None else config.db_path
        timeout = (
            busy_timeout_ms if busy_timeout_ms is not None else config.settings.busy_timeout_ms
        )
        conn = connect(db, busy_timeout_ms=timeout)
        try:
            migrate(conn, embedding_dim=config.settings.embedding_dim)
        except apsw.BusyError as exc:
            conn.close()
            raise StoreBusyError(_busy_message(db)) from exc
        except BaseException:
            conn.close()
            raise
        return cls(PerThread(conn, lambda: connect(db, busy_timeout_ms=timeout)), db)

    def close(self) -> None:
        """Close every thread's connection; the store is unusable afterwards."""
        self._conns.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """How many migration steps this database has climbed."""
        return user_version(self.conn)

    @contextmanager
    def snapshot(self) -> Iterator[Store]:
        """Run several reads against one consistent state of the database (read-only)."""
        if self._depth or not self.conn.getautocommit():
            yield self  # already inside a transaction: its view is consistent
            return
        self.conn.execute("BEGIN")
        try:
            yield self
        finally:
            if not self.conn.getautocommit():
                self.conn.execute("COMMIT")

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """Run the block atomically; nested blocks become savepoints of the outer one."""
        if self._depth:
            name = f"mama_sp{self._depth}"
            self.conn.execute(f"SAVEPOINT {name}")
            self._depth += 1
            try:
                yield self
            except BaseException:
                self.conn.execute(f"ROLLBACK TO {name}")
                self.conn.execute(f"RELEASE {name}")
                raise
            else:
                self.conn.execute(f"RELEASE {name}")
            finally:
                self._depth -= 1
            return
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except apsw.BusyError as exc:
            raise StoreBusyError(_busy_message(self.path)) from exc
        self._depth = 1
        try:
            yield self
        except BaseException:
            # SQLite may have rolled back already (disk full, I/O error): keep the real error.
            if not self.conn.getautocommit():
                self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")
        finally:
            self._depth = 0

    # -- metadata --------------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        """A value from the store's key-value table, or None."""
        rows = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        """Set a key in the store's key-value table."""
        with self.transaction():
            self.conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def fingerprint(self, project: str) -> str:
        """Changes whenever a memory of ``project``, any link or a link suggestion of
        ``project`` is written (not on usage)."""
        count, changed = self.conn.execute(
            "SELECT count(*), max(updated_at) FROM memories WHERE project = ?", (project,)
        ).fetchall()[0]
        judged, decided = self.conn.execute(
            "SELECT count(*), count(decided_at) FROM link_suggestions WHERE project = ?",
            (project,),
        ).fetchall()[0]
        return f"{count}:{changed}:{self.meta('links_version')}:{judged}:{decided}"


def _busy_message(path: Path) -> str:
    return f"the database {path} stayed locked by another writer; try again in a moment"
