"""Each result as a search answer tells it, and the evolution chains among the results.

:func:`present` is one result (its layers, its role, what is current, its implementation
neighbours); :func:`with_successors` places each superseded hit's current successor right
above it; :func:`chains` finds one evolution chain per distinct chain (``CONTEXT_DEPTH`` hops
back from the decision that stands now, :mod:`..depths`); :func:`learned` the
lessons they hold. Read-only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from ...storage import MemoryRecord, Store
from ..evolution import EVOLUTION, chain, current_of, failure_reason
from ..graph.depths import CONTEXT_DEPTH
from ..graph.traverse import traverse
from ..search import ranking
from .records import mark


@dataclass(frozen=True)
class Related:
    """A memory linked to a result by an implementation link, and which way the link runs."""

    id: str
    type: str
    content: str
    status: str
    current_id: str
    relationship: str
    reason: str
    direction: str  # "out": the result links to it; "in": it links to the result

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AnswerItem:
    """One result of a search answer: the memory's layers, its role, what stands in its place.

    The optional layers are None when the memory has none (or the search left them out);
    ``collapsed`` names the checkpoints of its session folded into it; ``updated_by`` the later
    version of the fact it states; ``verify`` what changed in the files it cites.
    """

    id: str
    type: str
    topic: str
    content: str
    status: str
    current_id: str
    role: str
    outcome: dict[str, Any]  # its status, details, evidence and lessons
    confidence: float
    score: float
    created_at: int
    project: str
    session_id: str
    reasoning: dict[str, Any] | None = None
    specifics: list[Any] | None = None
    evidence: list[Any] | None = None
    tension: dict[str, Any] | None = None
    next_steps: list[Any] | None = None
    related: list[Related] | None = None
    collapsed: list[str] | None = None
    updated_by: str | None = None
    verify: list[str] | None = None  # its verify line when a file it cites changed since
    stale: str | None = None  # its staleness when stale or expired (services/learning/staleness.py)
    hub: int | None = (
        None  # how many memories reference it, when it is a hub (services/learning/hubs.py)
    )
    notes: list[str] | None = None  # its latest dated notes (services/learning/living.py)
    enrich: list[str] | None = None  # the layers an imported v1.0 decision lacks (enrichment)

    @property
    def mark(self) -> str:
        """Its status, or what superseded it (:func:`.records.mark`)."""
        return mark(self.id, self.status, self.current_id)

    def as_dict(self) -> dict[str, Any]:
        """JSON form (the search tools' ``primary_results``): a layer it lacks is no key."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if self.related is not None:
            out["related"] = [r.as_dict() for r in self.related]
        return {k: v for k, v in out.items() if v is not None or k not in _OPTIONAL}


_OPTIONAL = frozenset(
    (
        "reasoning",
        "specifics",
        "evidence",
        "tension",
        "next_steps",
        "related",
        "collapsed",
        "updated_by",
        "verify",
        "stale",
        "hub",
        "notes",
        "enrich",
    )
)


@dataclass(frozen=True)
class ChainStep:
    """One decision of an evolution chain, and the one it led to."""

    id: str
    content: str
    status: str
    outcome: str
    failure_reason: str
    reason: str
    led_to: str | None
    created_at: int


@dataclass(frozen=True)
class Chain:
    """An evolution chain among the results, oldest step first; ``current_id`` stands now."""

    topic: str
    current_id: str
    steps: tuple[ChainStep, ...]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"steps": [asdict(step) for step in self.steps]}


def with_successors(
    store: Store, hits: list[tuple[MemoryRecord, float]], k: int
) -> list[tuple[MemoryRecord, float]]:
    """Rank order, with each superseded hit's current successor placed right above it."""
    out: list[tuple[MemoryRecord, float]] = []
    placed: set[str] = set()
    for memory, score in hits:
        if memory.id in placed:
            continue
        if memory.status == "superseded":
            head = current_of(store, memory.id, record=memory)
            if head.id != memory.id and head.id not in placed:
                out.append((head, score))
                placed.add(head.id)
        out.append((memory, score))
        placed.add(memory.id)
    # A successor may take a slot: the k results still always say what is current.
    return out[:k]


