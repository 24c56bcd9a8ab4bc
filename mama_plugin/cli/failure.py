"""What ``mama`` says about an error nobody expected: one line, the traceback in a log."""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

from ..config import mama_home

LOG = "cli.log"


def unexpected(exc: BaseException, args: argparse.Namespace) -> str:
    """The sentence for ``exc`` (raised by no MamaError); its traceback goes to the CLI log.

    SQLite reporting a damaged file where no store guarded the statement still gets the
    store's sentence: what is wrong and what to do.
    """
    logged = _log(exc)
    from ..storage.integrity import is_damage

    if is_damage(exc):
        from ..storage.store import damage_of

        config = getattr(args, "config", None)
        db = Path(args.db) if getattr(args, "db", None) else config.db_path if config else None
        if db is not None:
            return str(damage_of(db, []))
    where = f"the traceback is in {logged}" if logged else "the traceback could not be logged"
    return (
        f"unexpected {type(exc).__name__}: {exc or 'no message'} ({where}; "
        "please report it with that file)"
    )


def _log(exc: BaseException) -> Path | None:
    """Append the traceback of ``exc`` to ``$MAMA_HOME/logs/cli.log``; its path, or None."""
    path = mama_home() / "logs" / LOG
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            handle.write(f"{stamp} pid={os.getpid()} mama {' '.join(sys.argv[1:])}\n")
            handle.write("".join(traceback.format_exception(exc)))
    except OSError:
        return None
    return path
