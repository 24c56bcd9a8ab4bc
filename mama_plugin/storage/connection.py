"""Open a SQLite connection the way MAMA needs it: a short list of named steps.

Standard library, apsw and sqlite-vec only: hooks open the store on a cold start.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw

from ..errors import SchemaError

MIN_SQLITE = (3, 38, 0)  # JSON functions built in, FTS5 with bm25()
DEFAULT_BUSY_MS = 5000
# Pages a connection keeps in memory (SQLite's default is 2 MiB): a search reads a few hundred
# rows scattered over the store; at 10k memories (28 MB) the default cache re-read them from
# the OS on every search (search p50 20.0 → 18.1 ms). Only pages actually read are held.
CACHE_KIB = 32 * 1024
# The calling thread's deadline for lock waits (``waits_until``): a hook's worker thread sets
# it, so no busy timeout outlives the hook's own deadline.
_waits = threading.local()
# The busy timeout each connection was opened with, which a deadline only shortens for a while.
_configured: weakref.WeakKeyDictionary[apsw.Connection, int] = weakref.WeakKeyDictionary()


@contextlib.contextmanager
def waits_until(deadline: float) -> Iterator[None]:
    """Bound every wait for another writer's lock on this thread by ``deadline``.

    ``deadline`` is a ``time.monotonic()`` time. Inside the block each connection this thread
    opens or gets from a :class:`PerThread` waits for a lock only until then (past it, at
    once: SQLite answers "busy" and the work gives up, holding nothing); the thread's
    connections get their own busy timeout back afterwards. Nested blocks keep the earlier
    deadline.
    """
    previous: float | None = getattr(_waits, "until", None)
    _waits.until = deadline if previous is None else min(previous, deadline)
    try:
        yield
    finally:
        _waits.until = previous


def wait_left_s() -> float | None:
    """Seconds left before the calling thread's lock-wait deadline (None: no deadline)."""
    until: float | None = getattr(_waits, "until", None)
    return None if until is None else max(0.0, until - time.monotonic())


def _bounded_ms(busy_timeout_ms: int) -> int:
    left = wait_left_s()
    return busy_timeout_ms if left is None else min(busy_timeout_ms, int(left * 1000))


def connect(
    path: Path | str, *, busy_timeout_ms: int = DEFAULT_BUSY_MS, readonly: bool = False
) -> apsw.Connection:
    """Return a configured connection to ``path`` (created when missing unless ``readonly``)."""
    if not readonly and str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    flags = (
        apsw.SQLITE_OPEN_READONLY
        if readonly
        else apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    )
    conn = apsw.Connection(str(path), flags=flags | apsw.SQLITE_OPEN_URI)
    check_sqlite_version()
    _configured[conn] = busy_timeout_ms
    set_busy_timeout(conn, _bounded_ms(busy_timeout_ms))
    if not readonly:
        enable_wal(conn)
    enable_foreign_keys(conn)
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    load_sqlite_vec(conn)
    return conn


def check_sqlite_version() -> None:
    """Refuse an SQLite too old for the schema, naming the fix."""
    if tuple(int(p) for p in apsw.sqlite_lib_version().split(".")[:3]) < MIN_SQLITE:
        raise SchemaError(
            f"SQLite {apsw.sqlite_lib_version()} is too old; MAMA needs "
            f"{'.'.join(map(str, MIN_SQLITE))} or newer — upgrade the apsw package"
        )


def set_busy_timeout(conn: apsw.Connection, ms: int) -> None:
    """Wait up to ``ms`` for another writer's lock instead of failing at once (0: never wait)."""
    conn.set_busy_timeout(max(0, ms))


def enable_wal(conn: apsw.Connection) -> None:
    """Readers never block the writer and the writer never blocks readers."""
    conn.execute("PRAGMA journal_mode = WAL").fetchall()
    conn.execute("PRAGMA synchronous = NORMAL")


def enable_foreign_keys(conn: apsw.Connection) -> None:
    """Links cascade with their memories; a link to a missing memory is refused."""
    conn.execute("PRAGMA foreign_keys = ON")


def load_sqlite_vec(conn: apsw.Connection) -> None:
    """Load sqlite-vec, then switch extension loading off again."""
    conn.enable_load_extension(True)
    try:
        conn.load_extension(_vec0_path())
    finally:
        conn.enable_load_extension(False)


def _vec0_path() -> str:
    """Where the sqlite-vec package keeps its extension, found without importing the package.

    ``import sqlite_vec`` also imports numpy (~50 ms), which a cold hook must not pay.
    """
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise SchemaError("the sqlite-vec package is missing: pip install sqlite-vec")
    return os.path.join(next(iter(spec.submodule_search_locations)), "vec0")


class PerThread:
    """One connection per thread to one database, each opened on its thread's first use.

    apsw refuses to run one connection in two threads at once, and in WAL mode SQLite lets
    connections read side by side while its busy timeout queues their writers: so the event
    loop and every worker thread get a connection of their own, and each thread's transactions
    are its own. (One connection behind a lock made every reader wait for any writer in the
    process, the event loop included.) A ``:memory:`` database would be a different, empty one
    in each thread: nothing opens one. Inside :func:`waits_until` a thread's connection waits
    for locks only until that deadline.
    """

    def __init__(self, first: apsw.Connection, opener: Callable[[], apsw.Connection]) -> None:
        self._opener = opener
        self._guard = threading.Lock()  # guards _conns and _closed, never held during SQL
        self._conns: dict[threading.Thread, apsw.Connection] = {}
        self._local = threading.local()
        self._closed = False
        self._adopt(first)

    def get(self) -> apsw.Connection:
        """The calling thread's connection, opened now if this thread has none yet."""
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is not None and not self._closed:
            self._bound(conn)
            return conn
        if conn is not None:  # closed while this thread was busy with it: close it now
            conn.close()
            return conn  # a closed connection: using it raises ConnectionClosedError
        if self._closed:
            raise apsw.ConnectionClosedError("the store is closed")
        return self._adopt(self._opener())

    def _bound(self, conn: apsw.Connection) -> apsw.Connection:
        """Give ``conn`` what is left of this thread's lock-wait deadline, or its own timeout
        back once the deadline is over."""
        left = wait_left_s()
        if left is not None:
            set_busy_timeout(conn, _bounded_ms(_configured.get(conn, DEFAULT_BUSY_MS)))
            self._local.bounded = True
        elif getattr(self._local, "bounded", False):
            set_busy_timeout(conn, _configured.get(conn, DEFAULT_BUSY_MS))
            self._local.bounded = False
        return conn

    def close(self) -> None:
        """Close every thread's connection; one busy in another thread closes when it is next
        asked for (a worker abandoned at its deadline may still be running a statement)."""
        with self._guard:
            self._closed = True
            conns, self._conns = list(self._conns.values()), {}
        for conn in conns:
            with contextlib.suppress(apsw.ThreadingViolationError):
                conn.close()

    def _adopt(self, conn: apsw.Connection) -> apsw.Connection:
        with self._guard:
            if self._closed:
                conn.close()
                raise apsw.ConnectionClosedError("the store is closed")
            # Worker threads come and go (anyio retires idle ones): drop their connections.
            gone = [t for t in self._conns if not t.is_alive()]
            for thread in gone:
                self._conns.pop(thread).close()
            self._conns[threading.current_thread()] = conn
        self._local.conn = conn
        return self._bound(conn)
