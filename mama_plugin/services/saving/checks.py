"""The saves the tools make: the save itself, then what it may contradict or repeat.

The one call a tool makes for a decision or an insight (policy here, the tool only wraps the
answer): :mod:`.memories` writes it; :mod:`.contradiction` asks about the standing decisions
of its topic it says nothing of; :mod:`.duplicates` names the existing memory it says again,
when the embedder is warm. Both run after the save's transaction has committed, so what
Claude wrote is kept whatever they find, and they fail open: a check that raises (a model
error, a locked store) leaves the answer without what it would have said, never a saved
memory reported as an error (which would have Claude save it twice). The benchmarks and
importers call :mod:`.memories` directly: they save histories whose topics repeat on purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ...embeddings.protocol import EmbeddingModel
from ...schema import DecisionInput, InsightInput
from ...storage import Store
from .contradiction import ask
from .duplicates import duplicate_of
from .memories import SaveResult, save_decision, save_insight

T = TypeVar("T")


def decide(
    store: Store, project: str, data: DecisionInput, *, embedder: EmbeddingModel | None
) -> SaveResult:
    """Save a decision; ask about its topic's standing decisions when it names no relation to
    them; name the decision it repeats (none of those it relates to or asks about)."""
    result = save_decision(store, project, data)
    related = {link.to_id for link in result.links}
    if data.supersedes is None and data.relation is None:
        reason = data.reasoning.primary
        result.questions = _open(lambda: ask(store, result.memory, reason, skip=related), [])
    asked = {q.current.id for q in result.questions}
    skip = related | asked
    result.duplicate = _open(lambda: duplicate_of(store, embedder, result.memory, skip=skip), None)
    return result


def learn(
    store: Store, project: str, data: InsightInput, *, embedder: EmbeddingModel | None
) -> SaveResult:
    """Save an insight; name the insight it repeats (none of those it links to)."""
    result = save_insight(store, project, data)
    related = {link.to_id for link in result.links}
    result.duplicate = _open(
        lambda: duplicate_of(store, embedder, result.memory, skip=related), None
    )
    return result


def _open(check: Callable[[], T], otherwise: T) -> T:
    """``check()``, or ``otherwise`` when it raises: the save it follows has committed."""
    try:
        return check()
    except Exception:  # see the module docstring: fail open, the memory is saved
        return otherwise
