"""The ``retrieval`` and ``latency`` runs: each returns the text to print and every figure."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mama_plugin.embeddings.protocol import EmbeddingModel

from . import latency, locomo
from .report import retrieval_tables

TOKENIZER = "FTS5 porter + unicode61 (remove_diacritics 2), English stopwords removed"


def retrieval(
    dataset: Path,
    audit: Path | None,
    embedder: EmbeddingModel | None,
    *,
    depth: int = 50,
    progress: Callable[[str], None] | None = None,
    updates: Path | None = None,
) -> tuple[str, dict[str, Any]]:
    """Run LoCoMo through save + search_by_context; print tables, return every figure.

    With ``updates`` (SituatedQA's temporal file), also the latest-first rates
    (:mod:`.updates`).
    """
    load_start = _load()
    conversations, cleaning = locomo.load(dataset, audit)
    systems = locomo.systems_for(embedder)
    started = time.perf_counter()
    run = locomo.run(conversations, embedder, depth=depth, systems=systems, progress=progress)
    figures = locomo.score(run)
    headline = "full"
    headline_turn = figures["original"][headline]["turn"]["1-4"]
    headline_session = figures["original"][headline]["session"]["1-4"]
    search_ms = {s: round(statistics.median(v), 3) for s, v in run.search_ms.items() if v}
    info = {
        "dataset": str(dataset),
        "dataset_sha256": locomo.sha256(dataset),
        "audit": str(audit) if audit else None,
        "questions": len(run.questions),
        "headline_questions": headline_turn["n"],
        "turns": run.turns,
        "tokenizer": TOKENIZER,
        "embedding_model": embedder.name if embedder is not None else None,
        "retrieval_depth": depth,
        "systems": list(systems),
        "cleaning": {
            "rewritten": cleaning.rewritten,
            "dropped": cleaning.dropped,
            "questions_without_evidence": cleaning.questions_without_evidence,
        },
        "ingest_s": round(run.ingest_seconds, 2),
        "embed_s": round(run.embed_seconds, 2),
        "search_median_ms": search_ms,
        "seconds": round(time.perf_counter() - started, 1),
    }
    data = {
        "turn_r10": headline_turn["r10"],
        "session_r10": headline_session["r10"],
        "figures": figures,
        **info,
    }
    lines = [
        f"LoCoMo retrieval — {dataset} (sha256 {info['dataset_sha256'][:16]}…)",
        f"{run.turns} turns saved, {len(run.questions)} questions "
        f"({headline_turn['n']} in categories 1–4), retrieval depth {depth}",
        f"analyzer: {TOKENIZER}",
        f"embedding model: {info['embedding_model'] or 'none (keyword only)'}",
        f"evidence cleaning: {len(cleaning.rewritten)} entries rewritten, "
        f"{len(cleaning.dropped)} with ids dropped, "
        f"{len(cleaning.questions_without_evidence)} questions without evidence left out",
        f"time: ingest {info['ingest_s']} s, embed {info['embed_s']} s, "
        f"search median {search_ms} ms per question",
        retrieval_tables(
            {
                e: {n: v for n, v in by.items() if n in ("bm25", "today", "full")}
                for e, by in figures.items()
            }
        ),
        locomo.ablation_table(figures),
        f"headline (categories 1–4, original evidence, {headline}): "
        f"turn R@10 {headline_turn['r10']:.3f}, session R@10 {headline_session['r10']:.3f}",
    ]
    from . import ownset

    own = ownset.run(embedder)
    data["own_set"] = own
    lines += ["\nthe project's own recall set (recall_prompts.json, labelled prompts):",
              ownset.table(own).rstrip("\n")]  # fmt: skip
    if updates is not None:
        from . import updates as changing

        facts = changing.load(updates)
        rates = changing.run(facts, embedder, progress=progress)
        data["updates"] = {"file": str(updates), "sha256": locomo.sha256(updates), **rates}
        lines += [
            f"\nfacts that change over time — SituatedQA {updates.name} "
            f"(sha256 {data['updates']['sha256'][:16]}…), top 10:",
            changing.table(rates).rstrip("\n"),
        ]
    data["load"] = {"start": load_start, "end": _load()}
    lines.append(f"load average (1, 5, 15 min): {load_start} at the start, {_load()} at the end")
    return "\n".join(lines) + "\n", data


def _load() -> str:
    """The 1, 5 and 15 minute load averages (what the figures were measured under)."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def latency_run(
    sizes: list[int],
    embedder: EmbeddingModel | None,
    *,
    queries: int = 200,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Time search beside its floor, traversal and save on synthetic stores (p50/p95, size)."""
    rows = []
    data: dict[str, Any] = {"embedding_model": embedder.name if embedder else None, "sizes": {}}
    for n in sizes:
        result = latency.measure(n, embedder, queries=queries)
        rows.append(result)
        label = _label(n)
        data["sizes"][label] = result
        for key in ("search_p50_ms", "search_p95_ms", "traverse5_p50_ms", "traverse5_p95_ms",
                    "save_p50_ms", "save_p95_ms"):  # fmt: skip
            data[key.replace("traverse5", "traverse").replace("_ms", f"_ms_{label}")] = result[key]
        if progress:
            progress(f"{n} memories: built in {result['build_s']} s")
    text = latency.report(rows, data["embedding_model"], queries)
    if embedder is not None:
        data["embed_texts_per_s"] = round(latency.embedding_rate(embedder), 1)
        text += f"embedding: {data['embed_texts_per_s']} short texts/s (batches of 64)\n"
    return text, data


def _label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)
