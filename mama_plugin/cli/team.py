"""``mama team …``: share a project's memories through a team database (PostgreSQL).

A command group: ``connect``, ``sync``, ``status``, ``search``, ``resolve`` and
``disconnect`` for each developer; ``setup``, ``grant``, ``revoke`` and ``audit`` for the
database's owner. Each action parses, calls one function of :mod:`mama_plugin.team`, prints.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from typing import Any

from ..errors import MamaError
from .options import (
    Command,
    argument,
    command,
    flag,
    json_option,
    keyword_only_option,
    project_option,
)
from .shared import open_store, optional_embedder, print_json, project_of


@dataclass(frozen=True)
class Group(Command):
    """A command whose first argument is one of its own subcommands (``mama team sync``)."""

    commands: tuple[Command, ...] = ()

    def add_to(self, sub: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = sub.add_parser(
            self.name, help=self.help, description=self.help
        )
        inner = parser.add_subparsers(dest=f"{self.name}_action", required=True, metavar="ACTION")
        for action in self.commands:
            action.add_to(inner)
        return parser


@command("connect", "point this project at a team database and queue what it holds")
@argument("url", help="postgresql://ROLE@HOST/DB (the password from PGPASSWORD or ~/.pgpass)")
@argument("--as", dest="name", help="the project's name on the team database (default: its folder)")
@project_option()
def cmd_connect(args: argparse.Namespace) -> int:
    """Connect the project after checking the database, its schema and this role's grant."""
    from ..team.joining import join

    project = project_of(args)
    with open_store(args) as store:
        joined = join(store, project, args.url, args.name or os.path.basename(project))
    print(f"connected {project} to team project {joined.remote!r} as role {joined.role}")
    print(f"{joined.queued} memories queued; `mama team sync` sends them now")
    if joined.password_dropped:
        print("the password was not stored: put it in ~/.pgpass (or PGPASSWORD) for syncs")
    return 0


@command("sync", "push this project's outbox, pull teammates' changes; print what moved")
@project_option()
@flag("--all", "every connected project, not only this one")
@json_option()
def cmd_sync(args: argparse.Namespace) -> int:
    """Run one sync pass; exit 1 when a project could not finish (its outbox waits)."""
    from ..storage.team import outbox
    from ..team.sync import sync_project

    with open_store(args) as store:
        wanted = (
            [p.project for p in outbox.projects(store)]
            if args.all
            else [outbox.require_project(store, project_of(args)).project]
        )
        reports = [sync_project(store, project) for project in wanted]
    if args.json:
        print_json([r.as_dict() for r in reports])
    else:
        for report in reports:
            print(report.line())
    for report in reports:
        if report.error:
            print(f"mama: error: {report.error}", file=sys.stderr)
    return 1 if any(r.error for r in reports) else 0


@command("status", "the outbox, the last sync and its error, open conflicts")
@project_option()
@json_option()
def cmd_status(args: argparse.Namespace) -> int:
    """Print what waits to be pushed and how the last sync went, for every connected project."""
    from ..storage.team import conflicts, outbox

    with open_store(args) as store:
        joined = outbox.projects(store)
        rows = [
            {
                "project": p.project,
                "remote": p.remote,
                "url": p.url,
                "outbox": outbox.outbox_count(store, p.project),
                "pulled_seq": p.pulled_seq,
                "last_sync_at": p.last_sync_at,
                "last_error": p.last_error,
                "conflicts": [
                    {
                        "memory_id": c.memory_id,
                        "server_version": c.server_version,
                        "theirs_by": c.theirs_by,
                        "theirs": c.theirs,
                        "mine": (m.as_dict() if (m := store.memories.get(c.memory_id)) else None),
                    }
                    for c in conflicts.open_conflicts(store, p.project)
                ],
                "set_aside": [a.__dict__ for a in outbox.aside(store, p.project)],
            }
            for p in joined
        ]
    if args.json:
        print_json(rows)
        return 0
    if not rows:
        print("no project is connected to a team database (`mama team connect URL`)")
        return 0
    for row in rows:
        _print_status(row)
    return 0


def _print_status(row: dict[str, Any]) -> None:
    out = row["outbox"]
    print(f"{row['project']} → team project {row['remote']!r} ({row['url']})")
    print(f"  outbox     {out['memory']} memories, {out['link']} links waiting")
    print(f"  last sync  {_when(row['last_sync_at'])}, through server sequence {row['pulled_seq']}")
    if row["last_error"]:
        print(f"  stopped    {row['last_error']}")
    for a in row["set_aside"]:
        print(f"  set aside  {a['kind']} {a['key']}: the team database refused it ({a['error']});")
        print("             the rest was pushed; a change of it here tries it again")
    for c in row["conflicts"]:
        theirs = c["theirs"]["content"] if c["theirs"] else "(deleted)"
        mine = c["mine"]["content"] if c["mine"] else "(deleted)"
        print(f"  conflict   {c['memory_id']}: changed here and by {c['theirs_by']}")
        print(f"    yours    {mine}")
        print(f"    theirs   {theirs} (server version {c['server_version']})")
        if c["theirs"] and (replaced := c["theirs"].get("replaced_by")):
            print(f"    replaced by {replaced['id']} there, not here: {replaced['why_not']}")
        print(f"    settle   mama team resolve {c['memory_id']} --keep mine|theirs")


def _when(ms: int | None) -> str:
    if ms is None:
        return "never"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))


