"""Model files: where MAMA keeps them, and writing one that several processes may build at once
(lock, temporaries, durability). Standard library only.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from .errors import EmbeddingError

if TYPE_CHECKING:
    import zipfile

    from ..config import Config


def models_dir(config: Config) -> Path:
    """Where built and extracted models are kept: ``$MAMA_HOME/models``."""
    return config.home / "models"


def open_joined_zip(source: Path | IO[bytes], *, parts: str, fix: str) -> zipfile.ZipFile:
    """``source``, the zip a model's split parts join into, opened for reading.

    Raises EmbeddingError when they form no zip, saying so of ``parts`` (what they are, named
    for the user) and telling ``fix``.
    """
    import zipfile  # here: only a model's build opens one (~4 ms of the server's warm-up)

    try:
        return zipfile.ZipFile(source)
    except zipfile.BadZipFile as exc:
        raise EmbeddingError(f"the {parts} do not form a zip ({exc}); {fix}") from exc


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the block."""
    # The lock file is never deleted: unlinking it would let a waiter lock an orphaned inode
    # while a newcomer locks a fresh file, and both would build.
    with path.open("a+b") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: the atomic rename still keeps the model whole
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def remove_stale_temporaries(dest: Path) -> None:
    """Delete ``.<dest>.*.tmp`` files a crashed writer left beside ``dest``."""
    # Only the lock holder writes temporaries, so any left now are from a crashed build.
    for stale in dest.parent.glob(f".{dest.name}.*.tmp"):
        stale.unlink(missing_ok=True)


def fsync_directory(directory: Path) -> None:
    """Make a rename inside ``directory`` durable (best effort)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
