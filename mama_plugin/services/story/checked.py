"""What the story tells of memories whose cited files changed since they were recorded.

:func:`flag` checks the memories a :class:`~.records.Story` tells (its checkpoint and its
decisions, :func:`..verify.check`) and gives each changed one its verify line; a ✅ confirmed
item naming a changed file is told as "was confirmed; <path> changed since" instead. Nothing
changes in a story whose files are as recorded: the session start stays byte-identical.
"""

from __future__ import annotations

from ...storage import Store
from ..verify import check, line
from .records import Story


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
