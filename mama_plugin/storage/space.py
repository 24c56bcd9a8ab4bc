"""How much room the database takes, and giving back what it no longer uses (``VACUUM``).

Deleted rows leave free pages inside the file: SQLite reuses them for new rows but never
returns them to the disk. ``VACUUM`` rewrites the whole file without them, holding the write
lock while it does (other writers wait on their busy timeout), so it runs only when it pays
(:func:`vacuum_pays`): a quarter of the file free and at least a megabyte back.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .store import Store

# VACUUM pays when at least this share of the file is free pages, and this many bytes.
VACUUM_SHARE = 0.25
VACUUM_MIN_BYTES = 1 << 20


@dataclass(frozen=True)
class Space:
    """The database file's size and how much of it is free pages."""

    file_bytes: int  # the database file, without its write-ahead log
    wal_bytes: int
    page_size: int
    pages: int
    free_pages: int

    @property
    def free_bytes(self) -> int:
        """What ``VACUUM`` would give back (the free pages)."""
        return self.free_pages * self.page_size

    def as_dict(self) -> dict[str, int]:
        """The figures, for ``--json`` output."""
        return asdict(self)


def space(store: Store) -> Space:
    """How big the store's database is and how much of it is free (read-only, cheap)."""

    def pragma(name: str) -> int:
        return int(store.conn.execute(f"PRAGMA {name}").fetchall()[0][0])  # type: ignore[arg-type]

    return Space(
        file_bytes=_size(store.path),
        wal_bytes=_size(Path(f"{store.path}-wal")),
        page_size=pragma("page_size"),
        pages=pragma("page_count"),
        free_pages=pragma("freelist_count"),
    )


def vacuum_pays(now: Space) -> bool:
    """Whether rewriting the file gives back enough: :data:`VACUUM_SHARE` of it free, and at
    least :data:`VACUUM_MIN_BYTES`."""
    return now.free_bytes >= VACUUM_MIN_BYTES and now.free_pages >= VACUUM_SHARE * now.pages


def vacuum(store: Store) -> float:
    """Rewrite the database without its free pages, then empty the write-ahead log; seconds.

    Holds the write lock for its duration (tens of ms at 2,000 memories): never on a hook's
    path. Raises apsw's BusyError when another writer holds the lock past the busy timeout.
    """
    started = time.perf_counter()
    store.conn.execute("VACUUM")
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    return time.perf_counter() - started


def _size(path: Path) -> int:
    with contextlib.suppress(OSError):
        return path.stat().st_size
    return 0
