"""Each result as a search answer tells it, and the evolution chains among the results.

:func:`present` is one result (its layers, its role, what is current, its implementation
neighbours); :func:`with_successors` places each superseded hit's current successor right
above it; :func:`chains` finds one evolution chain per distinct chain; :func:`learned` the
lessons they hold. Read-only.
"""

from __future__ import annotations

from typing import Any

from ...storage import MemoryRecord, Store
from .. import ranking
from ..evolution import EVOLUTION, chain, current_of, failure_reason
from ..graph import traverse


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
) -> dict[str, Any]:
    head = current_of(store, m.id, record=m) if m.status == "superseded" else m
    item: dict[str, Any] = {
        "id": m.id,
        "type": m.type,
        "topic": m.topic,
        "content": m.content,
        "status": m.status,
        "current_id": head.id,
        "role": ranking.role(m),
        "outcome": {"status": m.outcome_status, **m.outcome},
        "confidence": m.confidence,
        "score": round(score, 6),
        "created_at": m.created_at,
        "project": m.project,
        "session_id": m.session_id,
    }
    if m.reasoning:
        item["reasoning"] = m.reasoning
    if m.specifics:
        item["specifics"] = m.specifics
    if evidence and m.evidence:
        item["evidence"] = m.evidence
    if tensions and any(m.tension.get(key) for key in ("concerns", "trade_offs", "risks")):
        item["tension"] = m.tension
    steps = m.continuity.get("next_steps") or []
    if steps:
        item["next_steps"] = steps
    neighbours = traverse(store, m.id, categories=("implementation",), max_depth=1)
    if neighbours:
        found = store.memories.get_many(s.memory_id for s in neighbours)
        item["related"] = []
        for s in neighbours:
            other = found.get(s.memory_id)
            if other is None:
                continue
            head = (
                current_of(store, other.id, record=other) if other.status == "superseded" else other
            )
            item["related"].append(
                {
                    "id": other.id,
                    "type": other.type,
                    "content": other.content,
                    "status": other.status,
                    "current_id": head.id,
                    "relationship": s.link.relationship,
                    "reason": s.link.reason,
                    "direction": "out" if s.link.from_id == m.id else "in",
                }
            )
    return item


def chains(
    store: Store, memories: list[MemoryRecord]
) -> tuple[list[dict[str, Any]], dict[str, MemoryRecord]]:
    """One evolution chain per distinct chain among the results, oldest step first; and the
    chains' steps by id."""
    chains: list[dict[str, Any]] = []
    covered: set[str] = set()
    along: dict[str, MemoryRecord] = {}
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
        steps = chain(store, memory.id, record=memory)
        covered.update(s.id for s in steps)
        if len(steps) < 2:
            continue
        along.update((s.id, s) for s in steps)
        chains.append(
            {
                "topic": steps[-1].topic,
                "current_id": steps[-1].id,
                "steps": [
                    {
                        "id": s.id,
                        "content": s.content,
                        "status": s.status,
                        "outcome": s.outcome_status,
                        "failure_reason": failure_reason(s),
                        "reason": s.reasoning.get("primary", ""),
                        "led_to": steps[i + 1].id if i + 1 < len(steps) else None,
                        "created_at": s.created_at,
                    }
                    for i, s in enumerate(steps)
                ],
            }
        )
    # A decision that refines a chain's head tells that chain again, one step longer: the
    # longer one alone is told.
    told = [frozenset(s["id"] for s in c["steps"]) for c in chains]
    chains = [c for c, mine in zip(chains, told, strict=True) if not any(mine < o for o in told)]
    return chains, along


def learned(
    memories: list[MemoryRecord], chains: list[dict[str, Any]], along: dict[str, MemoryRecord]
) -> list[str]:
    lessons: list[str] = []
    chain_ids = [s["id"] for c in chains for s in c["steps"]]
    for memory in [*memories, *(along[i] for i in chain_ids if i in along)]:
        for lesson in memory.outcome.get("learned") or []:
            if lesson not in lessons:
                lessons.append(lesson)
    return lessons
