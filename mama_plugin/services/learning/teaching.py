"""Outcomes that teach: what to try after a failure, and what a project learned. Read-only.

After FAILED or PARTIAL, :func:`next_move` offers the alternative the decision rejected (its
first ``alternatives_considered``) as the decision to save in its place; :func:`learned`
gathers a project's verdicts, lessons, would-repeat answers and next-time notes, with the
confidence moves they made.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ...storage import MemoryRecord, Store
from ..evolution import outcome_events
from ..render import clip

JUDGED = ("SUCCESS", "PARTIAL", "FAILED")
LESSONS_TOLD = 10


def rejected_alternative(memory: MemoryRecord) -> tuple[str, str] | None:
    """The first alternative ``memory`` rejected, with why (None when it names none)."""
    for alt in (memory.reasoning or {}).get("alternatives_considered") or []:
        if isinstance(alt, dict) and str(alt.get("option") or "").strip():
            return str(alt["option"]).strip(), str(alt.get("rejected_because") or "").strip()
    return None


def next_move(memory: MemoryRecord, current: MemoryRecord) -> str:
    """After a FAILED or PARTIAL verdict on a decision that still stands: the alternative it
    rejected, offered as the superseding decision ("" otherwise)."""
    if memory.type != "decision" or memory.outcome_status not in ("FAILED", "PARTIAL"):
        return ""
    if current.id != memory.id:
        return ""  # already replaced: the replacement is the next move
    alt = rejected_alternative(memory)
    save = f"save_decision with supersedes={memory.id}"
    if alt is None:
        return f"It names no alternative it rejected: {save} saves what replaces it."
    option, why = alt
    because = f" (rejected then: {clip(why, 160)})" if why else ""
    return (
        f"It had rejected '{clip(option, 160)}'{because}. If that is the way now, save it as "
        f"the decision that replaces this one: {save}."
    )


@dataclass(frozen=True)
class Lesson:
    """One thing an outcome taught: the memory it was recorded on, when, and the words."""

    memory_id: str
    outcome: str
    at: int
    text: str
    kind: str  # "learned" or "next time"


@dataclass
class Learned:
    """What a project learned from its outcomes."""

    project: str | None
    outcomes: dict[str, int] = field(default_factory=dict)  # judged memories by verdict
    would_repeat: dict[str, int] = field(default_factory=dict)
    lessons: list[Lesson] = field(default_factory=list)  # newest first
    moves: int = 0  # confidence changes recorded
    last_pass: int | None = None  # the last `mama learn`

    @property
    def judged(self) -> int:
        return sum(self.outcomes.values())

    @property
    def success_rate(self) -> float | None:
        """SUCCESS among the judged (PARTIAL counts half); None before any verdict."""
        if not self.judged:
            return None
        won = self.outcomes.get("SUCCESS", 0) + 0.5 * self.outcomes.get("PARTIAL", 0)
        return won / self.judged

    def as_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "outcomes": dict(self.outcomes),
            "success_rate": self.success_rate,
            "would_repeat": dict(self.would_repeat),
            "lessons": [vars(x) for x in self.lessons],
            "confidence_moves": self.moves,
            "last_learn_pass": self.last_pass,
        }


def learned(store: Store, project: str | None) -> Learned:
    """What ``project`` (every project when None) learned: its verdicts, lessons and moves."""
    memories = list(store.memories.iter(project=project))
    events = outcome_events(store, memories)
    judged = [m for m in memories if m.outcome_status in JUDGED and m.id not in events]
    out = Learned(project)
    out.outcomes = dict(Counter(m.outcome_status for m in judged))
    repeat = Counter(str(m.outcome.get("would_repeat")) for m in judged)
    out.would_repeat = {k: n for k, n in repeat.items() if k != "None"}
    for m in judged:
        at = int(m.outcome.get("recorded_at") or m.updated_at)
        for text in m.outcome.get("learned") or []:
            out.lessons.append(Lesson(m.id, m.outcome_status, at, str(text), "learned"))
        for text in m.outcome.get("next_time") or []:
            out.lessons.append(Lesson(m.id, m.outcome_status, at, str(text), "next time"))
    out.lessons.sort(key=lambda x: -x.at)
    out.moves = store.confidence.count(project=project)
    out.last_pass = store.confidence.last_pass()
    return out
