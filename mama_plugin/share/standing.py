"""Whether a memory stands or was replaced, as an import from ``.mama/`` may take it.

A file's ``status: superseded`` and a file's ``supersedes`` link are two halves of one verdict:
an import takes them together, as a local supersede is taken
(:meth:`~mama_plugin.storage.links.Links.add` marks the target in the link's transaction), or
the file waits beside this clone's version as a conflict. Never one half: a decision a link
replaces left current, or one superseded with nothing replacing it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..relationships import REPLACING
from ..storage import LinkRecord, Store
from .files import SharedMemory


def claimed(memories: Iterable[SharedMemory | None]) -> set[str]:
    """The ids some of ``memories`` say they replace."""
    return {ln.to for m in memories if m for ln in m.links if ln.relationship in REPLACING}


def replaced_by(store: Store, memory_id: str, but: str = "") -> list[str]:
    """What replaces ``memory_id`` here (other than ``but``)."""
    return [
        ln.from_id
        for ln in store.links.of(memory_id, direction="in")
        if ln.relationship in REPLACING and ln.from_id != but
    ]


def unreplaced(store: Store, m: SharedMemory, replacing: set[str]) -> str:
    """Why ``m``'s file cannot be taken as it says (it says superseded, and nothing here or in
    ``replacing`` replaces it); "" when it can."""
    if m.status != "superseded" or m.id in replacing or replaced_by(store, m.id):
        return ""
    return f"says {m.id} was superseded, but nothing here or in .mama/ replaces it"


def supersede(
    store: Store, from_id: str, to_id: str, relationship: str, reason: str
) -> LinkRecord | str:
    """``from_id`` replaces ``to_id``: the link, ``to_id`` marked superseded with it (unless
    its own file said so already); or why not (another memory replaced it here)."""
    if others := replaced_by(store, to_id, from_id):
        return f"{from_id} supersedes {to_id}, which {', '.join(others)} replaced here"
    target = store.memories.require(to_id)
    link, _ = store.links.add(
        from_id, to_id, relationship, reason, mark_target=target.status == "current"
    )
    return link
