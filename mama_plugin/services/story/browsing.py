"""The browsing tools' answers: every memory of one topic, and the newest memories.

No ranking and no graph work beyond labelling what stands now: an outcome event is listed as
the memory it judges, a session's checkpoints as one row (``services/story/freshness.py``).
Read-only.
"""

from __future__ import annotations

from ...storage import MemoryRecord, Store
from ..evolution import current_of, failure_reason
from ..scopes import inherited
from .freshness import idle, one_per_session, outcomes_on_their_memory
from .records import TopicRow


def search_by_topic(store: Store, topic: str, *, project: str | None = None) -> list[TopicRow]:
    """Every memory of exactly this topic, newest first, each labelled with what stands now.

    An outcome event is the row of the memory it judges (that row carries the outcome); a
    session's checkpoints are one row, the one updated last (``collapsed`` names the rest).
    A project's topic includes the global memories of that topic it inherits.
    """
    found = _fresh(store, store.memories.by_topic(topic, project=inherited(store, project)))
    out = []
    for m, collapsed in found:
        head = current_of(store, m.id, record=m)  # itself when it stands
        out.append(
            TopicRow(
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
        )
    return out


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
