"""Decisions imported from MAMA v1.0 without narrative, and the offer to add it. Read-only.

MAMA v1.0 stored a decision as a topic, a sentence and one reasoning string: an imported one
(``metadata.imported_from`` ``mama-v1``, :mod:`~mama_plugin.transfer.v1`) has no specifics, no
alternatives considered and no evidence until someone adds them. Every answer that tells such
a decision (a search, ``load_context``) says what it lacks and names the ``update_memory`` call
that adds it, at the version read; ``mama enrich`` lists them, each with the draft
:mod:`mama_plugin.assist.enrich` reads in :func:`own_text` (never written unasked).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ...storage import MemoryRecord, Scope, Store

ORIGIN = "mama-v1"
LAYERS = ("specifics", "alternatives", "evidence")
OFFERED = 3  # decisions an answer names; ``mama enrich`` lists every one
# What each layer looks like in the update_memory call the offer names.
_SHAPES = {
    "specifics": 'specifics=["<a measured figure, with its unit>"]',
    "evidence": 'evidence=[{"source": "<file:lines, benchmark or URL>", '
    '"detail": "<what it shows>"}]',
    "alternatives": 'reasoning={"primary": <as stored>, "alternatives_considered": '
    '[{"option": "<what else was considered>", "rejected_because": "<why it lost>"}]}',
}


def missing(memory: MemoryRecord) -> tuple[str, ...]:
    """The narrative layers an imported v1.0 decision lacks (empty for any other memory)."""
    if memory.type != "decision" or memory.metadata.get("imported_from") != ORIGIN:
        return ()
    have = {
        "specifics": bool(memory.specifics),
        "alternatives": bool((memory.reasoning or {}).get("alternatives_considered")),
        "evidence": bool(memory.evidence),
    }
    return tuple(layer for layer in LAYERS if not have[layer])


def call(memory: MemoryRecord, lacking: Iterable[str]) -> str:
    """The ``update_memory`` call that adds ``lacking`` to ``memory``, at its version."""
    shapes = " ".join(_SHAPES[layer] for layer in LAYERS if layer in set(lacking))
    return f"update_memory memory_id={memory.id} expected_version={memory.version} {shapes}"


@dataclass(frozen=True)
class Enrichable:
    """An imported v1.0 decision lacking narrative: what it lacks and the call that adds it."""

    memory: MemoryRecord
    missing: tuple[str, ...]

    @property
    def call(self) -> str:
        """The ``update_memory`` call that adds what it lacks."""
        return call(self.memory, self.missing)

    def as_dict(self) -> dict[str, Any]:
        m = self.memory
        return {
            **m.fields("id", "topic", "content", "version"),
            "missing": list(self.missing),
            "update": self.call,
        }


def own_text(memory: MemoryRecord) -> str:
    """Everything the memory itself recorded in words: its decision, reasons, outcome and the
    v1.0 columns kept in ``metadata.legacy``."""
    reasoning = memory.reasoning or {}
    parts: list[str] = [memory.content, str(reasoning.get("primary") or "")]
    parts += [str(s) for s in reasoning.get("secondary") or []]
    parts += [str(memory.outcome.get(k) or "") for k in ("details", "learned")]
    legacy = memory.metadata.get("legacy") or {}
    parts += [v for v in legacy.values() if isinstance(v, str)]
    return "\n".join(p.strip().rstrip(".") + "." for p in parts if p.strip())


def unenriched(store: Store, project: Scope) -> list[Enrichable]:
    """The imported v1.0 decisions of ``project`` (None: every project) lacking narrative,
    oldest first."""
    out = []
    for memory in store.memories.imported(ORIGIN, project=project, type="decision"):
        lacking = missing(memory)
        if lacking:
            out.append(Enrichable(memory, lacking))
    return out


def offer(memories: Iterable[MemoryRecord]) -> str:
    """One line for an answer, after its fence: the told v1.0 decisions lacking narrative (at
    most :data:`OFFERED`) and the call that adds it ("" when none lacks any)."""
    lacking = [(m, gaps) for m in memories if (gaps := missing(m))]
    if not lacking:
        return ""
    shown = lacking[:OFFERED]
    named = "; ".join(f"{m.id} lacks {', '.join(g)}" for m, g in shown)
    more = (
        f"; {len(lacking) - len(shown)} more (`mama enrich` lists them)"
        if lacking[OFFERED:]
        else ""
    )
    first = shown[0][0]
    union = {g for _, found in shown for g in found}
    each = " (each at its own id and version)" if len(shown) > 1 else ""
    return (
        f"(Imported from MAMA v1.0 without narrative: {named}{more}. If the user knows them, "
        f"add them{each}: {call(first, union)}.)"
    )
