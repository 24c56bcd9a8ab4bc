"""Connecting a project to a team database, and resolving the conflicts sync raised.

``join`` checks everything a sync will need before anything is written locally: the URL, the
server reached, MAMA's schema there at the latest step, and the project given to this role.
A conflict is resolved only by a person naming the side to keep.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import TeamAccessError, TeamError
from ..storage.team import conflicts, outbox
from ..storage.team.apply import refusal, supersede, write_memory
from . import remote
from .connection import check_url, connect
from .server_schema import require_latest

if TYPE_CHECKING:
    from ..storage import Store


@dataclass(frozen=True)
class Joined:
    """A project connected: its name on the server, the role, what was queued to push."""

    project: str
    remote: str
    role: str
    queued: int
    password_dropped: bool


def join(store: Store, project: str, url: str, name: str) -> Joined:
    """Connect ``project`` to the team project ``name`` at ``url``; raises TeamError (nothing
    written) when the database cannot be reached, is not set up or refuses this role."""
    if not name.strip():
        raise TeamError("the team project needs a name (--as NAME)")
    kept, had_password = check_url(url)
    with connect(url) as conn:
        require_latest(conn, name)
        role = remote.role(conn)
        if not remote.may_read(conn, name):
            raise TeamAccessError(
                f"role {role} was not given the team project {name!r}; the team's admin runs "
                f"`mama team grant URL {role} {name}`"
            )
    queued = outbox.connect_project(store, project, name, kept)
    return Joined(project, name, role, queued, had_password)


def resolve(store: Store, memory_id: str, keep: str) -> conflicts.Conflict:
    """Settle the open conflict of ``memory_id``: ``mine`` pushes the local version over the
    teammate's on the next sync, ``theirs`` takes the teammate's version here now (a supersede
    kept in it through the one path a local supersede takes). Raises TeamError, nothing
    changed, when that supersede still cannot be taken here."""
    found = next((c for c in conflicts.open_conflicts(store) if c.memory_id == memory_id), None)
    if found is None:
        raise TeamError(f"{memory_id} has no open conflict (`mama team status` lists them)")
    if keep not in ("mine", "theirs"):
        raise TeamError(f"keep 'mine' or 'theirs' (got {keep!r})")
    theirs = None if found.theirs is None else dict(found.theirs)
    replaced = None if theirs is None else theirs.pop("replaced_by", None)
    with outbox.applying(store):
        if keep == "theirs":
            write_memory(store, found.project, memory_id, theirs, None)
            if replaced is not None:
                _take_supersede(store, found.project, memory_id, replaced)
            their_digest = "" if theirs is None else outbox.digest(theirs)
            outbox.remember(store, {memory_id: (found.server_version, their_digest)})
            outbox.unqueue(store, memory_id)
        else:
            outbox.remember(store, {memory_id: (found.server_version, "")})
            outbox.queue(store, found.project, memory_id)
        conflicts.settled(store, found.id, keep)
    return found


def _take_supersede(store: Store, project: str, memory_id: str, replaced: dict[str, Any]) -> None:
    successor, relationship = str(replaced["id"]), str(replaced["relationship"])
    if why := refusal(store, successor, memory_id, relationship):
        raise TeamError(
            f"cannot take the teammate's supersede: {why}; keep 'mine', or supersede "
            "what stands here once it has synced"
        )
    link = {k: v for k, v in replaced.items() if k not in ("id", "relationship", "why_not")}
    if supersede(store, project, successor, memory_id, relationship, link, "") != "inserted":
        raise TeamError(f"cannot take the teammate's supersede of {memory_id} by {successor}")
