"""What the story tells of memories whose cited files changed since they were recorded.

:func:`flag` checks the memories a :class:`~.records.Story` tells (its checkpoint and its
decisions, :func:`..verify.check`) and gives each changed one its verify line; a ✅ confirmed
item naming a changed file is told as "was confirmed; <path> changed since" instead. Nothing
changes in a story whose files are as recorded: the session start stays byte-identical.
"""

from __future__ import annotations

from ...storage import Store
from ..verify import HOW, Change, check
from .records import Story

SAID_FILES = 2  # changed files a line names; the rest are counted


def line(changes: list[Change]) -> str:
    """One verify line for a memory's changes: "verify: a.tf changed since this was decided
    (3 commits, last 2026-11-20); 2 more files — `mama verify ID` or record an outcome"."""
    said = "; ".join(c.said for c in changes[:SAID_FILES])
    more = len(changes) - SAID_FILES
    if more > 0:
        said += f"; {more} more file{'s' if more > 1 else ''}"
    return f"verify: {said} — {HOW.format(id=changes[0].memory_id)}"


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
