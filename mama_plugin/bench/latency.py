"""Latency on synthetic stores of growing size: search, depth-5 traversal, save, DB size.

Stores are built through the product's save path. Stored vectors are the real model's
embeddings of a pool of the store's own texts with a little noise (embedding 100k texts would
take minutes and brute-force KNN costs the same whatever the vectors hold); every query is
embedded by the real model inside the timed search, warm, model load excluded.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..config import Config
from ..services.answers import search_by_context
from ..services.graph import traverse
from ..services.memories import record_outcome, save_checkpoint, save_decision
from ..services.retrieval import EmbeddingModel
from ..storage import Store
from .synthetic import QUERIES, generate

PROJECT = "/bench/synthetic"
POOL = 512


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) by linear interpolation."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    position = (len(ordered) - 1) * q / 100
    low, high = int(position), min(int(position) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def build(store: Store, n: int, embedder: EmbeddingModel | None) -> list[str]:
    """Save ``n`` synthetic memories (with links and outcomes) and give every one a vector."""
    ids: list[str] = []
    with store.transaction():
        for item in generate(n):
            if item.kind == "checkpoint":
                data = {
                    **item.data,
                    "implements": [ids[item.implements]] if item.implements is not None else [],
                }
                ids.append(save_checkpoint(store, PROJECT, data).memory.id)
                continue
            data = dict(item.data)
            if item.supersedes is not None:
                data["supersedes"] = ids[item.supersedes]
            if item.relates_to is not None:
                data["links"] = [
                    {
                        "to_id": ids[item.relates_to],
                        "relationship": "relates_to",
                        "reason": "same service, shared failure mode",
                    }
                ]
            memory_id = save_decision(store, PROJECT, data).memory.id
            ids.append(memory_id)
            if item.outcome:
                record_outcome(
                    store,
                    {
                        "memory_id": memory_id,
                        "outcome": item.outcome[0],
                        "details": item.outcome[1],
                    },
                )
    if embedder is not None:
        _fill_vectors(store, embedder)
    return ids


def _fill_vectors(store: Store, embedder: EmbeddingModel) -> None:
    store.vectors.check_model(embedder.name, embedder.dim)
    rng = random.Random(11)
    pending = store.vectors.pending(1_000_000)
    pool = embedder.embed([text for _, text in pending[:POOL]])
    batch: list[tuple[int, list[float]]] = []
    for i, (seq, _) in enumerate(pending):
        base = pool[i % len(pool)]
        noisy = [x + rng.gauss(0, 0.02) for x in base]
        norm = sum(x * x for x in noisy) ** 0.5
        batch.append((seq, [x / norm for x in noisy]))
        if len(batch) == 2000:
            store.vectors.put(batch)
            batch = []
    if batch:
        store.vectors.put(batch)


def _timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


def measure(n: int, embedder: EmbeddingModel | None, *, queries: int = 200) -> dict[str, Any]:
    """Build a store of ``n`` memories and time search, traversal and save on it."""
    with tempfile.TemporaryDirectory(prefix="mama-latency-") as tmp:
        home = Path(tmp)
        with Store.open(home / "mama.db", config=Config(home)) as store:
            started = time.perf_counter()
            ids = build(store, n, embedder)
            build_s = time.perf_counter() - started
            rng = random.Random(3)
            asked = [rng.choice(QUERIES) for _ in range(queries)]
            for q in QUERIES:  # warm: page cache, statements, model
                search_by_context(store, q, embedder=embedder, project=PROJECT, record_usage=False)
            it = iter(asked)

            def one_search() -> object:
                return search_by_context(
                    store, next(it), embedder=embedder, project=PROJECT, record_usage=False
                )

            def one_save() -> object:
                link = {
                    "to_id": rng.choice(ids),
                    "relationship": "relates_to",
                    "reason": "shares the cache tier",
                }
                return save_decision(
                    store,
                    PROJECT,
                    {
                        "topic": "bench_save",
                        "decision": "Use Redis for the bench cache",
                        "reasoning": "p99 4 ms at 10K req/s",
                        "links": [link],
                    },
                )

            search = _timed(one_search, queries)
            starts = iter(rng.sample(ids, min(queries, len(ids))))
            walk = _timed(
                lambda: traverse(store, next(starts), max_depth=5), min(queries, len(ids))
            )
            saves = _timed(one_save, 100)
            store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            size = sum(p.stat().st_size for p in home.glob("mama.db*"))
    return {
        "memories": n,
        "build_s": round(build_s, 2),
        "search_p50_ms": round(percentile(search, 50), 3),
        "search_p95_ms": round(percentile(search, 95), 3),
        "traverse5_p50_ms": round(percentile(walk, 50), 3),
        "traverse5_p95_ms": round(percentile(walk, 95), 3),
        "save_p50_ms": round(percentile(saves, 50), 3),
        "save_p95_ms": round(percentile(saves, 95), 3),
        "db_bytes": size,
    }


def embedding_rate(embedder: EmbeddingModel, *, texts: int = 500, runs: int = 3) -> float:
    """Short texts embedded per second (median of ``runs``), batched as the indexer does."""
    sample = [f"{q} — variant {i}" for i, q in enumerate(QUERIES * (texts // len(QUERIES) + 1))][
        :texts
    ]
    rates = []
    for _ in range(runs):
        started = time.perf_counter()
        for i in range(0, len(sample), 64):
            embedder.embed(sample[i : i + 64])
        rates.append(len(sample) / (time.perf_counter() - started))
    return statistics.median(rates)
