"""The seeds' success metrics for one project: is the memory worth trusting, and improving?

Read-only. Decisions: the share with non-trivial reasoning (> 50 characters, more than one
word), narrative completeness (0–5: reasoning, alternatives, evidence, specifics, next steps),
the share with an outcome. Links: their reasons by quality (trivial / basic / causal) and by
who wrote them. Suggestions: how many wait, and the share of verdicts that accepted. The
graph: the health figures of :mod:`..graph.health` (recommendations in ``mama graph health``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from ...storage import MemoryRecord, Store
from ..graph.health import Health, graph_health
from ..saving.quality import QUALITIES, completeness, non_trivial_reasoning, reason_quality


@dataclass
class Stats:
    """One project's metrics (shares are 0–1, or None when there is nothing to count)."""

    project: str
    decisions: int = 0
    non_trivial_reasoning: float | None = None
    completeness_mean: float | None = None
    completeness: dict[int, int] = field(default_factory=dict)  # score -> decisions
    with_outcome: float | None = None
    outcomes: dict[str, int] = field(default_factory=dict)
    links: int = 0
    link_reasons: dict[str, int] = field(default_factory=dict)  # quality -> links
    links_by: dict[str, int] = field(default_factory=dict)  # created_by -> links
    suggestions: dict[str, int] = field(default_factory=dict)  # status -> suggestions
    suggestion_reasons: dict[str, int] = field(default_factory=dict)  # quality of pending+
    acceptance_rate: float | None = None
    graph: Health | None = None  # the graph's health figures (mama graph health)

    def as_dict(self) -> dict[str, Any]:
        """Plain data (``mama stats --json``)."""
        data = asdict(self)
        data["completeness"] = {str(k): v for k, v in self.completeness.items()}
        return data


def project_stats(
    store: Store, project: str, *, memories: Iterable[MemoryRecord] | None = None
) -> Stats:
    """Compute the metrics of ``project`` from the store (``memories``: the project's, when
    the caller has read them already)."""
    stats = Stats(project)
    read = store.memories.iter(project=project) if memories is None else memories
    decisions = [m for m in read if m.type == "decision"]
    stats.decisions = len(decisions)
    if decisions:
        n = len(decisions)
        scores = [completeness(m) for m in decisions]
        stats.non_trivial_reasoning = (
            sum(non_trivial_reasoning(str(m.reasoning.get("primary", ""))) for m in decisions) / n
        )
        stats.completeness_mean = sum(scores) / n
        stats.completeness = {s: scores.count(s) for s in range(6)}
        stats.outcomes = dict(Counter(m.outcome_status for m in decisions))
        stats.with_outcome = sum(m.outcome_status != "PENDING" for m in decisions) / n
    links = store.links.of_project(project)
    stats.links = len(links)
    stats.link_reasons = _by_quality(ln.reason for ln in links)
    stats.links_by = dict(Counter(ln.created_by for ln in links))
    stats.suggestions = store.suggestions.counts(project)
    judged = [
        s
        for s in store.suggestions.of_project(project, status=None, limit=1_000_000)
        if s.status != "no_link"
    ]
    stats.suggestion_reasons = _by_quality(s.reason for s in judged)
    verdicts = stats.suggestions["accepted"] + stats.suggestions["rejected"]
    if verdicts:
        stats.acceptance_rate = stats.suggestions["accepted"] / verdicts
    stats.graph = graph_health(store, project)
    return stats


def _by_quality(reasons: Any) -> dict[str, int]:
    counts = Counter(reason_quality(r) for r in reasons)
    return {q: counts.get(q, 0) for q in QUALITIES}
