"""Latency on synthetic stores of growing size: search, depth-5 traversal, save, DB size.

Stores are built through the product's save path. Stored vectors are the real model's
embeddings of a pool of the store's own texts with a little noise (embedding 100k texts would
take minutes and brute-force KNN costs the same whatever the vectors hold); every query is
embedded by the real model inside the timed search, warm, model load excluded.
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.services.graph.traverse import traverse
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.services.search import vector_index
from mama_plugin.services.search.options import CANDIDATES
from mama_plugin.services.search.retrieval import MIN_CONFIDENCE, retrieve
from mama_plugin.services.story.answers import search_by_context
from mama_plugin.storage import Store

from . import bulk, floor
from .synthetic import QUERIES, save_generated

PROJECT = "/bench/synthetic"
SAVED = 10_000  # memories saved through the save path; a larger store grows by copies
LAYOUT_QUERIES = 100


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0–100) by linear interpolation."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    position = (len(ordered) - 1) * q / 100
    low, high = int(position), min(int(position) + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def build(store: Store, n: int, embedder: EmbeddingModel | None) -> tuple[list[str], Any]:
    """``n`` synthetic memories, every one with a vector; returns the saved ids and the pool.

    Up to ``SAVED`` memories go through the product's save path (with links and outcomes);
    past that the store grows by copies (:mod:`bulk`). The pool is the real embeddings the
    synthetic vectors are blended from (None without an embedder).
    """
    ids = save_generated(store, PROJECT, min(n, SAVED))
    if n > SAVED:
        bulk.grow(store, n)
    pool = None
    if embedder is not None:
        pool = bulk.fill_vectors(store, embedder)
        bulk.fill_views(store, embedder)
    return ids, pool


def _timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


def measure(n: int, embedder: EmbeddingModel | None, *, queries: int = 200) -> dict[str, Any]:
    """Build a store of ``n`` memories; time search beside its floor, traversal and save."""
    with tempfile.TemporaryDirectory(prefix="mama-latency-") as tmp:
        home = Path(tmp)
        with Store.open(home / "mama.db", config=Config(home)) as store:
            started = time.perf_counter()
            ids, pool = build(store, n, embedder)
            store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            build_s = time.perf_counter() - started
            size = sum(p.stat().st_size for p in home.glob("mama.db*"))
            started = time.perf_counter()
            vector_index.load(store)
            load_s = time.perf_counter() - started
            rng = random.Random(3)
            asked = [rng.choice(QUERIES) for _ in range(queries)]
            for q in QUERIES:  # warm: page cache, statements, model
                search_by_context(store, q, embedder=embedder, project=PROJECT, record_usage=False)
                floor.floor_times(store, [q], embedder, PROJECT)
            search: list[float] = []
            ranked: list[float] = []  # the ranking alone (retrieve), without the answer
            below: dict[str, list[float]] = {}
            load = os.getloadavg()[0]
            for q in asked:  # interleaved: a burst of load slows both alike
                took, _ = floor.clocked(
                    search_by_context, store, q, embedder=embedder, project=PROJECT,
                    record_usage=False,
                )  # fmt: skip
                search.append(took)
                took, _ = floor.clocked(
                    retrieve, store, q, embedder=embedder, project=PROJECT,
                    min_confidence=MIN_CONFIDENCE,
                )  # fmt: skip
                ranked.append(took)
                for key, values in floor.floor_times(store, [q], embedder, PROJECT).items():
                    below.setdefault(key, []).extend(values)
            load = (load + os.getloadavg()[0]) / 2
            layout = _layouts(store, embedder, pool, rng)

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

            starts = iter(rng.sample(ids, min(queries, len(ids))))
            walk = _timed(
                lambda: traverse(store, next(starts), max_depth=5), min(queries, len(ids))
            )
            saves = _timed(one_save, 100)
    result: dict[str, Any] = {
        "memories": n,
        "build_s": round(build_s, 2),
        "index_load_s": round(load_s, 2),
        "db_bytes": size,
        "load_avg": round(load, 2),
    }
    answer = [a - b for a, b in zip(search, ranked, strict=True)]  # per query: what ranking left
    timed = (("search", search), ("retrieve", ranked), ("answer", answer), *below.items())
    for name, values in (*timed, ("traverse5", walk), ("save", saves)):
        result[f"{name}_p50_ms"] = round(percentile(values, 50), 3)
        result[f"{name}_p95_ms"] = round(percentile(values, 95), 3)
    result["floor_ratio_p95"] = round(result["search_p95_ms"] / result["floor_p95_ms"], 2)
    result["floor_ratio_p50"] = round(result["search_p50_ms"] / result["floor_p50_ms"], 2)
    result.update(layout)
    return result


def _layouts(
    store: Store, embedder: EmbeddingModel | None, pool: Any, rng: random.Random
) -> dict[str, Any]:
    """Vector layouts timed on the same store, and recall of the quantised KNN against exact.

    Query vectors: the real embeddings of the bench's questions, then vectors drawn the way
    the memories' were (:func:`bulk.blend`), ``LAYOUT_QUERIES`` in all.
    """
    if embedder is None or pool is None:
        return {}
    import numpy as np

    vectors = embedder.embed(list(QUERIES))
    drawn = bulk.blend(
        pool, LAYOUT_QUERIES - len(vectors), np.random.default_rng(rng.randrange(2**32))
    )
    timed = floor.layouts(store, [*vectors, *drawn.tolist()], PROJECT)
    out: dict[str, Any] = {
        "knn_recall_at_10": round(timed["recall_at_10"], 4),
        "knn_recall_at_depth": round(timed["recall_at_depth"], 4),
    }
    for name in ("exact", "quantised", "sqlite_vec"):
        out[f"knn_{name}_p50_ms"] = round(percentile(timed[f"{name}_ms"], 50), 3)
        out[f"knn_{name}_p95_ms"] = round(percentile(timed[f"{name}_ms"], 95), 3)
    return out


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


def report(rows: Sequence[dict[str, Any]], embedder_name: str | None, queries: int) -> str:
    """The figures of :func:`measure` at each size, as the text ``latency`` prints."""
    lines = [
        f"Latency (warm, model load excluded; {queries} searches per size; embedding model: "
        f"{embedder_name or 'none (keyword only)'}; ms unless said)",
        "Search against its floor (embed + bare FTS5 MATCH + bare KNN, timed per query in turn):",
        f"{'memories':>9} {'build s':>8} {'index s':>8} {'DB MB':>8} {'load':>5} "
        f"{'search p50':>11} {'p95':>8} {'floor p50':>10} {'p95':>8} {'ratio p95':>10} "
        f"{'embed p95':>10} {'fts p95':>8} {'knn p95':>8}",
    ]
    for r in rows:
        lines.append(
            f"{r['memories']:>9} {r['build_s']:>8.1f} {r['index_load_s']:>8.2f} "
            f"{r['db_bytes'] / 1e6:>8.1f} {r['load_avg']:>5.1f} "
            f"{r['search_p50_ms']:>11.2f} {r['search_p95_ms']:>8.2f} "
            f"{r['floor_p50_ms']:>10.2f} {r['floor_p95_ms']:>8.2f} {r['floor_ratio_p95']:>9.2f}x "
            f"{r['embed_p95_ms']:>10.2f} {r['fts_p95_ms']:>8.2f} {r['knn_p95_ms']:>8.2f}"
        )
    lines.append(
        "Where a search's time goes: the ranking alone (retrieve: keyword + vector candidates, "
        "fusion, ranking) beside the floor; the answer is search − retrieve, query by query "
        "(chains, open steps, text)"
    )
    lines.append(
        f"{'memories':>9} {'retrieve p50':>13} {'p95':>8} {'ratio p95':>10} "
        f"{'answer p50':>11} {'p95':>8}"
    )
    for r in rows:
        lines.append(
            f"{r['memories']:>9} {r['retrieve_p50_ms']:>13.2f} {r['retrieve_p95_ms']:>8.2f} "
            f"{r['retrieve_p95_ms'] / r['floor_p95_ms']:>9.2f}x "
            f"{r['answer_p50_ms']:>11.2f} {r['answer_p95_ms']:>8.2f}"
        )
    if any("knn_recall_at_10" in r for r in rows):
        lines += [
            f"Vector layouts on the same store ({LAYOUT_QUERIES} query vectors, "
            f"{CANDIDATES} deep): recall is the quantised KNN's against the exact one",
            f"{'memories':>9} {'exact p50':>10} {'p95':>8} {'bits+rerank p50':>16} {'p95':>8} "
            f"{'sqlite-vec p50':>15} {'p95':>8} {'R@10':>6} {f'R@{CANDIDATES}':>6}",
        ]
        for r in rows:
            if "knn_recall_at_10" not in r:
                continue
            lines.append(
                f"{r['memories']:>9} {r['knn_exact_p50_ms']:>10.2f} {r['knn_exact_p95_ms']:>8.2f} "
                f"{r['knn_quantised_p50_ms']:>16.2f} {r['knn_quantised_p95_ms']:>8.2f} "
                f"{r['knn_sqlite_vec_p50_ms']:>15.2f} {r['knn_sqlite_vec_p95_ms']:>8.2f} "
                f"{r['knn_recall_at_10']:>6.3f} {r['knn_recall_at_depth']:>6.3f}"
            )
    lines.append(f"{'memories':>9} {'traverse5 p50':>14} {'p95':>8} {'save p50':>9} {'p95':>8}")
    for r in rows:
        lines.append(
            f"{r['memories']:>9} {r['traverse5_p50_ms']:>14.3f} {r['traverse5_p95_ms']:>8.3f} "
            f"{r['save_p50_ms']:>9.2f} {r['save_p95_ms']:>8.2f}"
        )
    return "\n".join(lines) + "\n"
