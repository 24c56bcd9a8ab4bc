"""The global scope: memories every project inherits, promoted from a project on purpose.

The user's own preferences and patterns ("prefers explicit migrations", "always load-tests
auth changes") hold in every project. A memory moves there with :func:`promote` (``mama
promote ID``) and back into a project with :func:`demote`; nothing moves on its own. Searches
of a project and its session start read the global scope beside the project's own
(:func:`inherited`, :func:`told_everywhere`). It is never shared with a team: sharing and
team sync read one project's memories, and the global scope is no project.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ValidationError
from ..project import GLOBAL
from ..storage import MemoryRecord, Scope, Store

__all__ = ["GLOBAL", "Moved", "demote", "inherited", "promote", "told_everywhere"]

PROMOTABLE = ("decision", "insight", "context")
TOLD = 3  # global memories the session start names


@dataclass(frozen=True)
class Moved:
    """A memory moved between scopes: where it is now and where it came from."""

    memory: MemoryRecord
    came_from: str

    def summary(self) -> str:
        m = self.memory
        if m.project == GLOBAL:
            return (
                f"{m.id} ({m.type}, {m.topic}) is global now: every project's search and session "
                f"start read it. It came from {self.came_from}; `mama promote {m.id} --back` "
                "returns it there."
            )
        return f"{m.id} ({m.type}, {m.topic}) belongs to {m.project} again, not to every project."

    def as_dict(self) -> dict[str, str]:
        return {"id": self.memory.id, "scope": self.memory.project, "came_from": self.came_from}


def inherited(store: Store, project: Scope) -> Scope:
    """``project`` and the global scope it inherits, when there is anything global to read."""
    if isinstance(project, str) and project != GLOBAL and store.memories.held_by(GLOBAL):
        return (project, GLOBAL)
    return project


def told_everywhere(store: Store, *, limit: int = TOLD) -> list[MemoryRecord]:
    """The global memories a session start names: current ones, most used, then newest."""
    rows = store.memories.recent(project=GLOBAL, limit=4 * limit + 20)
    standing = [m for m in rows if m.status == "current" and m.type in PROMOTABLE]
    standing.sort(key=lambda m: (-m.times_used, -m.created_at))
    return standing[:limit]


def promote(store: Store, memory_id: str) -> Moved:
    """Make a project's memory global. Raises ValidationError for a checkpoint (one session's
    work in one project) or a memory that is global already; NotFoundError for an unknown id."""
    found = store.memories.require(memory_id)
    if found.project == GLOBAL:
        raise ValidationError([f"{memory_id} is global already"])
    if found.type not in PROMOTABLE:
        raise ValidationError(
            [
                f"{memory_id} is a {found.type}: one session's work in one project. Save what "
                "holds in every project as an insight or a decision, then promote that"
            ]
        )
    return Moved(store.memories.rescope(memory_id, GLOBAL), found.project)


def demote(store: Store, memory_id: str, project: str) -> Moved:
    """Return a global memory to ``project``. Raises ValidationError for one not global."""
    found = store.memories.require(memory_id)
    if found.project != GLOBAL:
        raise ValidationError([f"{memory_id} is not global: it belongs to {found.project}"])
    return Moved(store.memories.rescope(memory_id, project), GLOBAL)
