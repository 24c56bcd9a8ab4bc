"""Graph health of one project: is the memory one connected story, or coming apart?

The design's figures: isolated memories (degree ≤ 1), health ``1 − isolated / memories`` and
connected components (expected 1); plus the share of memories in the largest component,
relationship diversity (distinct words per link: near 1, every link invents its own word),
canonical coverage (the share of links whose word is canonical — built in, chosen by
``mama graph tidy`` as its cluster's form, or merged by a person), the orphaned words (fewer
than 3 links) and recommendations to act on. Read-only; no model needed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from ...groups import Groups
from ...relationships import known_words
from ...storage import Store, now_ms
from ...storage.relationship_words import RelationshipWords
from .decay import DAY_MS
from .tidy import ARCHIVE_BELOW, ORPHAN_USES, orphan_strength


@dataclass(frozen=True)
class Recommendation:
    """One thing to do about the graph, and the command that does it (when there is one)."""

    text: str
    command: str = ""


@dataclass
class Health:
    """One project's graph figures (shares 0–1, None when there is nothing to count)."""

    project: str
    memories: int = 0
    links: int = 0
    isolated: int = 0
    health: float | None = None
    components: int = 0
    largest_share: float | None = None
    words: int = 0
    diversity: float | None = None
    canonical_coverage: float | None = None
    orphaned: list[str] = field(default_factory=list)
    recommendations: list[Recommendation] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Plain data (``--json``, the tool's structured answer)."""
        return asdict(self)

    def lines(self) -> list[str]:
        """The figures as short lines (``mama graph health``, the tool, ``mama stats``)."""

        def pct(x: float | None) -> str:
            return "—" if x is None else f"{x:.0%}"

        out = [
            f"memories {self.memories}, links {self.links}; isolated (≤ 1 link) {self.isolated}; "
            f"health {pct(self.health)}",
            f"connected components {self.components}; largest holds {pct(self.largest_share)}",
            f"relationship words {self.words}; diversity {pct(self.diversity)} (words per link); "
            f"canonical coverage {pct(self.canonical_coverage)}",
        ]
        if self.orphaned:
            shown = ", ".join(self.orphaned[:8]) + (" …" if len(self.orphaned) > 8 else "")
            out.append(f"orphaned words (< {ORPHAN_USES} links): {shown}")
        return out


def graph_health(store: Store, project: str, *, now: int | None = None) -> Health:
    """Compute ``project``'s graph figures and recommendations from the store."""
    now = now if now is not None else now_ms()
    table = RelationshipWords(store)
    ids, edges = table.graph_of(project)
    h = Health(project, memories=len(ids), links=len(edges))
    degree: Counter[str] = Counter()
    groups = Groups(ids)
    for a, b, _ in edges:
        degree[a] += 1
        degree[b] += 1
        groups.join(b, a)
    isolated = [i for i in ids if degree[i] <= 1]
    h.isolated = len(isolated)
    sizes = Counter({root: len(members) for root, members in groups.members().items()})
    h.components = len(sizes)
    if ids:
        h.health = 1 - len(isolated) / len(ids)
        h.largest_share = max(sizes.values()) / len(ids)
    word_links = Counter(w for _, _, w in edges)
    h.words = len(word_links)
    recorded = table.all()
    settled = known_words() | {
        w for w, r in recorded.items() if r.canonical == w or r.decided_by == "user"
    }
    if edges:
        h.diversity = len(word_links) / len(edges)
        h.canonical_coverage = sum(n for w, n in word_links.items() if w in settled) / len(edges)
    uses = {u.relationship: u for u in table.usage(project)}
    h.orphaned = sorted(w for w, u in uses.items() if u.uses < ORPHAN_USES)
    h.recommendations = _recommend(h, word_links, recorded, uses, isolated, now)
    return h


def _recommend(
    h: Health,
    word_links: Counter[str],
    recorded: dict[str, Any],
    uses: dict[str, Any],
    isolated: list[str],
    now: int,
) -> list[Recommendation]:
    out: list[Recommendation] = []
    for word, n in word_links.most_common():
        row = recorded.get(word)
        if row is not None and row.canonical != word and row.decided_by != "user":
            out.append(
                Recommendation(
                    f"merge `{word}` into `{row.canonical}` ({n} link{'s' * (n != 1)})",
                    f"mama graph merge {word} {row.canonical}",
                )
            )
    for word, use in sorted(uses.items()):
        strength = orphan_strength(use, now)
        if strength is not None and strength < ARCHIVE_BELOW:
            days = round((now - use.last_used) / DAY_MS)
            out.append(
                Recommendation(
                    f"archive `{word}` ({use.uses} link{'s' * (use.uses != 1)}, {days} days): "
                    "merge it into the word it means, or leave it to fade"
                )
            )
    if not recorded and h.words > 1:
        out.append(
            Recommendation(
                f"{h.words} relationship words were never tidied: group them by meaning",
                "mama graph tidy",
            )
        )
    if isolated and h.memories > 1:
        first = isolated[0]
        out.append(
            Recommendation(
                f"{len(isolated)} of {h.memories} memories have at most one link; find links "
                f"for them, e.g. {first}",
                f"mama links suggest {first}",
            )
        )
    if h.components > 1 and h.largest_share is not None and h.largest_share < 0.5:
        out.append(
            Recommendation(
                f"the graph is {h.components} pieces and the largest holds only "
                f"{h.largest_share:.0%}: link decisions of one topic with supersedes or refines"
            )
        )
    return out
