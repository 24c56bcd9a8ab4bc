"""A warm in-memory copy of the store's vectors, for exact KNN in a few milliseconds.

sqlite-vec holds the vectors durably, but its brute-force scan costs ~90 ms per query at
100k memories on this kind of machine, where a numpy matrix product over the same vectors
takes ~5 ms. A long-running process (the MCP server, a benchmark) therefore keeps one matrix
per project, loaded once and then kept in step cheaply: new vectors are read from
``vector_log``; a move of ``vectors_epoch`` (vectors replaced or removed) reloads everything.
Without numpy, queries go to sqlite-vec directly. Read-only. Safe to share between threads:
the copies are brought up to date and picked under one lock, the products computed outside it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..storage import Store


@dataclass
class _Index:
    epoch: int = -1
    log_id: int = 0
    # project -> (seqs, matrix); appended chunks are joined on first use
    seqs: dict[str, list[Any]] = field(default_factory=dict)
    rows: dict[str, list[Any]] = field(default_factory=dict)

    def size(self) -> int:
        return sum(len(chunk) for chunks in self.seqs.values() for chunk in chunks)


_indexes: weakref.WeakKeyDictionary[Store, _Index] = weakref.WeakKeyDictionary()
_guard = threading.Lock()  # held while a copy is synced or its chunks joined


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:  # the local-model extra is not installed
        return None
    return numpy


def _sync(store: Store, np: Any) -> _Index:
    index = _indexes.get(store)
    # The state and the rows must come from one snapshot, or a vector committed in between
    # would be loaded now and again on the next look.
    with store.snapshot():
        epoch, log_id = store.vectors.state()
        if index is not None and index.epoch == epoch and log_id <= index.log_id:
            return index
        full = index is None or index.epoch != epoch
        rows = store.vectors.load(after=0 if full else index.log_id)  # type: ignore[union-attr]
    if full or index is None:
        index = _Index(epoch=epoch)
        _indexes[store] = index
    index.log_id = log_id
    by_project: dict[str, tuple[list[int], list[bytes]]] = {}
    for seq, project, blob in rows:
        seqs, blobs = by_project.setdefault(project, ([], []))
        seqs.append(seq)
        blobs.append(blob)
    for project, (seqs, blobs) in by_project.items():
        matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
        index.seqs.setdefault(project, []).append(np.asarray(seqs, dtype=np.int64))
        index.rows.setdefault(project, []).append(matrix)
    return index


def _matrix(index: _Index, project: str, np: Any) -> tuple[Any, Any]:
    if len(index.rows[project]) > 1:  # join appended chunks once
        index.seqs[project] = [np.concatenate(index.seqs[project])]
        index.rows[project] = [np.vstack(index.rows[project])]
    return index.seqs[project][0], index.rows[project][0]


def has_vectors(store: Store) -> bool:
    """True when at least one memory (of any project) has a vector."""
    np = _numpy()
    if np is None:
        return store.vectors.count() > 0
    with _guard:
        return _sync(store, np).size() > 0


def knn(
    store: Store, vector: Sequence[float], k: int, *, project: str | None = None
) -> list[tuple[int, float]]:
    """The ``k`` nearest memories as (seq, cosine distance), nearest first."""
    np = _numpy()
    if np is None:
        return store.vectors.knn(vector, k, project=project)
    with _guard:
        index = _sync(store, np)
        names = [project] if project is not None else list(index.rows)
        picked = [_matrix(index, name, np) for name in names if name in index.rows]
    query = np.asarray(vector, dtype=np.float32)
    found_seqs, found_sims = [], []
    for seqs, matrix in picked:
        sims = matrix @ query
        take = min(k, len(sims))
        top = np.argpartition(-sims, take - 1)[:take] if take < len(sims) else np.arange(len(sims))
        found_seqs.append(seqs[top])
        found_sims.append(sims[top])
    if not found_seqs:
        return []
    seqs = np.concatenate(found_seqs)
    sims = np.concatenate(found_sims)
    order = np.argsort(-sims, kind="stable")[:k]
    return [(int(seqs[i]), float(1.0 - sims[i])) for i in order]
