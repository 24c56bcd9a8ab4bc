"""A warm in-memory copy of the store's vectors: KNN in a few milliseconds, exact at the top.

sqlite-vec holds the vectors durably, but its brute-force scan reads every float of every
vector (~150 MB, ~90 ms at 100k memories here). A long-running process (the MCP server, a
benchmark) therefore keeps one matrix per project, loaded once and then kept in step cheaply:
new vectors are read from ``vector_log``; a move of ``vectors_epoch`` (vectors replaced or
removed) reloads everything. Without numpy, queries go to sqlite-vec directly, and so do
queries of a partition of at most ``DIRECT_UP_TO`` memories: sqlite-vec scans 1,000 vectors in
~1.3 ms and 5,000 in ~7 ms here, while a copy costs numpy's import (~50 ms) and a load (12 ms
at 1,000, 74 ms at 5,000) that a short ``claude -p`` session's one prompt paid in full. The
distances agree to ~4e-7.

A large partition is searched in two passes (the ``latency`` benchmark prints the figures
behind this; docs/architecture.md quotes them): the sign bits of every vector (48 bytes at 384
dimensions, 1/32 of the floats) are compared with the query's by Hamming distance, and the
``max(OVERSAMPLE × k, RERANK_MIN)`` nearest by bits are re-ranked by their exact float
cosine. Every returned distance is exact; only which rows are re-ranked is approximate. A
partition of at most ``EXACT_UP_TO`` vectors is multiplied whole, exactly as before.

Read-only. Safe to share between threads: the copies are brought up to date and picked under
one lock, the products computed outside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...storage import Scope, Store
from ...storage.diagnosis import VECTORS
from ..warm import warm

# Up to this many memories a partition is scanned by sqlite-vec, never copied (see above).
DIRECT_UP_TO = 5_000
# Below this many vectors in a partition the whole float matrix costs less than two passes.
EXACT_UP_TO = 20_000
# Rows re-ranked: OVERSAMPLE per row wanted, at least RERANK_MIN (a few ms of floats at most).
OVERSAMPLE = 4
RERANK_MIN = 1_000


@dataclass
class _Part:
    """One project's vectors: row numbers, float matrix, sign bits (word-major), in chunks."""

    seqs: list[Any] = field(default_factory=list)
    rows: list[Any] = field(default_factory=list)
    bits: list[Any] = field(default_factory=list)

    def size(self) -> int:
        return sum(len(chunk) for chunk in self.seqs)

    def joined(self, np: Any) -> tuple[Any, Any, Any]:
        """(seqs, matrix, bits), appended chunks joined once."""
        if len(self.rows) > 1:
            self.seqs = [np.concatenate(self.seqs)]
            self.rows = [np.vstack(self.rows)]
            self.bits = [np.hstack(self.bits)]
        return self.seqs[0], self.rows[0], self.bits[0]


@dataclass
class _Index:
    epoch: int = -1
    log_id: int = 0
    parts: dict[str, _Part] = field(default_factory=dict)

    def size(self) -> int:
        return sum(part.size() for part in self.parts.values())


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:  # the local-model extra is not installed
        return None
    return numpy


def sign_bits(matrix: Any, np: Any) -> Any:
    """The sign bit of every component, packed into 64-bit words: shape (words, rows).

    Word-major, so that the Hamming pass reads each word of every row as one contiguous run.
    Dimensions are padded with zero bits to a multiple of 64 (equal in query and rows).
    """
    packed = np.packbits(matrix > 0, axis=1)
    pad = -packed.shape[1] % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed.view("<u8").T)


def _sync(store: Store, np: Any) -> _Index:
    """The store's copy, brought up to date; the caller holds ``vectors_guard``."""
    kept = warm(store)
    index: _Index | None = kept.vectors
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
        kept.vectors = index
    index.log_id = log_id
    by_project: dict[str, tuple[list[int], list[bytes]]] = {}
    for seq, project, blob in rows:
        seqs, blobs = by_project.setdefault(project, ([], []))
        seqs.append(seq)
        blobs.append(blob)
    for project, (seqs, blobs) in by_project.items():
        matrix = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
        part = index.parts.setdefault(project, _Part())
        part.seqs.append(np.asarray(seqs, dtype=np.int64))
        part.rows.append(matrix)
        part.bits.append(sign_bits(matrix, np))
    return index


