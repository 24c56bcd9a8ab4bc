"""The store: one SQLite database per user, rows scoped by project, parts by concept.

The only place that writes SQL. A :class:`Store` owns the connections (one per thread) and the
transactions (``BEGIN IMMEDIATE``: the write lock is taken up front, so two writers never
deadlock upgrading a read lock); its repositories — ``memories``, ``links``, ``suggestions``,
``search``, ``vectors`` — run their statements inside them. It migrates itself when opened.

A damaged file is named, never written into: the store checks the file when opened (see
:meth:`Store.open`), and any statement that meets a damaged page raises
:class:`~mama_plugin.errors.StoreDamaged`; from then on every transaction of this store raises
it too, until the file is repaired or replaced (``mama doctor --repair`` or ``--restore``) and
checks sound again.
Imports: standard library, apsw, sqlite-vec.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar, cast

import apsw

from ..config import Config
from ..errors import StoreBusyError, StoreDamaged, StoreReadOnly
from .confidence import ConfidenceHistory
from .connection import PerThread, connect
from .erasure import Erasure
from .faults import connect_read_only, refusal
from .file_states import FileStates
from .integrity import file_identity, guarded_cursor, is_damage
from .links import Links
from .memories import Memories
from .migrations import user_version
from .notes import Notes
from .opening import Check, busy_message, damage_of, diagnose_file, open_file
from .peek import fingerprint
from .references import References
from .search import Search
from .suggestions import Suggestions
from .vectors import Vectors

T = TypeVar("T")


class Store:
    """A migrated, configured database, one connection per thread (PerThread). Use :meth:`open`.

    Rows are reached through its repositories: ``store.memories``, ``store.links``,
    ``store.suggestions``, ``store.search`` and ``store.vectors``.
    """

    def __init__(self, conns: PerThread, path: Path, home: Path) -> None:
        self._conns = conns
        self.path = path
        self._damage: StoreDamaged | None = None
        # Set when the file could only be opened read-only: every write raises it.
        self.read_only: StoreReadOnly | None = None
        self._damaged_file: tuple[int, ...] = ()  # the file's identity when found damaged
        self._local = threading.local()  # the transaction depth, per thread like its connection
        self.masks_personal_data = True  # keep_personal_data off (Store.open reads the setting)
        self.home = home  # the MAMA home of the Config it was opened with
        self.memories = Memories(self)
        self.links = Links(self)
        self.suggestions = Suggestions(self)
        self.search = Search(self)
        self.vectors = Vectors(self)
        self.erasure = Erasure(self)
        self.file_states = FileStates(self)
        self.confidence = ConfidenceHistory(self)
        self.notes = Notes(self)
        self.references = References(self)
        # The warm state the services keep for this store (their caches), by what builds it.
        self._kept: dict[Callable[[], Any], Any] = {}
        self._kept_guard = threading.Lock()

    def kept(self, build: Callable[[], T]) -> T:
        """What ``build`` makes, once for this store: the warm state the services keep (their
        caches) lives as long as the store a composition root opened, never in a module."""
        with self._kept_guard:
            found = self._kept.get(build)
            if found is None:
                found = self._kept[build] = build()
            return cast(T, found)

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
        check: Check = "auto",
    ) -> Store:
        """Open the database at ``path`` (or the configured one), creating and migrating it.

        ``busy_timeout_ms`` (default: the configured one) bounds every wait for another
        writer's lock, on each thread's connection. ``check`` is what is verified first:
        ``auto`` the header and schema always, and every b-tree page too (``structure_check``)
        for a file up to ``QUICK_CHECK_BYTES``; ``quick`` a full ``PRAGMA quick_check`` at any
        size; ``none`` only what opening reads anyway. Raises StoreDamaged (nothing written)
        when the file is damaged.
        """
        db = Path(path) if path is not None else config.db_path
        timeout = (
            busy_timeout_ms if busy_timeout_ms is not None else config.settings.busy_timeout_ms
        )
        conn, read_only, damage = open_file(db, config, timeout, check)
        store = cls(PerThread(conn, lambda: store._connect(db, timeout)), db, config.home)
        store.masks_personal_data = not config.settings.keep_personal_data
        store.read_only = read_only
        if damage is not None:  # damaged where reads can do without: read, never written
            store._damage, store._damaged_file = damage, file_identity(db)
        conn.cursor_factory = store._cursor
        return store

    def _connect(self, db: Path, timeout: int) -> apsw.Connection:
        if self.read_only is not None:
            conn = connect_read_only(db, busy_timeout_ms=timeout)
        else:
            conn = connect(db, busy_timeout_ms=timeout)
        conn.cursor_factory = self._cursor
        return conn

    @property
    def _cursor(self) -> type[apsw.Cursor]:
        cursor: type[apsw.Cursor] | None = self.__dict__.get("_cursor_class")
        if cursor is None:
            cursor = self.__dict__["_cursor_class"] = guarded_cursor(self._damaged)
        return cursor

    # -- damage ----------------------------------------------------------------------------

    def _damaged(self, exc: BaseException) -> NoReturn:
        """A statement met a damaged page: say what is wrong and refuse every later write.

        sqlite-vec words a damaged page as an error of its own: that one is damage only when
        the file checks damaged; else it is raised as it is.
        """
        findings = diagnose_file(self.path)
        if not findings.problems and not is_damage(exc):
            raise exc
        damage = damage_of(self.path, findings)
        self._damage, self._damaged_file = damage, file_identity(self.path)
        raise damage from exc

    def verify(self) -> StoreDamaged | None:
        """Run ``PRAGMA quick_check`` over the whole file now; the damage found, or None.

        Reads every page (the ``integrity`` benchmark gives the cost), on a connection of its
        own: a long-running process can call it once from a worker thread for a store too
        large to check when opened. Damage found marks the store: its writes are refused.
        """
        if (findings := diagnose_file(self.path)).problems:
            self._damage = damage_of(self.path, findings)
            self._damaged_file = file_identity(self.path)
        return self.damage

    @property
    def damage(self) -> StoreDamaged | None:
        """The damage this store met (its writes are refused), or None while it is sound.

        A file repaired, replaced or changed since (``mama doctor``) is checked again.
        """
        if self._damage is not None and file_identity(self.path) != self._damaged_file:
            if not diagnose_file(self.path).problems:
                self._damage, self._damaged_file = None, ()
            else:
                self._damaged_file = file_identity(self.path)
        return self._damage

    @property
    def degraded(self) -> tuple[str, ...]:
        """The damaged parts this store's reads do without, while it is damaged there alone
        (:func:`~.diagnosis.read_without`): their searches find nothing, every other read
        reads as usual, every write is refused. () when sound, or damaged elsewhere too."""
        damage = self.damage
        return damage.derived if damage is not None and damage.readable else ()

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
                if not self.conn.getautocommit():  # else SQLite rolled back all (disk full)
                    self.conn.execute(f"ROLLBACK TO {name}")
                    self.conn.execute(f"RELEASE {name}")
                raise
            else:
                self.conn.execute(f"RELEASE {name}")
            finally:
                self._depth -= 1
            return
        if (damage := self.damage) is not None:  # a fresh instance: tracebacks do not pile up
            raise StoreDamaged(
                damage.path,
                damage.problems,
                damage.backup,
                derived=damage.derived,
                readable=damage.readable,
            )
        if self.read_only is not None:
            raise StoreReadOnly(self.read_only.path, self.read_only.reason)
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except apsw.BusyError as exc:
            raise StoreBusyError(busy_message(self.path)) from exc
        self._depth = 1
        try:
            yield self
            # Only a COMMIT that succeeded returns: a damaged page found while committing
            # raises StoreDamaged here, and the block's writes are rolled back below.
            self.conn.execute("COMMIT")
        except BaseException as exc:
            # SQLite may have rolled back already (disk full, I/O error): keep the real error.
            if not self.conn.getautocommit():
                with contextlib.suppress(StoreDamaged, apsw.Error):
                    self.conn.execute("ROLLBACK")
            if is_damage(exc):  # met outside the guarded cursor (an extension, a backup)
                self._damaged(exc)
            if (refused := refusal(exc, self.path)) is not None:  # disk full, made read-only
                raise refused from exc
            raise
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
        ``project`` is written (not on usage), or a file its memories cite differs from what
        they recorded (stat data)."""
        return fingerprint(self.conn, project)
