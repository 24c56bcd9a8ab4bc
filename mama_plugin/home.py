"""``MAMA_HOME`` and the files MAMA keeps: private whatever the umask, read-only understood.

Memory holds what a user decided and why, so no other account may read it: the home folder
is 0700 and every file MAMA writes is 0600. A process's composition root (the ``mama``
command, the MCP server, the hook runner) calls :func:`keep_private`, which narrows the
process's umask (so SQLite's database, its log and shared memory, backups, logs and locks are
created private) and puts right an install made before this rule: the home, its folders and
the files in them lose every permission bit of group and others. :func:`create_private` makes
one file 0600 where the umask is not ours (a library caller, an export).

Standard library only (the hooks call it on a cold start). Nothing here raises: a home that
cannot be changed (read-only, another owner) is left as it is, and :func:`unwritable` says
why a folder cannot take a write.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

PRIVATE_UMASK = 0o077
DIR_MODE, FILE_MODE = 0o700, 0o600
# The folders whose files are MAMA's own (not the plugin's environment, which holds a venv).
FOLDERS = ("", "logs", "backups", "damaged", "models", "templates", "views")
VIEWS = "views"  # the pages `mama view` writes: copies of memory text, private like the rest
# Errors that mean "this place cannot be written", as opposed to a bug.
UNWRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT})


def keep_private(home: Path) -> None:
    """At a process's start: new files private (umask 077); the home's files put right."""
    os.umask(PRIVATE_UMASK)
    fix_home(home)


def fix_home(home: Path) -> None:
    """``home`` and MAMA's folders in it 0700, the files in them 0600 (one level, no links)."""
    for name in FOLDERS:
        folder = home / name if name else home
        if not _narrow(folder, DIR_MODE, want_dir=True):
            continue
        with contextlib.suppress(OSError), os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_file(follow_symlinks=False):
                    _narrow(Path(entry.path), FILE_MODE, want_dir=False)


def fix_files(*paths: Path) -> None:
    """Make each of ``paths`` that exists 0600 (a database, its ``-wal`` and ``-shm``)."""
    for path in paths:
        _narrow(path, FILE_MODE, want_dir=False)


def private_folder(folder: Path) -> Path:
    """Create ``folder`` (and missing parents) as 0700; an existing one is left as it is.

    Raises OSError when it cannot be created.
    """
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=DIR_MODE)
            os.chmod(path, DIR_MODE)  # mkdir's mode passes through the umask
    return folder


def create_private(path: Path) -> None:
    """Create ``path`` empty as 0600 unless it exists (then make it 0600). Raises OSError."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as a 0600 file, atomically (temporary file + rename)."""
    import tempfile  # here: its import (shutil, random) is ~8 ms of every hook's start

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # mkstemp: 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def unwritable(folder: Path) -> str | None:
    """Why ``folder`` cannot take a new file (None when it can); tried for real, never raises.

    Permission bits do not say it (root ignores them, a read-only mount keeps them), so a
    file is created and removed.
    """
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(prefix=".mama-probe.", dir=folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(tmp)
    return None


def is_unwritable(exc: BaseException) -> bool:
    """Whether ``exc`` is the system refusing a write (read-only, permission, disk full)."""
    return isinstance(exc, OSError) and exc.errno in UNWRITABLE


def _narrow(path: Path, mode: int, *, want_dir: bool) -> bool:
    """Drop the bits of ``path`` beyond ``mode``; whether it is there as the kind wanted."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISDIR(info.st_mode) != want_dir or stat.S_ISLNK(info.st_mode):
        return False
    current = stat.S_IMODE(info.st_mode)
    if current & ~mode and info.st_uid == os.geteuid():
        with contextlib.suppress(OSError):  # read-only home: leave it, it cannot leak more
            os.chmod(path, current & mode)
    return True


def shipped_templates() -> Path:
    """The directory holding MAMA's own templates (installed wheel or source checkout)."""
    package = Path(__file__).resolve().parent
    installed = package / "templates"
    return installed if installed.is_dir() else package.parent / "templates"
