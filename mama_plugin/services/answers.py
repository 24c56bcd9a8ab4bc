"""What the search tools answer: the ranked memories, then the chain of how each came to be.

Graph expansion: a superseded hit brings the decision that replaced it, ranked right above it;
decisions bring their evolution chain and their implementation/outcome neighbours; the answer
ends with what stands now and a story to read (``context_summary.md.j2``).

Read-only except for usage counters (``record_usage``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import StoreBusyError
from ..storage import MemoryRecord, Store
from . import ranking, vector_index
from .evolution import chain, current_of
from .graph import traverse
from .render import render
from .retrieval import (
    DEFAULT,
    MIN_CONFIDENCE,
    RETRIEVERS,
    EmbeddingModel,
    Options,
    Scored,
    retrieve,
)


@dataclass
class ContextResult:
    """What ``search_by_context`` answers: results, chains, current state, a story to read."""

    query: str
    primary_results: list[dict[str, Any]]
    evolution: list[dict[str, Any]]
    status: dict[str, Any]
    learned_patterns: list[str]
    narrative_summary: str
    retrievers: list[str] = field(default_factory=list)

    def ids(self) -> list[str]:
        """Ids of the primary results, in rank order."""
        return [r["id"] for r in self.primary_results]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (structured content of the MCP tool)."""
        return {
            "query": self.query,
            "primary_results": self.primary_results,
            "evolution": self.evolution,
            "status": self.status,
            "learned_patterns": self.learned_patterns,
            "narrative_summary": self.narrative_summary,
            "retrievers": self.retrievers,
        }


def search_by_context(
    store: Store,
    query: str,
    *,
    embedder: EmbeddingModel | None = None,
    project: str | None = None,
    k: int = 10,
    include_evolution: bool = True,
    include_evidence: bool = True,
    include_tensions: bool = True,
    min_confidence: float = MIN_CONFIDENCE,
    retrievers: Sequence[str] = RETRIEVERS,
    record_usage: bool = True,
    as_of: int | None = None,
    tags: Sequence[str] = (),
    options: Options = DEFAULT,
) -> ContextResult:
    """Hybrid search plus graph expansion; every decision is labelled current or superseded.

    ``project=None`` searches every project. A superseded hit is always preceded by the
    decision that replaced it. ``record_usage`` counts a use of each primary result.
    """
    hits = retrieve(store, query, embedder=embedder, project=project, k=k, retrievers=retrievers,
                    min_confidence=min_confidence, as_of=as_of, tags=tags,
                    options=options)  # fmt: skip
    updated = {h.memory.id: h.updated_by for h in hits if h.updated_by}
    ordered = _with_successors(store, hits, k)
    used = ["keyword"] if "keyword" in retrievers else []
    if "vector" in retrievers and embedder is not None and vector_index.has_vectors(store):
        used.append("vector")
    primary = [
        _present(store, m, score, include_evidence, include_tensions) for m, score in ordered
    ]
    for item in primary:
        if item["id"] in updated:
            item["updated_by"] = updated[item["id"]]
    chains = _chains(store, [m for m, _ in ordered]) if include_evolution else []
    current = [r for r in primary if r["status"] == "current" and r["type"] == "decision"]
    status = {
        "current": [{"id": r["id"], "topic": r["topic"], "content": r["content"]} for r in current],
        "next_steps": [
            s
            for r in primary
            if r["status"] == "current" and not _serves_only_the_past(store, r["id"])
            for s in r.get("next_steps", [])
        ],
    }
    learned = _learned(store, [m for m, _ in ordered], chains)
    summary = render("context_summary.md.j2", query=query, results=primary, chains=chains,
                     status=status, learned=learned)  # fmt: skip
    if record_usage and primary:
        # Bookkeeping: never fail a search because another process holds the write lock.
        with contextlib.suppress(StoreBusyError):
            store.memories.touch(r["id"] for r in primary)
    return ContextResult(query, primary, chains, status, learned, summary.strip(), used)


