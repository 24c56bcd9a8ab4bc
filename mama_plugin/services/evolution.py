"""Evolution chains: how a decision got to where it stands. Read-only."""

from __future__ import annotations

from collections.abc import Iterable

from ..storage import MemoryRecord, Store

EVOLUTION = ("evolution",)


def current_of(store: Store, memory_id: str, *, record: MemoryRecord | None = None) -> MemoryRecord:
    """Follow replacing links forward to the decision that stands now (itself if current).

    ``record``: the memory ``memory_id`` names, when the caller has it already read.
    """
    if record is None or record.id != memory_id:
        record = store.memories.require(memory_id)
    seen = {record.id}
    while record.status == "superseded":
        successors = [
            ln.from_id
            for ln in store.links.of(record.id, direction="in", categories=EVOLUTION)
            if ln.relationship == "supersedes" and ln.from_id not in seen
        ]
        if not successors:
            break
        record = max(
            (store.memories.require(i) for i in successors), key=lambda m: (m.created_at, m.seq)
        )
        seen.add(record.id)
    return record


def chain(
    store: Store,
    memory_id: str,
    *,
    record: MemoryRecord | None = None,
    max_hops: int | None = None,
) -> list[MemoryRecord]:
    """The evolution chain ending at the current successor of ``memory_id``, oldest first.

    ``record``: the memory ``memory_id`` names, when the caller has it already read.
    ``max_hops``: follow evolution links back from the current successor this many hops at
    most (None: to the chain's start).
    """
    head = current_of(store, memory_id, record=record)
    ordered, seen, frontier = [head], {head.id}, [head]
    hops = 0
    while frontier and (max_hops is None or hops < max_hops):
        hops += 1
        step = []
        for record in frontier:
            for link in store.links.of(record.id, direction="out", categories=EVOLUTION):
                if link.to_id not in seen:
                    seen.add(link.to_id)
                    step.append(store.memories.require(link.to_id))
        step.sort(key=lambda m: (m.created_at, m.seq), reverse=True)
        ordered.extend(step)
        frontier = step
    return list(reversed(ordered))


def failure_reason(m: MemoryRecord) -> str:
    """Why a decision failed (or fell short), from its outcome; empty otherwise."""
    return str(m.outcome.get("details") or "") if m.outcome_status in {"FAILED", "PARTIAL"} else ""


def outcome_events(store: Store, memories: Iterable[MemoryRecord]) -> dict[str, str]:
    """Which of ``memories`` are outcome events: event id → id of the memory it judges.

    An outcome event is the insight ``evolve_outcome`` writes beside the verdict, linked
    ``outcome_of`` to the memory; everything it says, that memory already carries.
    """
    out: dict[str, str] = {}
    for m in memories:
        if m.type != "insight":
            continue
        for link in store.links.of(m.id, direction="out", categories=("implementation",)):
            if link.relationship == "outcome_of":
                out[m.id] = link.to_id
                break
    return out


def predecessors(store: Store, memory: MemoryRecord) -> list[MemoryRecord]:
    """The decisions ``memory`` superseded, most recent first (the story behind it)."""
    ids = [
        ln.to_id
        for ln in store.links.of(memory.id, direction="out")
        if ln.relationship == "supersedes"
    ]
    return sorted(store.memories.get_many(ids).values(), key=lambda m: -m.created_at)[:2]
