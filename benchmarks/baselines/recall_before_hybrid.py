"""The prompt-recall rules before ``python -m benchmarks recall`` (frozen, to compare against).

What ``services/recall/prompt.py`` did until it moved onto the hybrid search: its own
candidates (the full-text index, 12 deep, and the vectors, 12 deep), judged one by one: the
cosine bar (0.5); or nearly the bar (within 0.1) and a shared content word in a prompt of ≥ 3
of them; or half the prompt's content words (at least 2), words of one or two letters dropped.
Only the ids it would inject are kept: the bench scores those. Read-only.
"""

from __future__ import annotations

from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.services.search import vector_index
from mama_plugin.storage import Store
from mama_plugin.text import content_words, stem

COSINE_BAR = 0.5
SUPPORT_BAND = 0.1
SUPPORT_WORDS = 3
COVERAGE_BAR = 0.5
MIN_MATCHED = 2
MIN_WORDS = 2
CANDIDATES = 12
MAX_HITS = 3
MIN_LENGTH = 3


def recalled(
    store: Store, prompt: str, *, project: str, embedder: EmbeddingModel | None
) -> list[str]:
    """The ids of the memories the old rules injected for ``prompt``, best first."""
    words = content_words(prompt, min_length=MIN_LENGTH)
    if len(words) < MIN_WORDS:
        return []
    seqs = [seq for seq, _ in store.search.text_ranks(words, project=project, limit=CANDIDATES)]
    cosines: dict[int, float] = {}
    if embedder is not None and vector_index.has_vectors(store):
        query = embedder.embed([prompt[:2000]])[0]
        for seq, distance in vector_index.knn(store, query, CANDIDATES, project=project):
            cosines[seq] = 1.0 - distance
    stems = {stem(w) for w in words}
    passed: list[tuple[float, int, str]] = []
    for seq, memory in store.memories.get_by_seq([*seqs, *cosines]).items():
        if memory.type == "checkpoint":
            continue
        text = f"{memory.topic.replace('_', ' ')} {memory.content} "
        text += str(memory.reasoning.get("primary") or "")
        matched = len(stems & {stem(w) for w in content_words(text, min_length=MIN_LENGTH)})
        coverage = matched / len(words)
        cosine = cosines.get(seq)
        near = cosine is not None and cosine >= COSINE_BAR - SUPPORT_BAND
        if (
            (cosine is not None and cosine >= COSINE_BAR)
            or (near and matched >= 1 and len(words) >= SUPPORT_WORDS)
            or (coverage >= COVERAGE_BAR and matched >= MIN_MATCHED)
        ):
            passed.append((max(cosine or 0.0, coverage), memory.created_at, memory.id))
    passed.sort(key=lambda p: (-p[0], -p[1]))
    return [memory_id for _, _, memory_id in passed[:MAX_HITS]]