@command("resolve", "settle a conflict sync raised by naming the version to keep")
@argument("id", help="the memory's id (`mama team status` lists the conflicts)")
@argument("--keep", required=True, choices=("mine", "theirs"), help="the version to keep")
def cmd_resolve(args: argparse.Namespace) -> int:
    """Keep one side of a conflict; ``mine`` reaches the team on the next sync."""
    from ..team.joining import resolve

    with open_store(args) as store:
        resolve(store, args.id, args.keep)
    then = "; `mama team sync` sends it" if args.keep == "mine" else ""
    print(f"{args.id}: kept {args.keep}{then}")
    return 0


@command("search", "search the memories of every team project this role was given")
@argument("text", help="words to look for")
@project_option("a directory of a connected project (its team database; default: here)")
@argument("--limit", type=int, default=10, help="how many results (default 10)")
@keyword_only_option()
@json_option()
def cmd_search(args: argparse.Namespace) -> int:
    """Print the team's best matches, each with its project and whether it is current."""
    from ..embeddings.protocol import query_vector_of
    from ..storage.team import outbox
    from ..team.search import search

    with open_store(args) as store:
        joined = outbox.require_project(store, project_of(args))
    embedder = optional_embedder(args, without="searching the team by words only")
    vector = query_vector_of(embedder, args.text) if embedder is not None else None
    hits = search(
        joined.url,
        args.text,
        limit=args.limit,
        vector=vector,
        model=embedder.name if embedder is not None else None,
    )
    if args.json:
        print_json([h.as_dict() for h in hits])
        return 0
    if not hits:
        print("no matching team memories")
    for rank, hit in enumerate(hits, start=1):
        mark = hit.status + (f" → {hit.replaced_by}" if hit.replaced_by else "")
        print(f"{rank:>2}. [{mark}] {hit.id} ({hit.type}, {hit.project}, by {hit.changed_by})")
        print(f"    {hit.topic + ': ' if hit.topic else ''}{hit.content}")
    return 0


@command("disconnect", "stop sharing this project (its unsent outbox is dropped)")
@project_option()
def cmd_disconnect(args: argparse.Namespace) -> int:
    """Forget this project's connection; the team database keeps what it has."""
    from ..storage.team import outbox

    project = project_of(args)
    with open_store(args) as store:
        dropped = outbox.disconnect(store, project)
    print(f"disconnected {project}; {dropped} unsent outbox entries dropped")
    return 0


@command("setup", "owner: create or upgrade MAMA's schema in the team database")
@argument("url", help="postgresql://OWNER@HOST/DB")
def cmd_setup(args: argparse.Namespace) -> int:
    """Climb the team database's migration ladder."""
    from ..team.admin import setup

    applied = setup(args.url)
    print("applied " + ", ".join(applied) if applied else "the schema is up to date")
    return 0


@command("grant", "owner: give a developer's role a team project (making either if new)")
@argument("url", help="postgresql://OWNER@HOST/DB")
@argument("role", help="the developer's role (made with LOGIN if it does not exist)")
@argument("project", help="the team project's name")
@argument("--password-env", metavar="VAR", help="set the role's password from this variable")
def cmd_grant(args: argparse.Namespace) -> int:
    """Give ``role`` the project ``project``."""
    from ..team.admin import grant

    password = None
    if args.password_env:
        password = os.environ.get(args.password_env)
        if not password:
            raise MamaError(f"${args.password_env} is empty: export the password first")
    done = grant(args.url, args.role, args.project, password=password)
    made = [w for w, new in (("role", done.role_created), ("project", done.project_created)) if new]
    print(
        f"{done.role} may read and write {done.project!r}"
        + (f" (new {' and '.join(made)})" if made else "")
    )
    return 0


@command("revoke", "owner: take a team project from a developer's role")
@argument("url", help="postgresql://OWNER@HOST/DB")
@argument("role", help="the developer's role")
@argument("project", help="the team project's name")
def cmd_revoke(args: argparse.Namespace) -> int:
    """Take ``project`` from ``role``; the role and the project's memories stay."""
    from ..team.admin import revoke

    had = revoke(args.url, args.role, args.project)
    print(f"{args.role} " + ("no longer reads " if had else "did not have ") + repr(args.project))
    return 0


@command("audit", "the newest changes of a team project: who, what, when (append-only)")
@argument("--url", help="the team database (default: this project's connection)")
@argument("--team-project", help="the team project's name (default: this project's)")
@project_option()
@argument("--limit", type=int, default=20, help="how many entries (default 20)")
@json_option()
def cmd_audit(args: argparse.Namespace) -> int:
    """Print the audit trail this role may read."""
    from ..storage.team import outbox
    from ..team.admin import audit

    url, name = args.url, args.team_project
    if not (url and name):
        with open_store(args) as store:
            joined = outbox.require_project(store, project_of(args))
        url, name = url or joined.url, name or joined.remote
    rows = audit(url, name, args.limit)
    if args.json:
        print_json(rows)
        return 0
    for row in rows:
        version = f" v{row['version']}" if row["version"] else ""
        print(
            f"{row['at']:%Y-%m-%d %H:%M:%S}  {row['actor']:<12} {row['op']:<8} "
            f"{row['kind']} {row['key']}{version}"
        )
    return 0


cmd_team = Group(
    "team",
    "share this project's memories through a team database (PostgreSQL + pgvector)",
    lambda _args: 2,
    (),
    (
        cmd_connect,
        cmd_sync,
        cmd_status,
        cmd_search,
        cmd_resolve,
        cmd_disconnect,
        cmd_setup,
        cmd_grant,
        cmd_revoke,
        cmd_audit,
    ),
)
