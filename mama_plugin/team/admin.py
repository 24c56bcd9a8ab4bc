"""The team database's owner's commands: set the schema up, give and take projects.

Run with the URL of a role that owns the database (or may create roles): ``setup`` climbs
:mod:`.server_schema`'s ladder; ``grant`` makes the developer's role (LOGIN, a member of
``mama_team``) when it does not exist yet, the project when it is new, and the grant; ``revoke``
takes the grant away. Each change of a grant is recorded in ``mama.audit``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import TeamError
from .connection import connect
from .server_schema import GROUP_ROLE, migrate, require_latest

_ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@dataclass(frozen=True)
class Granted:
    """What ``grant`` did: the role (made now or before) and the project given."""

    role: str
    project: str
    role_created: bool
    project_created: bool


def setup(url: str) -> list[str]:
    """Create or upgrade MAMA's schema in the team database; the steps applied now."""
    with connect(url) as conn:
        return migrate(conn)


def check_role(name: str) -> str:
    """A developer's role name as PostgreSQL keeps it; raises TeamError if it is not one."""
    if not _ROLE.match(name):
        raise TeamError(
            f"{name!r} is not a role name MAMA makes: lower-case letters, digits and _, "
            "starting with a letter (at most 63)"
        )
    return name


def grant(url: str, role: str, project: str, *, password: str | None = None) -> Granted:
    """Give ``role`` the team project ``project`` (making either when new).

    Raises TeamError for a role PostgreSQL builds in (``pg_*``), MAMA's group role, or one
    that is a superuser or bypasses row-level security: it would read every project."""
    from psycopg import sql

    check_role(role)
    if role.startswith("pg_") or role == GROUP_ROLE:
        raise TeamError(_not_a_developer(role, "is a role PostgreSQL or MAMA builds in"))
    if not project.strip():
        raise TeamError("a team project needs a name")
    with connect(url) as conn:
        require_latest(conn, "here")
        with conn.transaction():
            found = conn.execute(
                "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = %s", (role,)
            ).fetchone()
            if found is not None and found[0]:
                raise TeamError(
                    _not_a_developer(
                        role, "is a superuser or bypasses row-level security (every project)"
                    )
                )
            exists = found
            if exists is None:
                statement = sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role))
                if password:
                    statement += sql.SQL(" PASSWORD {}").format(sql.Literal(password))
                conn.execute(statement)
            elif password:
                conn.execute(
                    sql.SQL("ALTER ROLE {} PASSWORD {}").format(
                        sql.Identifier(role), sql.Literal(password)
                    )
                )
            conn.execute(
                sql.SQL("GRANT {} TO {}").format(sql.Identifier(GROUP_ROLE), sql.Identifier(role))
            )
            made = conn.execute(
                "INSERT INTO mama.projects(name) VALUES (%s) ON CONFLICT DO NOTHING", (project,)
            ).rowcount
            conn.execute(
                "INSERT INTO mama.members(project, member) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (project, role),
            )
    return Granted(role, project, exists is None, bool(made))


def _not_a_developer(role: str, why: str) -> str:
    return (
        f"{role!r} {why}: give each developer's own role instead, a login role that is "
        f"nothing more (`mama team grant URL alice PROJECT` makes one named alice)"
    )


def revoke(url: str, role: str, project: str) -> bool:
    """Take the project ``project`` from ``role``; whether it had it. The role stays."""
    check_role(role)
    with connect(url) as conn:
        require_latest(conn, "here")
        with conn.transaction():
            gone = conn.execute(
                "DELETE FROM mama.members WHERE project = %s AND member = %s", (project, role)
            ).rowcount
    return bool(gone)


def audit(url: str, project: str, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` audit rows of ``project`` this role may read, newest first."""
    with connect(url) as conn:
        rows = conn.execute(
            "SELECT id, at, actor, kind, key, op, version FROM mama.audit WHERE project = %s "
            "ORDER BY id DESC LIMIT %s",
            (project, limit),
        ).fetchall()
    names = ("id", "at", "actor", "kind", "key", "op", "version")
    return [dict(zip(names, row, strict=True)) for row in rows]
