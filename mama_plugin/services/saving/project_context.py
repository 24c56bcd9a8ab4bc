"""A project's context in one view: what it is, what it decided, what rests on what, what has
gone stale, the tags it uses and what its outcomes taught.

The description is a ``context`` memory tagged ``project`` (topic ``project description``);
describing the project again saves a new one and the newest is told, the earlier ones kept as
its history. Everything else is read from the store. :func:`context_text` is the text ``mama
context`` and the ``project_context`` tool show.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ...storage import MemoryRecord, Store
from ..evolution import outcome_events
from ..learning.hubs import Hub, hubs
from ..learning.staleness import Staleness, decaying
from ..learning.teaching import Learned, learned
from ..learning.views import when
from ..render import clip, confidence
from .memories import SaveResult, save_context

TAG = "project"
TOPIC = "project description"
KEY_DECISIONS = 5
TAGS_TOLD = 10
_OWN_TAGS = frozenset({TAG, "outcome"})  # MAMA's own tags, not the project's words


@dataclass
class ProjectContext:
    """One project's context, as the store holds it now."""

    project: str
    description: MemoryRecord | None = None
    key_decisions: list[tuple[MemoryRecord, int]] = field(default_factory=list)  # with refs
    hubs: list[Hub] = field(default_factory=list)
    stale: list[Staleness] = field(default_factory=list)
    tags: list[tuple[str, int]] = field(default_factory=list)
    learned: Learned | None = None
    counts: dict[str, int] = field(default_factory=dict)  # current memories by type

    def as_dict(self) -> dict[str, Any]:
        d = self.description
        return {
            "project": self.project,
            "description": {"id": d.id, "content": d.content, "created_at": d.created_at}
            if d
            else None,
            "key_decisions": [
                {
                    **m.fields("id", "topic", "content", "confidence"),
                    "outcome": m.outcome_status,
                    "references": n,
                }
                for m, n in self.key_decisions
            ],
            "hubs": [h.as_dict() for h in self.hubs],
            "stale": [s.as_dict() for s in self.stale],
            "tags": dict(self.tags),
            "learned": self.learned.as_dict() if self.learned else None,
            "counts": dict(self.counts),
        }


def describe(store: Store, project: str, text: str) -> SaveResult:
    """Save ``text`` as the project's description (the newest is the one told)."""
    return save_context(store, project, {"topic": TOPIC, "content": text, "tags": [TAG]})


def project_context(store: Store, project: str) -> ProjectContext:
    """Gather ``project``'s context. Read-only."""
    memories = list(store.memories.iter(project=project))
    events = outcome_events(store, memories)
    current = [m for m in memories if m.status == "current" and m.id not in events]
    out = ProjectContext(project)
    described = [m for m in current if m.type == "context" and TAG in m.tags and m.topic == TOPIC]
    out.description = max(described, key=lambda m: (m.created_at, m.seq), default=None)
    decisions = [m for m in current if m.type == "decision"]
    refs = store.references.counts(m.id for m in decisions)
    ranked = sorted(
        decisions, key=lambda m: (-refs.get(m.id, 0), -m.confidence, -m.created_at, -m.seq)
    )
    out.key_decisions = [(m, refs.get(m.id, 0)) for m in ranked[:KEY_DECISIONS]]
    out.hubs = hubs(store, project)
    out.stale = decaying(store, project)
    words = Counter(t for m in current for t in m.tags if t not in _OWN_TAGS)
    out.tags = words.most_common(TAGS_TOLD)
    out.learned = learned(store, project)
    out.counts = dict(Counter(m.type for m in current))
    return out


def context_text(ctx: ProjectContext) -> str:
    """The context as a few short sections (memory text clipped to one line each)."""
    lines = [f"Project {ctx.project}"]
    if ctx.description is not None:
        d = ctx.description
        lines.append(f"About it ({when(d.created_at)[:10]}, {d.id}): {clip(d.content, 400)}")
    else:
        lines.append("No description yet (`mama context --describe TEXT` saves one).")
    held = ", ".join(f"{n} {kind}s" for kind, n in sorted(ctx.counts.items()))
    lines.append(f"Holds: {held or 'nothing yet'}.")
    if ctx.key_decisions:
        lines.append("Key decisions:")
        for m, n in ctx.key_decisions:
            verdict = f", {m.outcome_status}" if m.outcome_status != "PENDING" else ""
            refs = f", {n} references" if n else ""
            lines.append(
                f"- {m.id} [{m.topic}]: {clip(m.content, 160)} "
                f"({confidence(m.confidence)}{verdict}{refs})"
            )
    if ctx.hubs:
        told = ", ".join(
            f"{h.memory.id} ({len(h.referrers)}{', review' if h.review else ''})" for h in ctx.hubs
        )
        lines.append(f"Hubs: {told}.")
    if ctx.stale:
        told = ", ".join(f"{s.memory.id} ({s.category})" for s in ctx.stale[:8])
        more = len(ctx.stale) - 8
        lines.append(
            f"Stale (verify before relying on them): {told}"
            + (f" and {more} more" if more > 0 else "")
            + "."
        )
    if ctx.tags:
        lines.append("Tags: " + ", ".join(f"{t} ×{n}" for t, n in ctx.tags) + ".")
    done = ctx.learned
    if done is not None and done.judged:
        rate = done.success_rate or 0.0
        passed = when(done.last_pass) if done.last_pass else "never"
        lines.append(
            f"Learning: {done.judged} outcome{'' if done.judged == 1 else 's'}, success rate "
            f"{rate:.0%}, {done.moves} "
            f"confidence moves, last learn pass {passed}."
        )
    elif done is not None:
        lines.append("Learning: no outcome recorded yet.")
    return "\n".join(lines)
