"""How stale a memory is by its age, its kind and its use. Read-only.

``staleness = (days since created or last judged / decay_days) × 1 / √(times_used + 1)``:
a fact perishes at the pace of its kind (a latency measured last week is old, an architecture
chosen last quarter is not), a memory that keeps being used is still being relied on, and an
outcome or a verification (``evolve_outcome … VERIFIED``, a ``confidence_history`` row of the
memory itself) starts the clock again. Categories: fresh < 0.5 ≤ aging < 1 ≤ stale < 2 ≤
expired. The kind comes from, in order: a ``decay:N`` tag (its own decay, N days), a
``kind:NAME`` tag, a tag that names a kind (:data:`KINDS`, the most perishable first), the
memory type's default; checkpoints are a snapshot of work, never stale. This is the age-based
part; whether the files a memory cites changed since is :mod:`.verify`'s.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ...storage import MemoryRecord, Store, now_ms
from ..evolution import outcome_events

DAY_MS = 86_400_000
VERIFY = "verify before relying on it"


@dataclass(frozen=True)
class Kind:
    """A kind of fact, how many days it takes to decay, and the tags that name it."""

    name: str
    decay_days: float
    tags: frozenset[str]


KINDS: tuple[Kind, ...] = (
    Kind("performance", 7, frozenset({"performance", "perf", "benchmark", "latency", "load"})),
    Kind("code behaviour", 14, frozenset({"code", "behaviour", "behavior", "bug", "bugfix"})),
    Kind("requirements", 30, frozenset({"requirement", "requirements", "spec", "product"})),
    Kind("team knowledge", 60, frozenset({"team", "process", "convention", "workflow"})),
    Kind("api docs", 90, frozenset({"api", "docs", "documentation"})),
    Kind("security", 90, frozenset({"security", "crypto", "compliance"})),
    Kind("architecture", 180, frozenset({"architecture", "design", "infrastructure"})),
    Kind("external facts", 180, frozenset({"external", "vendor", "library"})),
)
BY_NAME = {k.name.replace(" ", "_"): k for k in KINDS}
# What a memory of each type is when nothing says otherwise.
DEFAULT_KIND = {
    "decision": "architecture",
    "insight": "team_knowledge",
    "context": "external_facts",
}

# Upper bounds of the categories, in order; expired is everything from the last one on.
CATEGORIES: tuple[tuple[str, float], ...] = (("fresh", 0.5), ("aging", 1.0), ("stale", 2.0))
EXPIRED = "expired"
FLAGGED = frozenset({"stale", EXPIRED})  # told with "verify before relying on it"


def category(score: float) -> str:
    """fresh, aging, stale or expired."""
    for name, below in CATEGORIES:
        if score < below:
            return name
    return EXPIRED


def score(days: float, decay_days: float, times_used: int) -> float:
    """The staleness formula."""
    return (max(days, 0.0) / decay_days) / math.sqrt(max(times_used, 0) + 1)


def kind_of(memory: MemoryRecord) -> Kind | None:
    """The kind that sets ``memory``'s decay (None for a checkpoint: never stale)."""
    if memory.type == "checkpoint":
        return None
    # A premise's domain (``domain:performance``) names its kind as a plain tag would.
    tags = [t.strip().casefold().removeprefix("domain:") for t in memory.tags]
    for tag in tags:
        if tag.startswith("decay:"):
            days = _days(tag.removeprefix("decay:"))
            if days is not None:
                return Kind("own", days, frozenset())
    for tag in tags:
        if tag.startswith("kind:") and tag.removeprefix("kind:").replace(" ", "_") in BY_NAME:
            return BY_NAME[tag.removeprefix("kind:").replace(" ", "_")]
    for kind in KINDS:
        if kind.tags.intersection(tags):
            return kind
    return BY_NAME[DEFAULT_KIND.get(memory.type, "architecture")]


def _days(text: str) -> float | None:
    try:
        days = float(text.strip().removesuffix("d"))
    except ValueError:
        return None
    return days if days > 0 else None


@dataclass(frozen=True)
class Staleness:
    """One memory's staleness: the figures and the category they fall in."""

    memory: MemoryRecord
    kind: Kind
    since: int  # when the clock started: created, or last judged or verified
    days: float
    score: float
    category: str

    @property
    def flagged(self) -> bool:
        return self.category in FLAGGED

    def said(self) -> str:
        """One line: ``stale (1.3): 39 days since verified, requirements decay in 30 — verify
        before relying on it``."""
        since = "verified" if self.since != self.memory.created_at else "saved"
        text = (
            f"{self.category} ({self.score:.1f}): {self.days:.0f} days since {since}, "
            f"{self.kind.name} decay in {self.kind.decay_days:g}"
        )
        if self.memory.times_used:
            text += f", used {self.memory.times_used}×"
        return text + (f" — {VERIFY}" if self.flagged else "")

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.memory.id,
            "kind": self.kind.name,
            "decay_days": self.kind.decay_days,
            "since": self.since,
            "days": round(self.days, 2),
            "staleness": round(self.score, 4),
            "category": self.category,
        }


def judged_at(memory: MemoryRecord) -> int | None:
    """When its outcome was recorded, as the memory itself says (an imported one has no row)."""
    value = memory.outcome.get("recorded_at") if memory.outcome_status != "PENDING" else None
    return int(value) if isinstance(value, int | float) and value > 0 else None


def assess(
    store: Store, memories: Iterable[MemoryRecord], *, now: int | None = None
) -> dict[str, Staleness]:
    """The staleness of each of ``memories`` that can go stale, by id. Read-only."""
    at = now if now is not None else now_ms()
    wanted = [m for m in memories if kind_of(m) is not None]
    last = store.confidence.last_judged(m.id for m in wanted)
    out: dict[str, Staleness] = {}
    for m in wanted:
        kind = kind_of(m)
        assert kind is not None
        since = max(m.created_at, last.get(m.id, 0), judged_at(m) or 0)
        days = (at - since) / DAY_MS
        value = score(days, kind.decay_days, m.times_used)
        out[m.id] = Staleness(m, kind, since, days, value, category(value))
    return out


def decaying(
    store: Store, project: str, *, now: int | None = None, include_aging: bool = False
) -> list[Staleness]:
    """The project's current memories that are stale or expired (and aging, if asked), the
    stalest first."""
    current = [m for m in store.memories.iter(project=project) if m.status == "current"]
    events = outcome_events(store, current)  # a verdict told again: its memory is what ages
    found = assess(store, [m for m in current if m.id not in events], now=now).values()
    keep = FLAGGED | ({"aging"} if include_aging else set())
    return sorted((s for s in found if s.category in keep), key=lambda s: -s.score)
