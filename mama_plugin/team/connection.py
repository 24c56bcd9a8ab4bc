"""Reaching the team database: URL checks, one psycopg connection, its failures in words.

A URL is kept without its password (the store file and its backups are copied around): libpq
reads the password from ``PGPASSWORD`` or ``~/.pgpass`` as for ``psql``. Every failure
becomes a :class:`~.errors.TeamError` subclass saying what to do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..errors import TeamAccessError, TeamError, TeamUnreachable

CONNECT_TIMEOUT_S = 5


def _driver() -> Any:
    try:
        import psycopg
    except ImportError:
        raise TeamError(
            "the team store needs the psycopg driver: pip install 'mama-plugin[team]'"
        ) from None
    return psycopg


def check_url(url: str) -> tuple[str, bool]:
    """The URL to keep (no password) and whether it carried one; raises TeamError if invalid."""
    if not url.startswith(("postgresql://", "postgres://")):
        raise TeamError(f"{url!r} is not a PostgreSQL URL; give one like postgresql://host/db")
    psycopg = _driver()
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise TeamError(f"cannot read the URL {url!r}: {exc}") from None
    had_password = bool(params.pop("password", None))
    if not had_password:
        return url, False
    return make_conninfo("", **params), True


def where(url: str) -> str:
    """The database a URL names, for messages: ``db on host`` (never its password)."""
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(url)
    host = str(params.get("host") or "localhost")
    return f"{params.get('dbname') or params.get('user') or '?'} on {host}"


@contextlib.contextmanager
def connect(url: str) -> Iterator[Any]:
    """A psycopg connection to ``url`` (transactions explicit), closed after the block.

    Raises TeamUnreachable when the server cannot be reached or drops the connection, and
    TeamAccessError when it refuses the role.
    """
    psycopg = _driver()
    try:
        conn = psycopg.connect(
            url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, application_name="mama"
        )
    except psycopg.OperationalError as exc:
        raise _refusal(exc, url) from None
    try:
        with translated(url):
            yield conn
    finally:
        conn.close()


@contextlib.contextmanager
def translated(url: str) -> Iterator[None]:
    """Turn the driver's errors met inside the block into TeamErrors naming ``url``'s database."""
    psycopg = _driver()
    try:
        yield
    except psycopg.errors.InsufficientPrivilege as exc:
        raise TeamAccessError(
            f"the team database {where(url)} refused: {_first_line(exc)}; the team's admin "
            "grants a project with `mama team grant URL ROLE PROJECT`"
        ) from None
    except psycopg.OperationalError as exc:
        raise TeamUnreachable(
            f"lost the team database {where(url)} ({_first_line(exc)}); nothing is lost, the "
            "next sync goes on from here"
        ) from None
    except psycopg.Error as exc:  # the batch was rolled back there; the outbox keeps it here
        raise TeamError(
            f"the team database {where(url)} refused a change ({_first_line(exc)}); nothing "
            "was lost: `mama team status` shows what waits"
        ) from None


def _refusal(exc: Exception, url: str) -> TeamError:
    text = _first_line(exc)
    if "password authentication failed" in text or ("role" in text and "does not exist" in text):
        return TeamAccessError(
            f"the team database {where(url)} refused the login ({text}); check the role, and "
            "the password in PGPASSWORD or ~/.pgpass"
        )
    return TeamUnreachable(
        f"cannot reach the team database {where(url)} ({text}); local memory keeps working "
        "and the outbox waits for the next sync"
    )


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
