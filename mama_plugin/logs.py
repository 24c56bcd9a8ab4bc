"""MAMA's logs: ``$MAMA_HOME/logs/<name>.log``, private, rotated at a size cap, never raising.

Each kind of process keeps its own log: the MCP server ``server.log`` (the ``mama`` loggers,
through :func:`attach`), the ``mama`` command ``cli.log`` and the hooks ``hooks.log``
(:func:`append`). A log past ``MAX_BYTES`` is rotated (``server.log`` → ``server.log.1``…,
``KEEP`` old files), so a fault that repeats every turn cannot fill the disk; the size is read
from the file before each write, so several processes writing one log rotate it once.
Files are 0600 in a 0700 folder whatever the umask.

Logging never fails what it records: when the log cannot be written (a read-only home, a full
disk) the line goes to stderr — Claude Code keeps a server's and a hook's stderr in its debug
log — and :func:`problem` says why, for the surfaces that name the log. Standard library only.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from .config import mama_home
from .home import FILE_MODE, keep_private, private_folder

if TYPE_CHECKING:
    import logging

MAX_BYTES = 1024 * 1024  # one log file
KEEP = 2  # rotated files kept beside it: at most (1 + KEEP) × MAX_BYTES per log
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_lock = threading.Lock()  # one process's threads rotate one at a time
_problems: dict[str, str] = {}  # log name → why it could not be written last time


def log_path(name: str) -> Path:
    """Where the log ``name`` lives: ``$MAMA_HOME/logs/<name>.log``."""
    return mama_home() / "logs" / f"{name}.log"


def append(name: str, text: str, *, stamp: bool = True, or_stderr: bool = True) -> Path | None:
    """Append ``text`` (a line or a traceback) to the log ``name``; its path, or None.

    None means it could not be written (see :func:`problem`): it went to stderr instead, unless
    ``or_stderr`` is False (the ``mama`` command prints no traceback). Never raises.
    """
    if stamp:
        text = f"{time.strftime('%Y-%m-%d %H:%M:%S')} pid={os.getpid()} {text}"
    data = (text.rstrip("\n") + "\n").encode("utf-8", "backslashreplace")
    path = log_path(name)
    try:
        with _lock:
            private_folder(path.parent)
            _rotate_if_full(path, len(data))
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
    except OSError as exc:
        _problems[name] = f"{path} cannot be written ({exc.strerror or exc})"
        if or_stderr:
            _to_stderr(data)
        return None
    _problems.pop(name, None)
    return path


def problem(name: str) -> str | None:
    """Why the last write to the log ``name`` failed (None when it succeeded or none was made)."""
    return _problems.get(name)


def where(name: str) -> str:
    """Where a reader finds what the log ``name`` was last given: the file, or stderr and why."""
    why = problem(name)
    return f"stderr, as {why}" if why else str(log_path(name))


def _rotate_if_full(path: Path, adding: int) -> None:
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        return
    if size + adding <= MAX_BYTES:
        return
    for n in range(KEEP, 0, -1):
        older = path.with_name(f"{path.name}.{n}")
        newer = path.with_name(f"{path.name}.{n - 1}") if n > 1 else path
        try:
            os.replace(newer, older)
        except FileNotFoundError:
            continue  # another process rotated it a moment ago


def _to_stderr(data: bytes) -> None:
    try:
        sys.stderr.write(data.decode("utf-8"))
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # stderr closed too: nowhere left to say it


@cache
def _handler_class() -> type[logging.Handler]:
    """The ``logging`` handler class, made on first use: a hook appends its lines with
    :func:`append` and never imports ``logging`` (with ``traceback``, ~5 ms of its start)."""
    import logging

    class LogHandler(logging.Handler):
        """A ``logging`` handler writing through :func:`append` (rotated, private, to stderr
        when the file cannot be written)."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.log_name = name
            self.setFormatter(logging.Formatter(FORMAT))

        def emit(self, record: logging.LogRecord) -> None:
            try:
                append(self.log_name, self.format(record), stamp=False)
            except Exception:  # a formatting error in the record itself
                self.handleError(record)

    return LogHandler


def attach(name: str, logger: str = "mama") -> logging.Handler:
    """Send ``logger`` (INFO and up) to the log ``name``; the handler added.

    Says on stderr, once, when the log cannot be written (the process carries on).
    """
    import logging

    handler = _handler_class()(name)
    target = logging.getLogger(logger)
    target.addHandler(handler)
    target.setLevel(logging.INFO)
    if append(name, f"{name} started (pid {os.getpid()})") is None:
        _to_stderr(f"mama: {problem(name)}; logging to stderr\n".encode())
    return handler


def start(name: str) -> logging.Handler:
    """A long-running process's start: its files private (:func:`~.home.keep_private`) and
    the ``mama`` loggers sent to the log ``name``."""
    keep_private(mama_home())
    return attach(name)
