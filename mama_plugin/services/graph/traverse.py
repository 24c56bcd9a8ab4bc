"""Graph traversal over explicit links: BFS by category, direction, depth, confidence, time.

Link confidence decays with the days since the link was last used, by category, computed
when read and never written back (:func:`.decay.decayed`, the one home of the formula):
temporal links fade fast, associations slower, implementations slowest, evolution never (a
supersession stays true). Results are cached per store, keyed on the store's
``links_version`` (bumped by triggers on every link insert and delete, cascades included), so
any process's change to the graph throws them away and nothing else does. The cache is safe to
share between threads (its own lock; the walks themselves run outside it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ...relationships import CATEGORIES
from ...storage import LinkRecord, Store, now_ms
from ..warm import warm
from .decay import decayed

CACHE_SIZE = 512
# No walk goes deeper, whatever a caller asks: past five hops a neighbourhood is the graph.
MAX_DEPTH = 5


@dataclass(frozen=True)
class Step:
    """One memory reached by the traversal and how: the link taken and its decayed confidence.

    ``confidence`` is the product of the decayed confidences along the path from the start.
    """

    memory_id: str
    depth: int
    link: LinkRecord
    confidence: float
    came_from: str


def traverse(
    store: Store,
    start: str,
    *,
    categories: Iterable[str] | None = None,
    direction: str = "both",
    max_depth: int = 2,
    min_confidence: float = 0.0,
    since: int | None = None,
    until: int | None = None,
    now: int | None = None,
) -> list[Step]:
    """Breadth-first walk from ``start`` along links; nearest first, each memory once.

    ``direction`` is ``forward`` (along from → to), ``backward`` (against it) or ``both``.
    ``since``/``until`` bound the links' creation times (ms). A link whose decayed
    confidence falls below ``min_confidence`` is not followed. ``max_depth`` is capped at
    ``MAX_DEPTH``. Read-only.
    """
    if direction not in {"forward", "backward", "both"}:
        raise ValueError("direction must be forward, backward or both")
    max_depth = min(max_depth, MAX_DEPTH)
    cats = tuple(sorted(set(categories))) if categories is not None else CATEGORIES
    now = now if now is not None else now_ms()
    version = store.meta("links_version")
    key = (start, cats, direction, max_depth, min_confidence, since, until, now // 60_000)
    walks = warm(store).walks  # an LRU emptied when the links version moves (walk_cache)
    cached = walks.get(version, key)
    if cached is not None:
        return list(cached)
    steps = _walk(store, start, cats, direction, max_depth, min_confidence, since, until, now)
    walks.put(version, key, tuple(steps), CACHE_SIZE)
    return steps


def _walk(
    store: Store,
    start: str,
    cats: tuple[str, ...],
    direction: str,
    max_depth: int,
    min_confidence: float,
    since: int | None,
    until: int | None,
    now: int,
) -> list[Step]:
    seen = {start}
    strength = {start: 1.0}
    frontier = [start]
    steps: list[Step] = []
    for depth in range(1, max_depth + 1):
        if not frontier:
            break
        candidates: list[tuple[str, str, LinkRecord]] = []  # (from node, to node, link)
        if direction in {"forward", "both"}:
            candidates += [
                (ln.from_id, ln.to_id, ln) for ln in store.links.among(frontier, direction="out")
            ]
        if direction in {"backward", "both"}:
            candidates += [
                (ln.to_id, ln.from_id, ln) for ln in store.links.among(frontier, direction="in")
            ]
        candidates.sort(key=lambda c: (c[2].created_at, c[2].id))
        next_frontier: list[str] = []
        for here, there, link in candidates:
            if there in seen or link.link_category not in cats:
                continue
            if (since is not None and link.created_at < since) or (
                until is not None and link.created_at > until
            ):
                continue
            confidence = strength[here] * decayed(link, now)
            if confidence < min_confidence:
                continue
            seen.add(there)
            strength[there] = confidence
            steps.append(Step(there, depth, link, confidence, here))
            next_frontier.append(there)
        frontier = next_frontier
    return steps
