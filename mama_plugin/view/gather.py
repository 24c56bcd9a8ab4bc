"""What the page shows, read from the store in one pass: memories, links, chains and health.

Read-only. Everything is gathered for one project (``mama view --project``): its memories
with every narrative layer, its links with their reasons, the link suggestions still
pending, each topic's decisions oldest → current with the link between each step, the
figures ``mama stats`` prints, the memories whose cited files changed since they were
recorded (the same check as ``mama verify --list``, without asking git) and what ``mama gc``
would remove. The result is plain data for the page's JSON; nothing here renders text.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from ..plain import picked
from ..services.story.worklog import WorkLog
from ..settings import Settings
from ..storage import LinkRecord, MemoryRecord, Store, now_ms

EVOLUTION = "evolution"


@dataclass(frozen=True)
class ChainStep:
    """The link between two consecutive decisions of a topic, as the arrow tells it."""

    newer: str
    older: str
    relationship: str
    reason: str
    by: str

    def as_data(self) -> dict[str, Any]:
        """The step as the page reads it."""
        return picked(self, "newer", "older", "rel=relationship", "reason", "by")


@dataclass(frozen=True)
class Chain:
    """One topic's decisions, oldest first, and the link (if any) into each from the one before."""

    topic: str
    ids: list[str]
    steps: list[ChainStep | None]  # steps[i] joins ids[i] to ids[i + 1]
    last: int  # when the newest of them was decided or judged (ms): chains sort on it

    def as_data(self) -> dict[str, Any]:
        """The chain as the page reads it."""
        return {
            "topic": self.topic,
            "ids": self.ids,
            "steps": [s.as_data() if s else None for s in self.steps],
            "last": self.last,
        }


@dataclass
class ViewData:
    """Everything the page shows of one project."""

    project: str
    generated: int  # ms; the page's "now" (what is overdue is judged against it)
    followup_days: int
    memories: list[MemoryRecord] = field(default_factory=list)
    links: list[LinkRecord] = field(default_factory=list)
    suggestions: list[dict[str, Any]] = field(default_factory=list)
    chains: list[Chain] = field(default_factory=list)
    flagged: dict[str, list[str]] = field(default_factory=dict)  # id -> what changed
    # id -> its confidence moves [when, from, to, why], oldest first (outcomes it learned from)
    history: dict[str, list[list[Any]]] = field(default_factory=dict)
    staleness: dict[str, str] = field(default_factory=dict)  # id -> its line, unless fresh
    hubs: dict[str, int] = field(default_factory=dict)  # id -> memories referencing it (5+)
    stats: dict[str, Any] = field(default_factory=dict)
    gc: dict[str, Any] = field(default_factory=dict)

    def as_data(self) -> dict[str, Any]:
        """Plain data for the page's embedded JSON (short keys: 10k memories travel in it)."""
        return {
            "project": self.project,
            "generated": self.generated,
            "followup_days": self.followup_days,
            "memories": [_memory(m) for m in self.memories],
            "links": [_link(ln) for ln in self.links],
            "suggestions": self.suggestions,
            "chains": [c.as_data() for c in self.chains],
            "flagged": self.flagged,
            "history": self.history,
            "staleness": self.staleness,
            "hubs": self.hubs,
            "stats": self.stats,
            "gc": self.gc,
        }


