"""What the story tells of memories whose cited files changed since they were recorded.

:func:`flag` checks the memories a :class:`~.records.Story` tells (its checkpoint and its
decisions, :func:`..verify.check`) and gives each changed one its verify line; a ✅ confirmed
item naming a changed file is told as "was confirmed; <path> changed since" instead. Nothing
changes in a story whose files are as recorded: the session start stays byte-identical.
:func:`flagged` lists every memory of a project the same check flags (``mama verify
--list``). Read-only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...storage import MemoryRecord, Store
from ..learning.verify import Change, check, line
from .records import Story
from .resume import resume_point

LISTED = 50  # memories ``mama verify --list`` tells (git asked for these alone)


@dataclass(frozen=True)
class Flagged:
    """The memories of a project whose cited files changed, decisions first, newest first.

    ``told``: (memory, its changes) for the first ``limit``, their history asked of git;
    ``more``: how many further ones are flagged; ``checked``: how many memories were checked.
    """

    project: str
    told: list[tuple[MemoryRecord, list[Change]]] = field(default_factory=list)
    more: int = 0
    checked: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "checked": self.checked,
            "flagged": [
                {
                    **m.fields("id", "type", "topic", "content"),
                    "changed": [c.said for c in changes],
                    "verify": f"mama verify {m.id}",
                    "forget": f"mama forget {m.id}",
                }
                for m, changes in self.told
            ],
            "more": self.more,
        }


def flagged(store: Store, project: str, *, limit: int = LISTED, git: bool = True) -> Flagged:
    """Every memory of ``project`` a session start or a search would flag as changed.

    Checked: the memories that record files and still stand (not superseded) — of the
    checkpoints, only the one the session start resumes from (older ones tell where work
    stood then; later work changes their files by design). Stat calls and hashes for all
    (:func:`..verify.check`); git, when ``git``, for the ``limit`` told only.
    """
    ids = list(dict.fromkeys(c.memory_id for c in store.file_states.of_project(project)))
    resumed = resume_point(store, project).checkpoint
    standing = [
        m
        for m in store.memories.get_many(ids).values()
        if m.status != "superseded"
        and (m.type != "checkpoint" or (resumed is not None and m.id == resumed.id))
    ]
    found = check(store, standing)
    order = sorted(
        (m for m in standing if m.id in found),
        key=lambda m: (m.type != "decision", -m.updated_at, m.id),
    )
    told = order[:limit]
    if git and told:
        found = check(store, told, git=True)
    return Flagged(
        project,
        [(m, found[m.id]) for m in told if m.id in found],
        len(order) - len(told),
        len(standing),
    )


def flag(store: Store, facts: Story, *, git: bool) -> Story:
    """Give ``facts`` what changed under the memories it tells (in place; returned).

    ``git``: ask git what it knows of each change (never on a hook's path); without it, a
    change whose history the cache does not hold yet leaves ``facts.checked_later`` set, so
    the text is not cached as final.
    """
    told = ([facts.cp] if facts.cp is not None else []) + [d.m for d in facts.decisions]
    if not told:
        return facts
    changes = check(store, told, git=git)
    if not changes:
        return facts
    facts.checked_later = any(c.pending for cs in changes.values() for c in cs)
    for d in facts.decisions:
        if d.m.id in changes:
            d.verify = line(changes[d.m.id])
    if facts.cp is not None and facts.cp.id in changes:
        mine = changes[facts.cp.id]
        facts.verify = line(mine)
        kept: list[str] = []
        for item in facts.confirmed:
            path = next((c.path for c in mine if c.path in item), None)
            if path is None:
                kept.append(item)
            else:
                facts.unconfirmed.append(f"was confirmed; {path} changed since: {item}")
        facts.confirmed = kept
    return facts