def present(
    store: Store, m: MemoryRecord, score: float, evidence: bool, tensions: bool
) -> AnswerItem:
    """``m`` as a search answer tells it (``evidence``, ``tensions``: with those layers)."""
    head = current_of(store, m.id, record=m)  # itself when it stands
    item = AnswerItem(
        **m.fields("id", "type", "topic", "content", "status"),
        current_id=head.id,
        role=ranking.role(m),
        outcome={"status": m.outcome_status, **m.outcome},
        confidence=m.confidence,
        score=round(score, 6),
        created_at=m.created_at,
        project=m.project,
        session_id=m.session_id,
        reasoning=m.reasoning or None,
        specifics=m.specifics or None,
        evidence=m.evidence if evidence and m.evidence else None,
        next_steps=m.continuity.get("next_steps") or None,
    )
    if tensions and any(m.tension.get(key) for key in ("concerns", "trade_offs", "risks")):
        item.tension = m.tension
    neighbours = traverse(store, m.id, categories=("implementation",), max_depth=1)
    if neighbours:
        found = store.memories.get_many(s.memory_id for s in neighbours)
        item.related = []
        for s in neighbours:
            other = found.get(s.memory_id)
            if other is None:
                continue
            stands = current_of(store, other.id, record=other)
            direction = "out" if s.link.from_id == m.id else "in"
            link = s.link
            item.related.append(
                Related(
                    other.id,
                    other.type,
                    other.content,
                    other.status,
                    stands.id,
                    link.relationship,
                    link.reason,
                    direction,
                )
            )
    return item


def chains(
    store: Store, memories: list[MemoryRecord]
) -> tuple[list[Chain], dict[str, MemoryRecord]]:
    """One evolution chain per distinct chain among the results, oldest step first; and the
    chains' steps by id."""
    found: list[Chain] = []
    covered: set[str] = set()
    along: dict[str, MemoryRecord] = {}
    heads: set[str] = set()
    decisions = [m.id for m in memories if m.type == "decision"]
    replacing = {  # the decisions that replaced another (one query, not one a decision)
        ln.from_id
        for ln in store.links.among(decisions, direction="out")
        if ln.link_category in EVOLUTION
    }
    for memory in memories:
        if memory.id in covered or memory.type != "decision":
            continue
        if memory.status != "superseded" and memory.id not in replacing:
            covered.add(memory.id)  # a chain of one: it stands, and replaced nothing
            continue
        steps = chain(store, memory.id, record=memory, max_hops=CONTEXT_DEPTH)
        covered.update([memory.id, *(s.id for s in steps)])
        # A result further back than the chain is told shares its head: told once.
        if len(steps) < 2 or steps[-1].id in heads:
            continue
        heads.add(steps[-1].id)
        along.update((s.id, s) for s in steps)
        told = tuple(
            ChainStep(
                s.id,
                s.content,
                s.status,
                s.outcome_status,
                failure_reason(s),
                s.reasoning.get("primary", ""),
                steps[i + 1].id if i + 1 < len(steps) else None,
                s.created_at,
            )
            for i, s in enumerate(steps)
        )
        found.append(Chain(steps[-1].topic, steps[-1].id, told))
    # A decision that refines a chain's head tells that chain again, one step longer: the
    # longer one alone is told.
    ids = [frozenset(s.id for s in c.steps) for c in found]
    return [c for c, mine in zip(found, ids, strict=True) if not any(mine < o for o in ids)], along


def learned(
    memories: list[MemoryRecord], chains: list[Chain], along: dict[str, MemoryRecord]
) -> list[str]:
    """The lessons the memories and the chains' steps hold, each once."""
    lessons: list[str] = []
    chain_ids = [s.id for c in chains for s in c.steps]
    for memory in [*memories, *(along[i] for i in chain_ids if i in along)]:
        for lesson in memory.outcome.get("learned") or []:
            if lesson not in lessons:
                lessons.append(lesson)
    return lessons