def gather(store: Store, project: str, settings: Settings, *, now: int | None = None) -> ViewData:
    """Read what the page shows of ``project`` (read-only; git is never asked).

    Several statements, no snapshot: a save in between may leave a link or a flag naming a
    memory the list lacks, which the page skips.
    """
    from ..services.hygiene import gc
    from ..services.hygiene.stats import project_stats
    from ..services.learning.hubs import HUB_MIN

    data = ViewData(
        project,
        now_ms() if now is None else now,
        settings.outcome_followup_days,
        memories=[m for m in store.memories.iter(project=project) if not WorkLog.trivial_of(m)],
        links=store.links.of_project(project),
    )
    data.suggestions = [
        {
            "id": s.id,
            "from": s.from_id,
            "to": s.to_id,
            "rel": s.relationship,
            "reason": s.reason,
            "judged_by": s.judged_by,
            "score": s.score,
        }
        for s in store.suggestions.of_project(project, status="pending", limit=1_000_000)
    ]
    data.chains = chains(data.memories, data.links)
    data.flagged = _flagged(store, project)
    data.history, data.staleness = _learned(store, data.memories, data.generated)
    data.hubs = dict(store.references.at_least(project, HUB_MIN))
    data.stats = project_stats(store, project, memories=data.memories).as_dict()
    plan = gc.plan(store, settings, now=data.generated)
    found = plan.as_dict()
    found["folds"] = [f for f in found["folds"] if f["project"] == project]
    found["backups"] = [{**b, "path": str(b["path"])} for b in found["backups"]]
    data.gc = found
    return data


def chains(memories: list[MemoryRecord], links: list[LinkRecord]) -> list[Chain]:
    """Each topic's decisions, oldest → current, with the evolution link joining each step.

    A step's link is the evolution link between the two (either way round, the newer one's
    first); a step with none is ``None`` (two decisions on a topic nobody related). Topics
    most recently active first.
    """
    by_pair: dict[tuple[str, str], LinkRecord] = {}
    for ln in links:
        if ln.link_category == EVOLUTION:
            by_pair.setdefault((ln.from_id, ln.to_id), ln)
    topics: dict[str, list[MemoryRecord]] = defaultdict(list)
    for m in memories:
        if m.type == "decision":
            topics[m.topic or "(no topic)"].append(m)
    out = []
    for topic, decided in topics.items():
        decided.sort(key=lambda m: (m.created_at, m.seq))
        steps: list[ChainStep | None] = []
        for older, newer in pairwise(decided):
            found = by_pair.get((newer.id, older.id)) or by_pair.get((older.id, newer.id))
            steps.append(
                ChainStep(newer.id, older.id, found.relationship, found.reason, found.created_by)
                if found
                else None
            )
        last = max(max(m.created_at, int(m.outcome.get("recorded_at") or 0)) for m in decided)
        out.append(Chain(topic, [m.id for m in decided], steps, last))
    out.sort(key=lambda c: (-c.last, c.topic))
    return out


def _flagged(store: Store, project: str) -> dict[str, list[str]]:
    """The memories ``mama verify --list`` would flag, with what changed (git not asked)."""
    from ..services.story.checked import flagged

    found = flagged(store, project, limit=1_000_000, git=False)
    return {m.id: [c.said for c in changes] for m, changes in found.told}


def _learned(
    store: Store, memories: list[MemoryRecord], now: int
) -> tuple[dict[str, list[list[Any]]], dict[str, str]]:
    """What the detail panel tells of trust: each memory's confidence history, and the
    staleness line of each current memory that is no longer fresh (at ``now``)."""
    from ..services.learning.staleness import assess

    history: dict[str, list[list[Any]]] = {}
    for c in store.confidence.of_many(m.id for m in memories):
        history.setdefault(c.memory_id, []).append([c.at, c.from_value, c.to_value, c.why])
    current = [m for m in memories if m.status == "current"]
    aged = assess(store, current, now=now).values()
    return history, {s.memory.id: s.said() for s in aged if s.category != "fresh"}


def _memory(m: MemoryRecord) -> dict[str, Any]:
    return {
        **m.fields(
            "id", "type", "topic", "content", "status", "outcome_status", "outcome", "confidence"
        ),
        "created": m.created_at,
        "updated": m.updated_at,
        "session": m.session_id,
        **m.fields("specifics", "evidence", "reasoning", "tension", "continuity", "tags"),
        "auto": m.rolling,
    }


def _link(ln: LinkRecord) -> dict[str, Any]:
    return {
        "from": ln.from_id,
        "to": ln.to_id,
        "rel": ln.relationship,
        "reason": ln.reason,
        "cat": ln.link_category,
        "by": ln.created_by,
        "at": ln.created_at,
    }
