"""The browsing tools' answers: every memory of one topic, and the newest memories.

No ranking; the graph work is labelling what stands now and, for a topic, following its
evolution links to other topics ``TOPIC_DEPTH`` hops (:mod:`..depths`). An outcome event is
listed as the memory it judges, a session's checkpoints as one row
(``services/story/freshness.py``). Read-only.
"""

from __future__ import annotations

from dataclasses import replace

from ...storage import MemoryRecord, Store
from ..evolution import EVOLUTION, current_of, failure_reason
from ..graph.depths import TOPIC_DEPTH
from ..graph.traverse import Step, traverse
from ..saving.scopes import inherited
from .freshness import idle, one_per_session, outcomes_on_their_memory
from .records import TopicRow


def search_by_topic(
    store: Store, topic: str, *, project: str | None = None, depth: int = TOPIC_DEPTH
) -> list[TopicRow]:
    """Every memory of exactly this topic, newest first, each labelled with what stands now;
    then the memories of other topics its evolution links reach within ``depth`` hops.

    An outcome event is the row of the memory it judges (that row carries the outcome); a
    session's checkpoints are one row, the one updated last (``collapsed`` names the rest).
    A project's topic includes the global memories of that topic it inherits. A row reached
    by a link names the memory it was reached from (``linked_from``), the link's word and
    which way it runs (``direction``).
    """
    scope = inherited(store, project)
    found = _fresh(store, store.memories.by_topic(topic, project=scope))
    out = [_row(store, m, collapsed) for m, collapsed in found]
    listed = {r.id for r in out}
    reached: list[Step] = []
    for m, _ in found:
        for step in traverse(store, m.id, categories=EVOLUTION, max_depth=depth):
            if step.memory_id not in listed:
                listed.add(step.memory_id)
                reached.append(step)
    records = store.memories.get_many(s.memory_id for s in reached)
    linked = [
        replace(
            _row(store, records[s.memory_id]),
            linked_from=s.came_from,
            relationship=s.link.relationship,
            direction="out" if s.link.from_id == s.memory_id else "in",
        )
        for s in reached
        if s.memory_id in records and _within(records[s.memory_id].project, scope)
    ]
    return out + sorted(linked, key=lambda r: -r.created_at)


def _row(store: Store, m: MemoryRecord, collapsed: list[str] | tuple[str, ...] = ()) -> TopicRow:
    head = current_of(store, m.id, record=m)  # itself when it stands
    return TopicRow(
        m.id,
        m.type,
        m.content,
        m.status,
        head.id,
        m.outcome_status,
        failure_reason(m),
        m.reasoning.get("primary", ""),
        m.created_at,
        tuple(collapsed),
    )


def _within(project: str, scope: str | tuple[str, ...] | None) -> bool:
    """Whether a memory of ``project`` is readable in ``scope`` (None: every project)."""
    return scope is None or project == scope or (isinstance(scope, tuple) and project in scope)


def search_recent(
    store: Store, n: int = 10, *, type: str | None = None, project: str | None = None
) -> list[MemoryRecord]:
    """The ``n`` newest memories (optionally of one type): browsing, no graph work.

    A session's checkpoints count once (the one updated last, where the session's newest
    stands); an outcome event is listed as the memory it judges, which carries the verdict. A
    rolling checkpoint of a session that did no work ("Working on: Stop for today.") is not
    listed.
    """
    newest = store.memories.recent(project=project, limit=min(4 * n, n + 200), type=type)
    worked = [m for m in newest if not idle(m)]
    return [m for m, _ in _fresh(store, worked)][:n]


def _fresh(store: Store, newest: list[MemoryRecord]) -> list[tuple[MemoryRecord, list[str]]]:
    """``newest`` with outcome events as the memory they judge, one checkpoint a session."""
    kept = outcomes_on_their_memory(store, [(m, None) for m in newest])
    return [(m, collapsed) for m, _, collapsed in one_per_session(kept)]
