"""The tidy pass over relationship words: clusters by meaning, canonical forms, orphans.

Words are grouped by a small density-based clustering (DBSCAN on :class:`~.synonyms.WordVectors`
similarity: a word
with at least ``min_words - 1`` neighbours within ``threshold`` is a core word, and a cluster
is every word reachable from a core word through core words). Each cluster's canonical form is
its most used word (a promoted word first; ties: the oldest, then the spelling). A merge a
person asked for (``decided_by = 'user'``) is kept as it is.

Categories by meaning: a word that is not built in takes the category of the built-in word
it is closest to when above ``CATEGORY_BAR`` (its links are re-categorised), else it stays an
association; the similarity is recorded as the inference's confidence.

Orphans and promotion follow the design: a word used fewer than ``ORPHAN_USES`` times fades as
``exp(-0.05 × days since its last use × ORPHAN_PENALTY)`` (:func:`.decay.fade`, the
formula links fade by) and is proposed for archiving below
``ARCHIVE_BELOW``; a word used more than ``PROMOTE_USES`` times in the last 30 days with mean
link confidence above ``PROMOTE_CONFIDENCE`` is canonical whatever its cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...plain import picked
from ...relationships import category_of, known_words
from ...storage import Store, now_ms
from ...storage.relationship_words import RelationshipWords, WordRow, WordUse
from .decay import DAY_MS, PRUNE_BELOW, fade
from .synonyms import SYNONYM_THRESHOLD, WordVectors

if TYPE_CHECKING:
    from ...embeddings.protocol import EmbeddingModel

ORPHAN_USES = 3
ORPHAN_RATE = 0.05
ORPHAN_PENALTY = 2.0
ARCHIVE_BELOW = PRUNE_BELOW  # words, like links, are let go below 0.2
PROMOTE_USES = 10
PROMOTE_WINDOW_DAYS = 30
PROMOTE_CONFIDENCE = 0.75
CATEGORY_BAR = 0.7  # a word this close to a built-in word takes its category


def infer_category(vectors: WordVectors, word: str) -> tuple[str, float]:
    """A word's category by meaning and the similarity it was read from.

    A built-in word keeps its own (1.0); another takes the category of the closest built-in
    word when above ``CATEGORY_BAR`` (``precedes_directly`` is temporal), else association.
    """
    if word in known_words():
        return category_of(word), 1.0
    best, near = max((vectors.similarity(word, k), k) for k in sorted(known_words()))
    return (category_of(near), best) if best > CATEGORY_BAR else ("association", best)


def clusters(
    words: Sequence[str],
    similarity: Callable[[str, str], float],
    *,
    threshold: float = SYNONYM_THRESHOLD,
    min_words: int = 2,
) -> dict[str, int]:
    """DBSCAN over a similarity: each word's cluster id (1, 2, …), 0 for noise."""
    near: dict[str, list[str]] = {w: [] for w in words}
    for i, w in enumerate(words):  # a similarity is symmetric: each pair once
        for o in words[i + 1 :]:
            if similarity(w, o) >= threshold:
                near[w].append(o)
                near[o].append(w)
    label: dict[str, int] = {}
    cluster = 0
    for word in words:
        if word in label or len(near[word]) + 1 < min_words:
            continue
        cluster += 1
        label[word] = cluster
        queue = list(near[word])
        while queue:
            other = queue.pop()
            if other in label:
                continue
            label[other] = cluster
            if len(near[other]) + 1 >= min_words:  # a core word: its neighbours join too
                queue.extend(near[other])
    return {w: label.get(w, 0) for w in words}


def orphan_strength(use: WordUse, now: int) -> float | None:
    """How much an orphaned word (< ORPHAN_USES links) is still worth; None if not an orphan."""
    if use.uses >= ORPHAN_USES:
        return None
    return fade((now - use.last_used) / DAY_MS, ORPHAN_RATE * ORPHAN_PENALTY)


def promoted(store: Store, now: int) -> set[str]:
    """Words used more than PROMOTE_USES times in the last 30 days with confident links."""
    since = now - PROMOTE_WINDOW_DAYS * DAY_MS
    recent = RelationshipWords(store).recent_usage(since)
    busy = {w for w, (uses, _) in recent.items() if uses > PROMOTE_USES}
    return {w for w in busy if recent[w][1] > PROMOTE_CONFIDENCE}


@dataclass
class TidyResult:
    """What one tidy pass recorded: clusters with their canonical word, orphans, promotions."""

    words: int = 0
    clusters: dict[str, list[str]] = field(default_factory=dict)  # canonical -> its words
    promoted: list[str] = field(default_factory=list)
    archive: list[tuple[str, int, float]] = field(default_factory=list)  # word, links, days
    recategorised: dict[str, str] = field(default_factory=dict)  # word -> its new category
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        """Plain data (``--json``)."""
        return picked(self, "words", "clusters", "promoted", "recategorised") | {
            "archive": [{"word": w, "links": n, "days": round(d)} for w, n, d in self.archive],
        }


def tidy(
    store: Store,
    embedder: EmbeddingModel,
    *,
    threshold: float = SYNONYM_THRESHOLD,
    now: int | None = None,
) -> TidyResult:
    """Cluster the store's relationship words and record each one's canonical form and cluster.

    Writes ``relationship_words`` in one transaction; merges a person made are kept.
    """
    now = now if now is not None else now_ms()
    table = RelationshipWords(store)
    uses = {u.relationship: u for u in table.usage()}
    words = [w for w in table.words() if w in uses]
    vectors = WordVectors(store, embedder)
    vectors.of(words)  # one batch for the words never embedded
    labels = clusters(words, vectors.similarity, threshold=threshold)
    chosen = promoted(store, now)
    recorded = table.all()
    result = TidyResult(words=len(words), promoted=sorted(chosen))
    members: dict[int, list[str]] = {}
    for w in words:
        members.setdefault(labels[w], []).append(w)
    rows: list[WordRow] = []
    for cluster, group in members.items():
        head = min(group, key=lambda w: (w not in chosen, -uses[w].uses, uses[w].first_used, w))
        for w in group:
            kept = recorded.get(w)
            if kept is not None and kept.decided_by == "user":
                rows.append(kept)
                continue
            canonical = w if cluster == 0 or w in chosen else head
            category, confidence = infer_category(vectors, w)
            rows.append(WordRow(w, canonical, cluster, category, confidence, "tidy", now))
            if category != uses[w].category:
                result.recategorised[w] = category
        if cluster:
            result.clusters[head] = sorted(group)
    table.put(rows)
    for word, category in result.recategorised.items():
        table.recategorise(word, category)
    for use in uses.values():
        strength = orphan_strength(use, now)
        if strength is not None and strength < ARCHIVE_BELOW:
            result.archive.append((use.relationship, use.uses, (now - use.last_used) / DAY_MS))
    return result


TIDY_EVERY_LINKS = 25  # the background pass runs again once this many links were added


def tidy_if_due(
    store: Store, embedder: EmbeddingModel, *, every: int = TIDY_EVERY_LINKS
) -> TidyResult | None:
    """Run :func:`tidy` when ``every`` links were added since the last pass; else None.

    The count of links at the last pass is kept in ``meta.graph_tidied_links``.
    """
    links = RelationshipWords(store).link_count()
    done = int(store.meta(TIDIED_KEY) or 0)
    if links - done < every:
        return None
    result = tidy(store, embedder)
    store.set_meta(TIDIED_KEY, str(links))
    return result


TIDIED_KEY = "graph_tidied_links"
