"""Confidence learned from outcomes: the judged memory moves, what it is linked to follows.

- **The judged memory.** SUCCESS: ``c + 0.2 × (1 − c)``; FAILED: ``c × 0.85``; PARTIAL and
  VERIFIED leave it where it is (the row still says when it was judged: staleness counts from
  there, :mod:`.staleness`).
- **What it is linked to** receives the change times ``0.5`` per hop, at most ``MAX_HOPS``
  hops, along the links that carry trust (:func:`carries`): evolution links but ``supersedes``
  (a replacement is not weakened by what it replaced failing), implementation links but
  ``outcome_of`` (the outcome's own event), and the association words of :data:`BUILT_ON`
  ("depends_on", "motivated_by", …), in either direction. Each memory moves once, at its
  nearest hop; checkpoints do not move (a snapshot of work, not a claim).
- Every move is a :class:`~mama_plugin.storage.confidence.ConfidenceChange` row; a recorded
  outcome is applied once (its cause, ``<id>@<recorded_at>``, is the key), so
  :func:`learn_pass` can replay what was recorded without it (imports, older versions) as
  often as it likes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...plain import picked
from ...relationships import REPLACING
from ...storage import LinkRecord, MemoryRecord, Store, now_ms
from ...storage.confidence import ConfidenceChange

SUCCESS_STEP = 0.2  # success closes this share of the gap to 1
FAILURE_FACTOR = 0.85  # failure keeps this share of the confidence
HOP_DECAY = 0.5  # a linked memory receives this share of the change per hop
MAX_HOPS = 2
JUDGED = ("SUCCESS", "PARTIAL", "FAILED")
# Association words that say one memory rests on another (the rest — relates_to,
# challenges, … — do not carry trust).
BUILT_ON = frozenset(
    {
        "motivated_by",
        "depends_on",
        "rests_on",
        "inspired_by",
        "builds_on",
        "based_on",
        "relies_on",
        "requires",
        "extends",
    }
)
_NOT_CARRIED = REPLACING | {"outcome_of"}
_UNMOVED_TYPES = frozenset({"checkpoint"})
_PLACES = 6  # confidences are stored rounded to this many decimals


def judged(confidence: float, outcome: str) -> float:
    """The judged memory's new confidence after ``outcome``."""
    if outcome == "SUCCESS":
        value = confidence + SUCCESS_STEP * (1 - confidence)
    elif outcome == "FAILED":
        value = confidence * FAILURE_FACTOR
    else:
        value = confidence
    return round(min(1.0, max(0.0, value)), _PLACES)


def carries(link: LinkRecord) -> bool:
    """Whether a change of confidence travels along ``link``."""
    if link.relationship in _NOT_CARRIED:
        return False
    if link.link_category in ("evolution", "implementation"):
        return True
    return link.link_category == "association" and link.relationship in BUILT_ON


def cause_of(memory: MemoryRecord, outcome: str, recorded_at: int) -> str:
    """The key of one recorded outcome (or verification) of ``memory``."""
    kind = "verified" if outcome == "VERIFIED" else "outcome"
    return f"{memory.id}@{kind}@{recorded_at}"


def changes_for(
    store: Store, memory: MemoryRecord, outcome: str, *, recorded_at: int, at: int | None = None
) -> list[ConfidenceChange]:
    """The moves ``outcome`` on ``memory`` makes, the judged memory first. Read-only."""
    when = at if at is not None else now_ms()
    cause = cause_of(memory, outcome, recorded_at)
    before = memory.confidence
    after = judged(before, outcome)
    why = "verified against the code" if outcome == "VERIFIED" else f"{outcome} outcome"
    out = [ConfidenceChange(memory.id, when, before, after, why, memory.id, outcome, cause, 0)]
    delta = after - before
    if not delta:
        return out
    seen, frontier = {memory.id}, [memory.id]
    for hop in range(1, MAX_HOPS + 1):
        share = delta * HOP_DECAY**hop
        reached: dict[str, LinkRecord] = {}
        for here in frontier:
            for link in store.links.of(here):
                there = link.to_id if link.from_id == here else link.from_id
                if there not in seen and there not in reached and carries(link):
                    reached[there] = link
        found = store.memories.get_many(reached)
        frontier = []
        for there, link in reached.items():
            seen.add(there)
            m = found.get(there)
            if m is None or m.type in _UNMOVED_TYPES:
                continue
            frontier.append(there)
            to = round(min(1.0, max(0.0, m.confidence + share)), _PLACES)
            if to == m.confidence:
                continue
            why = (
                f"{outcome} outcome of {memory.id}, {hop} hop{'s' if hop > 1 else ''} away "
                f"({link.relationship})"
            )
            out.append(
                ConfidenceChange(there, when, m.confidence, to, why, memory.id, outcome, cause, hop)
            )
    return out


def learn_from(
    store: Store, memory: MemoryRecord, outcome: str, *, recorded_at: int
) -> list[ConfidenceChange]:
    """Apply ``outcome`` on ``memory`` once: the moves written (none if applied before)."""
    with store.transaction():
        if store.confidence.applied([cause_of(memory, outcome, recorded_at)]):
            return []
        changes = changes_for(store, memory, outcome, recorded_at=recorded_at)
        store.confidence.apply(changes)
    return changes


def recorded_at(memory: MemoryRecord) -> int:
    """When ``memory``'s outcome was recorded (its last change, for an imported one)."""
    value = memory.outcome.get("recorded_at")
    return int(value) if isinstance(value, int | float) and value > 0 else memory.updated_at


@dataclass
class LearnPass:
    """What one ``mama learn`` pass did."""

    since: int | None  # the previous pass (None: the first, every outcome considered)
    at: int
    considered: int = 0  # judged memories changed since the previous pass
    applied: list[str] = field(default_factory=list)  # causes applied now
    changes: list[ConfidenceChange] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return picked(self, "since", "at", "considered") | {
            "applied": list(self.applied),
            "changes": [c.as_dict() for c in self.changes],
        }


def learn_pass(store: Store) -> LearnPass:
    """Apply every recorded outcome not applied yet, among the memories judged since the last
    pass (all of them on the first); record the pass. Idempotent: a second pass applies
    nothing new."""
    with store.transaction():
        since = store.confidence.last_pass()
        done = LearnPass(since, now_ms())
        ids = store.confidence.judged_since(since)
        found = store.memories.get_many(ids)
        for memory_id in ids:
            m = found.get(memory_id)
            if m is None or m.outcome_status not in JUDGED:
                continue
            done.considered += 1
            at = recorded_at(m)
            # Read again: an earlier outcome of this pass may have moved it.
            fresh = store.memories.require(m.id)
            changes = learn_from(store, fresh, m.outcome_status, recorded_at=at)
            if changes:
                done.applied.append(changes[0].cause)
                done.changes.extend(changes)
        store.confidence.mark_pass(done.at)
    return done


def trajectory(store: Store, memory_id: str) -> tuple[MemoryRecord, list[ConfidenceChange]]:
    """A memory and how its confidence moved, oldest first. Raises NotFoundError."""
    memory = store.memories.require(memory_id)
    return memory, store.confidence.of(memory.id)
