"""Korean memories read ahead by the model that reads Korean prompts, off the prompt's path.

When the store's embedding model cannot read Korean (MiniLM, mpnet), a Korean prompt's
candidates are judged by multilingual-e5 (:func:`..search.views.read_with`): the prompt, each
candidate's narrative and its views embedded by e5. The first Korean prompt of a project paid
for all of them inside the prompt hook's 3 s deadline (~0.5 s for ten candidates at load 3,
more on a loaded machine). :func:`read_ahead` embeds them before: the project's newest
memories (``READ_AHEAD``) when one of them is Korean, in small batches, stored in
``text_vectors`` for every later process, so a Korean prompt embeds only itself.
"""

from __future__ import annotations

from collections.abc import Callable

from ...embeddings.protocol import EmbeddingModel
from ...storage import MemoryRecord, Store
from ...text import hangul
from ..search.indexing import narrative_text
from ..search.views import index_views

READ_AHEAD = 100  # the newest memories of the recalled kinds read ahead (~300 texts)
BATCH = 8  # memories embedded at a time (a prompt's own embedding waits at most one batch)
KINDS = ("decision", "insight", "context")  # the kinds prompt-time recall tells


def to_read(store: Store, project: str, *, limit: int = READ_AHEAD) -> list[MemoryRecord]:
    """The project's ``limit`` newest memories of the recalled kinds, when one of them is
    Korean (a Korean prompt's candidates may be any of them); else none."""
    found = [
        m for kind in KINDS for m in store.memories.latest(project=project, type=kind, limit=limit)
    ]
    found.sort(key=lambda m: m.updated_at, reverse=True)
    found = found[:limit]
    return found if any(hangul(f"{m.topic} {m.content}") for m in found) else []


def read_ahead(
    store: Store,
    reader: EmbeddingModel,
    memories: list[MemoryRecord],
    *,
    pause: Callable[[], None] | None = None,
) -> int:
    """Embed with ``reader`` what a Korean prompt's judging reads of ``memories`` (each
    narrative and its views) that the store lacks, ``BATCH`` memories at a time with ``pause``
    between batches; returns how many texts were stored."""
    stored = 0
    for start in range(0, len(memories), BATCH):
        batch = [(m, narrative_text(store, m)) for m in memories[start : start + BATCH]]
        stored += index_views(store, reader, batch, narratives=True)
        if pause is not None and start + BATCH < len(memories):
            pause()
    return stored
