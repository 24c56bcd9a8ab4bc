"""The browsing tools' answers: every memory of one topic, and the newest memories.

No ranking and no graph work beyond labelling what stands now: an outcome event is listed as
the memory it judges, a session's checkpoints as one row (``services/story/freshness.py``).
Read-only.
"""

from __future__ import annotations

from typing import Any

from ...storage import MemoryRecord, Store
from ..evolution import current_of, failure_reason
from .freshness import idle, one_per_session, outcomes_on_their_memory


def search_by_topic(
    store: Store, topic: str, *, project: str | None = None
) -> list[dict[str, Any]]:
    """Every memory of exactly this topic, newest first, each labelled with what stands now.

    An outcome event is the row of the memory it judges (that row carries the outcome); a
    session's checkpoints are one row, the one updated last (``collapsed`` names the rest).
    """
    found = _fresh(store, store.memories.by_topic(topic, project=project))
    out = []
    for m, collapsed in found:
        head = current_of(store, m.id, record=m) if m.status == "superseded" else m
        row = {
            "id": m.id,
            "type": m.type,
            "content": m.content,
            "status": m.status,
            "current_id": head.id,
            "outcome": m.outcome_status,
            "failure_reason": failure_reason(m),
            "reason": m.reasoning.get("primary", ""),
            "created_at": m.created_at,
        }
        out.append(row | ({"collapsed": collapsed} if collapsed else {}))
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
