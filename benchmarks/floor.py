"""The floor under a search, timed on the same store: what no search can go below.

A search must embed its query, run a full-text query and a vector KNN. Each is timed bare
(no ranking, no reads of the rows found): the query embedding alone, one FTS5 ``MATCH`` of
the words the search keeps (:func:`kept_words`) ordered by BM25, as deep as the search asks,
and one KNN with the in-memory index's layout. The floor of a query is the sum of the three,
timed back to back; a search is reported as a ratio to the floor's p95 in the same run, so
that a busy machine slows both alike.

The vector layouts are timed side by side on the same vectors (exact float product, sign bits
with a float re-rank, sqlite-vec's float scan), and the quantised search is checked against
the exact one: R@10 and R@depth of its KNN against exact KNN.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.services.search import vector_index
from mama_plugin.services.search.options import CANDIDATES
from mama_plugin.storage import Store
from mama_plugin.storage.fts import any_of, query_words, quoted
from mama_plugin.storage.search import COMMON_WORD_MIN

T = TypeVar("T")


def kept_words(store: Store, query: str) -> list[str]:
    """The words of ``query`` the search matches: ``storage.search``'s rule, computed untimed.

    A word in more than half of the memories (and in ``COMMON_WORD_MIN`` or more) is left
    out unless every word is; matching it would cost the bare query what the search avoids.
    """
    conn = store.conn
    words = query_words(query)
    total = int(conn.execute("SELECT count(*) FROM memories").fetchall()[0][0])  # type: ignore[arg-type]
    count = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?"
    frequency = {w: int(conn.execute(count, (quoted(w),)).fetchall()[0][0]) for w in words}  # type: ignore[arg-type]
    common = {w for w, n in frequency.items() if n >= COMMON_WORD_MIN and n > total / 2}
    return [w for w in words if w not in common and frequency[w]] or words


def bare_text(store: Store, words: Sequence[str], limit: int = CANDIDATES) -> list[int]:
    """One FTS5 MATCH of any of ``words``, best BM25 first: nothing else (no project filter)."""
    if not words:
        return []
    rows = store.conn.execute(
        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?",
        (any_of(words), limit),
    ).fetchall()
    return [int(r[0]) for r in rows]  # type: ignore[arg-type]


def clocked(fn: Callable[..., T], *args: Any, **kwargs: Any) -> tuple[float, T]:
    """Call ``fn``; return (milliseconds taken, its result)."""
    started = time.perf_counter()
    result = fn(*args, **kwargs)
    return (time.perf_counter() - started) * 1000, result


def floor_times(
    store: Store,
    queries: Sequence[str],
    embedder: EmbeddingModel | None,
    project: str,
) -> dict[str, list[float]]:
    """Per query: the embedding, the bare MATCH, the bare KNN and their sum (ms)."""
    out: dict[str, list[float]] = {"embed": [], "fts": [], "knn": [], "floor": []}
    for query in queries:
        fts, _ = clocked(bare_text, store, kept_words(store, query))
        embed = knn = 0.0
        if embedder is not None:
            embed, vectors = clocked(embedder.embed, [query])
            knn, _ = clocked(vector_index.knn, store, vectors[0], CANDIDATES, project=project)
        out["embed"].append(embed)
        out["fts"].append(fts)
        out["knn"].append(knn)
        out["floor"].append(embed + fts + knn)
    return out


def layouts(
    store: Store, vectors: Sequence[Sequence[float]], project: str, *, sqlite_runs: int = 10
) -> dict[str, Any]:
    """Time each vector layout on the same query vectors; recall of the quantised one.

    ``sqlite_runs`` bounds the sqlite-vec scans (tens of ms each at 100k, seconds at 1M).
    """
    times: dict[str, list[float]] = {"exact_ms": [], "quantised_ms": [], "sqlite_vec_ms": []}
    r10, rdepth = [], []
    knn = vector_index.knn
    for i, vector in enumerate(vectors):
        took, exact = clocked(knn, store, vector, CANDIDATES, project=project, exact=True)
        times["exact_ms"].append(took)
        took, quantised = clocked(knn, store, vector, CANDIDATES, project=project)
        times["quantised_ms"].append(took)
        if i < sqlite_runs:
            took, _ = clocked(store.vectors.knn, vector, CANDIDATES, project=project)
            times["sqlite_vec_ms"].append(took)
        truth, found = [s for s, _ in exact], [s for s, _ in quantised]
        r10.append(_overlap(found[:10], truth[:10]))
        rdepth.append(_overlap(found, truth))
    return {
        **times,
        "recall_at_10": sum(r10) / len(r10) if r10 else None,
        "recall_at_depth": sum(rdepth) / len(rdepth) if rdepth else None,
    }


def _overlap(found: Sequence[int], truth: Sequence[int]) -> float:
    return len(set(found) & set(truth)) / len(truth) if truth else 1.0
