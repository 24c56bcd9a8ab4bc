"""Which renderer draws each measurement table of benchmarks/README.md, from which JSON.

A table's marker name (``<!-- table: NAME -->``) maps to the stem of its JSON file under
``benchmarks/results/`` (several tables may read one) and the function that renders it; only
figures the JSON holds are shown, a missing one as "–".
"""

from __future__ import annotations

from .tables_format import Renderer
from .tables_quality import (
    answers_done,
    answers_sessions,
    decay_aged,
    decay_locomo,
    duplicates,
    exposure,
    extraction,
    extraction_quiet,
    graph_size,
    graph_words,
    recall_rows,
    recall_sweep,
    recall_tiers,
    relevance,
    report_table,
    retrieval,
    retrieval_categories,
    retrieval_options,
    secrets,
    share_sizes,
    truth,
)
from .tables_speed import (
    fuzz,
    growth,
    hooks,
    hooks_tokens,
    integrity,
    kills,
    latency,
    latency_vectors,
    presence,
    presence_phases,
    startup,
    team,
    turns,
    view,
    warm,
    writers,
)

__all__ = ["TABLES"]

# table name (its marker) -> the JSON it is rendered from (``benchmarks/results/STEM.json``), how.
TABLES: dict[str, tuple[str, Renderer]] = {
    "truth": ("truth", truth),
    "extraction": ("extraction", extraction),
    "extraction-quiet": ("extraction", extraction_quiet),
    "answers": ("answers-keyword-only", answers_sessions),
    "answers-done-story": ("answers-keyword-only", answers_done("story")),
    "answers-done-split": ("answers-keyword-only", answers_done("split")),
    "exposure": ("exposure", exposure),
    "startup": ("startup", startup),
    "graph-words": ("graph", graph_words),
    "graph-size": ("graph", graph_size),
    "duplicates": ("duplicates", duplicates),
    "share": ("share", share_sizes),
    "secrets": ("secrets", secrets),
    "hooks": ("hooks", hooks),
    "hooks-tokens": ("hooks", hooks_tokens),
    "latency": ("latency", latency),
    "latency-vectors": ("latency", latency_vectors),
    "writers": ("writers", writers),
    "integrity": ("integrity", integrity),
    "fuzz": ("fuzz", fuzz),
    "kills": ("kills", kills),
    "growth": ("growth", growth),
    "presence": ("presence", presence),
    "presence-phases": ("presence", presence_phases),
    "team": ("team", team),
    "warm": ("warm", warm),
    "turns": ("turns", turns),
    "view": ("view", view),
    "stopped": ("stopped-gemma", report_table("stopped", 0)),
    "draft": ("draft-gemma", report_table("draft", 0)),
    "draft-layers": ("draft-gemma", report_table("draft", 1)),
    "links": ("links-gemma", report_table("links", 0)),
    "memory": ("memory", report_table("memory", 0, "_report")),
    "contention": ("contention", report_table("contention", 0, "_report")),
    "decay": ("decay", decay_locomo),
    "decay-aged": ("decay", decay_aged),
    "retrieval": ("retrieval", retrieval),
    "retrieval-categories": ("retrieval", retrieval_categories),
    "retrieval-options": ("retrieval", retrieval_options),
    "relevance": ("relevance", relevance),
    "relevance-locomo": ("relevance-locomo", relevance),
    "relevance-recall": ("relevance-recall", relevance),
    "recall": ("recall-quick", recall_rows),
    "recall-tiers": ("recall-quick", recall_tiers),
    "recall-sweep": ("recall-quick", recall_sweep),
}
