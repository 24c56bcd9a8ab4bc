"""What a memory's open conflicts say: a teammate's version kept beside this one.

Two paths keep one: ``mama share`` (a file in the repository's ``.mama/`` changed by a
teammate while this clone changed the memory too) and the team store (a teammate's push over
the version this developer last saw). Nothing is settled here; each line names the command
that settles it. ``load_context`` tells them with the memory, so Claude sees both versions.
Read-only.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...storage import MemoryRecord, Store
from ...storage.shared_files import SharedFiles
from ...storage.team.conflicts import open_conflicts

THEIRS_CHARS = 600  # of a teammate's version told: enough for its decision and its why


@dataclass(frozen=True)
class OpenConflict:
    """A teammate's version of a memory kept beside this one, and how to settle it."""

    where: str  # "share" (.mama/ in the repository) or "team" (the team database)
    theirs: str  # the teammate's version, told (clipped); "" when they deleted it
    settle: str  # the command that keeps one side

    def said(self) -> str:
        source = "in the repository's .mama/" if self.where == "share" else "on the team database"
        version = f":\n{self.theirs}" if self.theirs else ": they deleted it"
        return f"A teammate's version {source} differs ({self.settle}){version}"


def conflicts_of(store: Store, m: MemoryRecord) -> list[OpenConflict]:
    """The open conflicts of ``m``, from the repository's share and the team store."""
    found = [
        OpenConflict(
            "share",
            c.theirs.strip()[:THEIRS_CHARS],
            f"`mama share --resolve {m.id} --keep mine|theirs`",
        )
        for c in SharedFiles(store).conflicts(m.project)
        if c.memory_id == m.id
    ]
    for c in open_conflicts(store, m.project):
        if c.memory_id != m.id:
            continue
        told = ""
        if c.theirs is not None:
            why = (c.theirs.get("reasoning") or {}).get("primary", "")
            told = str(c.theirs.get("content", "")) + (f" — because {why}" if why else "")
            if replaced := c.theirs.get("replaced_by"):  # a supersede not taken here
                told = f"replaced by {replaced['id']} ({replaced['why_not']}); " + told
            told = (f"{c.theirs_by}: " if c.theirs_by else "") + told[:THEIRS_CHARS]
        found.append(OpenConflict("team", told, f"`mama team resolve {m.id} --keep mine|theirs`"))
    return found