def has_vectors(store: Store) -> bool:
    """True when at least one memory (of any project) has a vector.

    Asked by every search; sqlite-vec answers it in ~1.4 ms at 10k memories, so the answer
    is kept until the vectors' state (epoch, last log row: two index reads) moves.
    """
    if VECTORS in store.degraded:
        return False  # damaged: searched without them until `mama doctor --repair`
    state = store.vectors.state()
    kept = warm(store)
    known = kept.any_vectors
    if known is None or known[0] != state:
        known = (state, store.vectors.any())
        kept.any_vectors = known
    return known[1]


def load(store: Store) -> int:
    """Bring the copy up to date now (a full load the first time); returns how many vectors."""
    np = _numpy()
    if np is None:
        return store.vectors.count()
    with warm(store).vectors_guard:  # held while the copy is synced or its chunks joined
        index = _sync(store, np)
        for part in index.parts.values():
            part.joined(np)
        return index.size()


def knn(
    store: Store,
    vector: Sequence[float],
    k: int,
    *,
    project: Scope = None,
    exact: bool = False,
) -> list[tuple[int, float]]:
    """The ``k`` nearest memories as (seq, cosine distance), nearest first.

    ``exact`` multiplies every vector whatever the partition's size (the benchmark's yardstick).
    A partition of at most ``DIRECT_UP_TO`` memories is scanned by sqlite-vec. Several
    projects: each partition's nearest, merged.
    """
    if k <= 0 or VECTORS in store.degraded:
        return []
    if isinstance(project, tuple):
        merged = [hit for p in project for hit in knn(store, vector, k, project=p, exact=exact)]
        return sorted(merged, key=lambda hit: hit[1])[:k]
    np = None if not exact and store.vectors.few(DIRECT_UP_TO, project=project) else _numpy()
    if np is None:
        return store.vectors.knn(vector, k, project=project) if has_vectors(store) else []
    with warm(store).vectors_guard:
        index = _sync(store, np)
        names = [project] if project is not None else list(index.parts)
        picked = [index.parts[name].joined(np) for name in names if name in index.parts]
    query = np.asarray(vector, dtype=np.float32)
    found_seqs, found_sims = [], []
    for seqs, matrix, bits in picked:
        deep = max(OVERSAMPLE * k, RERANK_MIN)
        if exact or len(seqs) <= max(EXACT_UP_TO, deep):
            rows, sims = None, matrix @ query
        else:
            rows = _nearest_by_bits(bits, sign_bits(query[None, :], np)[:, 0], deep, np)
            sims = matrix[rows] @ query
        top = _top(sims, k, np)
        found_seqs.append(seqs[top if rows is None else rows[top]])
        found_sims.append(sims[top])
    if not found_seqs:
        return []
    seqs = np.concatenate(found_seqs)
    sims = np.concatenate(found_sims)
    order = np.argsort(-sims, kind="stable")[:k]
    return [(int(seqs[i]), float(1.0 - sims[i])) for i in order]


def _top(values: Any, k: int, np: Any) -> Any:
    """Positions of the ``k`` largest values (in no particular order)."""
    if k >= len(values):
        return np.arange(len(values))
    return np.argpartition(-values, k - 1)[:k]


def _nearest_by_bits(bits: Any, query: Any, m: int, np: Any) -> Any:
    """Positions of the ``m`` rows whose sign bits differ least from the query's."""
    distance = np.bitwise_count(bits[0] ^ query[0]).astype(np.uint16)
    for word in range(1, len(query)):
        distance += np.bitwise_count(bits[word] ^ query[word])
    return np.argpartition(distance, m - 1)[:m]
