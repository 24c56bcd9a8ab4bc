"""The global scope: memories every project inherits, promoted from a project on purpose.

The user's own preferences and patterns ("prefers explicit migrations", "always load-tests
auth changes") hold in every project. A memory moves there with :func:`promote` (``mama
promote ID``) and back into a project with :func:`demote`; nothing moves on its own. Searches
of a project and its session start read the global scope beside the project's own
(:func:`inherited`, :func:`told_everywhere`). What several projects say alike is offered for
promotion (:func:`seen_across`, ``mama promote --suggest``). It is never shared with a team:
sharing and team sync read one project's memories, and the global scope is no project.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...errors import ValidationError
from ...groups import Groups
from ...project import GLOBAL
from ...storage import MemoryRecord, Scope, Store

PROMOTABLE = ("decision", "insight", "context")
TOLD = 3  # global memories the session start names
CHUNK = 512  # rows of the cosine matrix computed at once


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


@dataclass(frozen=True)
class Pattern:
    """The same decision, insight or context said in several projects: a promotion to offer."""

    memories: list[MemoryRecord]  # one or more a project, the newest first
    cosine: float  # the lowest cosine that joined them

    @property
    def projects(self) -> list[str]:
        return sorted({m.project for m in self.memories})

    def summary(self) -> str:
        newest = self.memories[0]
        where = ", ".join(f"{m.id} in {m.project}" for m in self.memories)
        return (
            f"Seen in {len(self.projects)} projects (cosine ≥ {self.cosine:.2f}): "
            f"{newest.content[:160]} — {where}. `mama promote {newest.id}` keeps it for every "
            "project."
        )


def seen_across(store: Store) -> list[Pattern]:
    """Current decisions, insights and contexts that near-duplicate one another across
    projects (at the store's model's near-duplicate bar, its card's, :func:`.duplicates.bar`), most
    projects first. A model without a measured bar (multilingual-e5) finds none; so does a
    memory not embedded yet. Read-only."""
    from .duplicates import bar as duplicate_bar

    model, _ = store.vectors.recorded_model()
    bar = duplicate_bar(model or "")
    rows = [row for row in store.vectors.load() if row[1] != GLOBAL]
    if bar is None or len({project for _, project, _ in rows}) < 2:
        return []
    found = store.memories.get_by_seq(seq for seq, _, _ in rows)
    kept = [
        (seq, blob)
        for seq, _, blob in rows
        if seq in found and found[seq].type in PROMOTABLE and found[seq].status == "current"
    ]
    try:
        import numpy as np
    except ImportError:  # the local-model extra is not installed: no vectors to compare
        return []
    if len(kept) < 2:
        return []
    matrix = np.stack([np.frombuffer(blob, dtype=np.float32) for _, blob in kept])
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    alike = Groups(range(len(kept)))
    lowest: dict[int, float] = {}
    for start in range(0, len(kept), CHUNK):
        sims = matrix[start : start + CHUNK] @ matrix.T
        for i, j in zip(*np.nonzero(sims >= bar), strict=True):
            a, b = start + int(i), int(j)
            if a < b and found[kept[a][0]].project != found[kept[b][0]].project:
                ra, rb = alike.root(a), alike.root(b)
                cosine = min(float(sims[i, j]), lowest.get(ra, 1.0), lowest.get(rb, 1.0))
                lowest[alike.join(a, b)] = cosine
    groups = {r: [found[kept[i][0]] for i in members] for r, members in alike.members().items()}
    patterns = [
        Pattern(sorted(ms, key=lambda m: -m.created_at), lowest[r])
        for r, ms in groups.items()
        if len({m.project for m in ms}) >= 2
    ]
    return sorted(patterns, key=lambda p: (-len(p.projects), -p.memories[0].created_at))