def _serves_only_the_past(store: Store, memory_id: str) -> bool:
    """True when everything this memory implements has been superseded: its plans are moot."""
    targets = [
        ln.to_id
        for ln in store.links.of(memory_id, direction="out", categories=("implementation",))
    ]
    if not targets:
        return False
    found = store.memories.get_many(targets)
    return all(m.status == "superseded" for m in found.values())


def _with_successors(store: Store, hits: list[Scored], k: int) -> list[tuple[MemoryRecord, float]]:
    """Rank order, with each superseded hit's current successor placed right above it."""
    out: list[tuple[MemoryRecord, float]] = []
    placed: set[str] = set()
    for hit in hits:
        memory = hit.memory
        if memory.id in placed:
            continue
        if memory.status == "superseded":
            head = current_of(store, memory.id)
            if head.id != memory.id and head.id not in placed:
                out.append((head, hit.score))
                placed.add(head.id)
        out.append((memory, hit.score))
        placed.add(memory.id)
    # A successor may take a slot: the k results still always say what is current.
    return out[:k]


def _present(
    store: Store, m: MemoryRecord, score: float, evidence: bool, tensions: bool
) -> dict[str, Any]:
    head = current_of(store, m.id) if m.status == "superseded" else m
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
            head = current_of(store, other.id) if other.status == "superseded" else other
            item["related"].append({
                "id": other.id, "type": other.type, "content": other.content,
                "status": other.status, "current_id": head.id,
                "relationship": s.link.relationship, "reason": s.link.reason,
                "direction": "out" if s.link.from_id == m.id else "in",
            })  # fmt: skip
    return item


def _chains(store: Store, memories: list[MemoryRecord]) -> list[dict[str, Any]]:
    """One evolution chain per distinct chain among the results, oldest step first."""
    chains: list[dict[str, Any]] = []
    covered: set[str] = set()
    for memory in memories:
        if memory.id in covered or memory.type != "decision":
            continue
        steps = chain(store, memory.id)
        covered.update(s.id for s in steps)
        if len(steps) < 2:
            continue
        chains.append({
            "topic": steps[-1].topic,
            "current_id": steps[-1].id,
            "steps": [
                {"id": s.id, "content": s.content, "status": s.status, "outcome": s.outcome_status,
                 "failure_reason": _failure(s),
                 "reason": s.reasoning.get("primary", ""),
                 "led_to": steps[i + 1].id if i + 1 < len(steps) else None,
                 "created_at": s.created_at}
                for i, s in enumerate(steps)
            ],
        })  # fmt: skip
    return chains


def _failure(m: MemoryRecord) -> str:
    """Why a decision failed (or fell short), from its outcome; empty otherwise."""
    return str(m.outcome.get("details") or "") if m.outcome_status in {"FAILED", "PARTIAL"} else ""


def _learned(store: Store, memories: list[MemoryRecord], chains: list[dict[str, Any]]) -> list[str]:
    lessons: list[str] = []
    chain_ids = [s["id"] for c in chains for s in c["steps"]]
    along = store.memories.get_many(chain_ids)
    for memory in [*memories, *(along[i] for i in chain_ids if i in along)]:
        for lesson in memory.outcome.get("learned") or []:
            if lesson not in lessons:
                lessons.append(lesson)
    return lessons


def search_by_topic(
    store: Store, topic: str, *, project: str | None = None
) -> list[dict[str, Any]]:
    """Every memory of exactly this topic, newest first, each labelled with what stands now."""
    out = []
    for m in store.memories.by_topic(topic, project=project):
        head = current_of(store, m.id) if m.status == "superseded" else m
        out.append({"id": m.id, "type": m.type, "content": m.content, "status": m.status,
                    "current_id": head.id, "outcome": m.outcome_status,
                    "failure_reason": _failure(m), "reason": m.reasoning.get("primary", ""),
                    "created_at": m.created_at})  # fmt: skip
    return out


def search_recent(
    store: Store, n: int = 10, *, type: str | None = None, project: str | None = None
) -> list[MemoryRecord]:
    """The ``n`` newest memories (optionally of one type): browsing, no graph work."""
    return store.memories.recent(project=project, limit=n, type=type)
