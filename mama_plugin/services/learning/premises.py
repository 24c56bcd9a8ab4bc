"""Premises: verified facts decisions rest on, reused and judged by how those decisions fared.

A premise is an insight tagged ``premise`` with a domain (a ``domain:NAME`` tag; its topic
when it has none): "the service must handle 10k req/s". A decision cites it with a link that
carries trust (``depends_on``, ``rests_on``, … :func:`.learning.carries`), so an outcome of
the decision moves the premise's confidence too. Its uses are the decisions citing it; its
success rate is theirs (SUCCESS, PARTIAL as half, among the judged); its freshness is
:mod:`.staleness`'s (a ``domain:performance`` premise decays as performance facts do).
Read-only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...storage import MemoryRecord, Store
from ..render import clip, confidence
from .confidence import carries
from .staleness import Staleness, assess

TAG = "premise"
_WON = {"SUCCESS": 1.0, "PARTIAL": 0.5}  # what a verdict counts toward the success rate
DOMAIN = "domain:"


def is_premise(memory: MemoryRecord) -> bool:
    return memory.type == "insight" and TAG in (t.casefold() for t in memory.tags)


def domain_of(memory: MemoryRecord) -> str:
    """Its ``domain:NAME`` tag's name, else its topic, else "general"."""
    for tag in memory.tags:
        if tag.casefold().startswith(DOMAIN) and tag[len(DOMAIN) :].strip():
            return tag[len(DOMAIN) :].strip().casefold()
    return memory.topic.strip().casefold() or "general"


@dataclass(frozen=True)
class Premise:
    """A premise with how it has been used and how the decisions citing it fared."""

    memory: MemoryRecord
    domain: str
    cited_by: tuple[MemoryRecord, ...]  # decisions resting on it
    staleness: Staleness | None

    @property
    def uses(self) -> int:
        return len(self.cited_by)

    @property
    def success_rate(self) -> float | None:
        judged = [d for d in self.cited_by if d.outcome_status in ("SUCCESS", "PARTIAL", "FAILED")]
        if not judged:
            return None
        won = sum(_WON.get(d.outcome_status, 0.0) for d in judged)
        return won / len(judged)

    def said(self) -> str:
        """``ins_… (performance): the service must handle 10k req/s (0.96, 5 uses, 83%
        success, fresh)``."""
        rate = self.success_rate
        uses = f"{self.uses} use" + ("" if self.uses == 1 else "s")
        figures = [confidence(round(self.memory.confidence, 4)), uses]
        if rate is not None:
            figures.append(f"{rate:.0%} success")
        if self.staleness is not None:
            figures.append(self.staleness.category)
        return (
            f"{self.memory.id} ({self.domain}): {clip(self.memory.content, 160)} "
            f"({', '.join(figures)})"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.memory.id,
            "domain": self.domain,
            "content": self.memory.content,
            "confidence": self.memory.confidence,
            "uses": self.uses,
            "cited_by": [d.id for d in self.cited_by],
            "success_rate": self.success_rate,
            "freshness": self.staleness.category if self.staleness else None,
        }


def _told(store: Store, found: Iterable[MemoryRecord]) -> list[Premise]:
    premises = [m for m in found if is_premise(m)]
    stale = assess(store, premises)
    out = []
    for p in premises:
        citing = [ln.from_id for ln in store.links.of(p.id, direction="in") if carries(ln)]
        decisions = store.memories.get_many(citing)
        cited = tuple(
            sorted(
                (d for d in decisions.values() if d.type == "decision"),
                key=lambda d: (d.created_at, d.seq),
            )
        )
        out.append(Premise(p, domain_of(p), cited, stale.get(p.id)))
    return out


_ORDER = {"fresh": 0, "aging": 1, "stale": 2, "expired": 3}


def premises(store: Store, project: str, domain: str | None = None) -> list[Premise]:
    """The project's current premises (of ``domain``, when given), freshest first, then the
    most used."""
    current = [m for m in store.memories.iter(project=project) if m.status == "current"]
    found = _told(store, current)
    if domain is not None:
        found = [p for p in found if p.domain == domain.strip().casefold()]
    return sorted(
        found,
        key=lambda p: (
            _ORDER.get(p.staleness.category if p.staleness else "fresh", 0),
            -p.uses,
            -p.memory.created_at,
        ),
    )


def premises_of(store: Store, decision: MemoryRecord) -> list[Premise]:
    """The premises ``decision`` rests on (its links that carry trust to a premise)."""
    cited = [ln.to_id for ln in store.links.of(decision.id, direction="out") if carries(ln)]
    return _told(store, store.memories.get_many(cited).values())
