"""What ``mama`` says about an error nobody expected: one line, the traceback in a log."""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from ..home import is_unwritable
from ..logs import append, problem

LOG = "cli"  # $MAMA_HOME/logs/cli.log


def unexpected(exc: BaseException, args: argparse.Namespace) -> str:
    """The sentence for ``exc`` (raised by no MamaError); its traceback goes to the CLI log.

    SQLite reporting a damaged file where no store guarded the statement still gets the
    store's sentence: what is wrong and what to do.
    """
    logged = _log(exc)
    from ..storage.integrity import is_damage

    if is_damage(exc):
        from ..storage.opening import damage_of

        config = getattr(args, "config", None)
        db = Path(args.db) if getattr(args, "db", None) else config.db_path if config else None
        if db is not None:
            return str(damage_of(db))
    if isinstance(exc, OSError) and is_unwritable(exc):  # the machine, not a bug
        name = f" {exc.filename}" if exc.filename else ""
        return f"cannot write{name}: {exc.strerror or exc}; nothing more was done"
    where = (
        f"the traceback is in {logged}; please report it with that file"
        if logged
        else f"its traceback could not be logged: {problem(LOG)}"
    )
    return f"unexpected {type(exc).__name__}: {exc or 'no message'} ({where})"


def _log(exc: BaseException) -> Path | None:
    """Append the traceback of ``exc`` to the CLI log (rotated); its path, or None."""
    command = " ".join(sys.argv[1:])
    trace = "".join(traceback.format_exception(exc))
    return append(LOG, f"mama {command}\n{trace}", or_stderr=False)
