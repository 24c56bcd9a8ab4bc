"""This clone's side of sharing: which memories are shared, and each one as its file text.

Every text passes the privacy filter with personal data masked whatever ``keep_personal_data``
says (a repository is read by more people than its author): ``<private>`` spans never reach
the store, and what the filter masks on read stays masked in ``.mama/``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..privacy import redact_text
from ..storage import MemoryRecord, Store
from ..storage.records import masked
from .files import LAYERS, SharedLink, SharedMemory, digest, render

DEFAULT_TYPES = ("decision", "insight")


@dataclass(frozen=True)
class Rendered:
    """A memory's file text, its hash, and what still looks like a secret in it (withheld)."""

    memory: MemoryRecord
    text: str
    hash: str
    suspect: tuple[str, ...] = ()


def shared_types(setting: str, *, checkpoints: bool = False) -> tuple[str, ...]:
    """The types to share: the ``share_types`` setting, plus checkpoints when asked."""
    kinds = tuple(t for t in setting.split(",") if t)
    return (*kinds, "checkpoint") if checkpoints and "checkpoint" not in kinds else kinds


def local_memories(
    store: Store, project: str, types: Iterable[str], *, rolling: bool = False
) -> dict[str, MemoryRecord]:
    """The project's memories of ``types``, by id; the Stop hook's rolling checkpoints only
    when ``rolling``."""
    kinds = set(types)
    return {
        m.id: m
        for m in store.memories.iter(project=project)
        if m.type in kinds and (rolling or not m.rolling)
    }


def as_shared(store: Store, memory: MemoryRecord) -> SharedMemory:
    """``memory`` as its file states it, with every link leaving it (an importer skips one
    whose target it does not have)."""
    layers = {name: getattr(memory, name) for name, _, _ in LAYERS if name != "outcome"}
    layers["outcome"] = memory.outcome
    fields: dict[str, Any] = {
        "topic": memory.topic,
        "content": memory.content,
        "tags": list(memory.tags),
        "layers": layers,
        "links": [
            [ln.to_id, ln.relationship, ln.reason]
            for ln in store.links.of(memory.id, direction="out")
        ],
    }
    # The row was read masked already; with keep_personal_data on, personal data was let
    # through, and one pass over the texts joined (``masked``) takes it out here.
    clean = fields if store.masks_personal_data else {**fields, **masked(fields, personal=True)}
    return SharedMemory(
        id=memory.id,
        type=memory.type,
        topic=clean["topic"],
        status=memory.status,
        outcome_status=memory.outcome_status,
        confidence=memory.confidence,
        tags=tuple(clean["tags"]),
        links=tuple(SharedLink(*ln) for ln in clean["links"]),
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        content=clean["content"],
        layers=clean["layers"],
    )


def rendered(store: Store, memory: MemoryRecord, *, passed: str = "") -> Rendered:
    """``memory``'s file text; ``suspect`` names what the filter still finds in the whole text
    (a secret split across fields), in which case the file must not be written. ``passed``
    is the hash of a text that passed already (the last shared one): not checked again."""
    text = render(as_shared(store, memory))
    hashed = digest(text)
    found = redact_text(text, personal=True)[1] if hashed != passed else {}
    return Rendered(memory, text, hashed, tuple(sorted(found)))
