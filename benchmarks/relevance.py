"""The ``relevance`` benchmark: ranking's factors beside the relevance composite, term by term.

Rows (:data:`SYSTEMS`, each a :class:`~mama_plugin.services.search.retrieval.Options` on the
default): ``factors`` (the ranking before hubs), ``+hubs`` (hubs ×1.2 on top of it: the
default), ``composite``
(``relevance × (0.5 + composite)``), the composite with each of its four terms removed
(weight 0, the others scaled back to sum 1) and ``formula`` (the composite alone). Each row is
measured on two sets nobody on this team wrote:

- **LoCoMo-10** through :mod:`.locomo`'s protocol (every turn a memory, questions as of the
  conversation's last date): turn R@5, R@10, MRR and nDCG@10 on categories 1–4 with the
  original evidence, on the calibration half (even question numbers) and the held-out one.
- **Prompt recall** (:mod:`.recall_data`: LoCoMo observations, Stack Overflow duplicates,
  KLUE-STS), through :func:`services.recall.recall` at the configured ``relevance_bar``:
  recall and silence on each half.

The stores hold no links (LoCoMo's turns and the recall sets' memories are saved without
any), so no memory is a hub there: the ``+hubs`` row and the composite's hub part cannot move
these figures, and the report says how many hubs each store held.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.cards import reads_korean
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.errors import MamaError
from mama_plugin.services.learning.hubs import HUB_MIN
from mama_plugin.services.recall import prompt as recall
from mama_plugin.services.search.options import DEFAULT, HUB_BOOST, Options
from mama_plugin.services.search.relevance import TERMS, WEIGHTS

from . import locomo, metrics
from .recall_core import PROJECT, fmt, keyed, score, store_of
from .recall_data import Labelled, labelled

FACTORS = replace(DEFAULT, hub_boost=0.0)  # the ranking before hubs
COMPOSITE = replace(FACTORS, scoring="composite")
SYSTEMS: dict[str, Options] = {
    "factors": FACTORS,
    "+hubs": replace(FACTORS, hub_boost=HUB_BOOST),
    "composite": COMPOSITE,
    **{f"composite-{t}": replace(COMPOSITE, weights=WEIGHTS.without(t)) for t in TERMS},
    "formula": replace(FACTORS, scoring="formula"),
}
HALVES = ("calibration", "held-out")
PARTS = ("locomo", "recall")
LOCOMO_METRICS = ("r5", "r10", "mrr", "ndcg10")


def locomo_rows(
    dataset: Path,
    embedder: EmbeddingModel | None,
    *,
    depth: int,
    conversations: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every system on LoCoMo (its first ``conversations``, default all):
    figures[system][half][metric], categories 1–4."""
    every, _ = locomo.load(dataset, None)
    asked = every[:conversations] if conversations else every
    table = {name: (options, True) for name, options in SYSTEMS.items()}
    run = locomo.run(
        asked, embedder, depth=depth, systems=tuple(SYSTEMS), progress=progress,
        ablation=table,
    )  # fmt: skip
    out: dict[str, Any] = {}
    for system, ranked in run.ranked.items():
        out[system] = {}
        for half in HALVES:
            values: dict[str, list[float]] = {m: [] for m in LOCOMO_METRICS}
            for question, found in zip(run.questions, ranked, strict=True):
                if question.category not in locomo.HEADLINE or _half(question.index) != half:
                    continue
                for name in LOCOMO_METRICS:
                    values[name].append(metrics.TURN_METRICS[name](found, set(question.original)))
            out[system][half] = {m: round(metrics.mean(v), 4) for m, v in values.items()}
            out[system][half]["n"] = len(values["r10"])
        ms = sorted(run.search_ms[system])
        out[system]["ms_p50"] = round(ms[len(ms) // 2], 1) if ms else None
    return out


def _half(number: int) -> str:
    return "calibration" if number % 2 == 0 else "held-out"


def recall_rows(
    data: Labelled,
    embedder: EmbeddingModel | None,
    *,
    bar: float,
    reader: EmbeddingModel | None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every system on the recall sets (``data.cases``): figures[system][half] = recall,
    silence, counts."""
    say = progress or (lambda _line: None)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mama-bench-relevance-") as tmp:
        say(f"recall: storing {len(data.memories)} memories")
        store, keys = store_of(Path(tmp), data, embedder)
        try:
            every = [m.seq for m in store.memories.iter(project=PROJECT)]
            out["hubs"] = len(store.references.hub_seqs(every, HUB_MIN))
            for system, options in SYSTEMS.items():
                say(f"recall: {system}, {len(data.cases)} prompts")
                started = time.perf_counter()
                injected = [
                    [h.memory.id for h in recall.recall(
                        store, case.prompt, project=PROJECT, embedder=embedder,
                        cosine_bar=bar, reader=reader, options=options,
                    ).hits]
                    for case in data.cases
                ]  # fmt: skip
                elapsed = (time.perf_counter() - started) * 1000 / max(1, len(data.cases))
                found = keyed(injected, keys)
                out[system] = {half: score(data.cases, found, half)["all"] for half in HALVES}
                out[system]["ms_mean"] = round(elapsed, 1)
        finally:
            store.close()
    return out


def relevance_run(
    config: Config,
    embedder: EmbeddingModel | None,
    dataset: Path,
    *,
    depth: int = 25,
    parts: Sequence[str] = PARTS,
    conversations: int | None = None,
    every: int = 1,
    quick: bool = False,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The ``relevance`` benchmark: the ``parts`` asked (both sets by default), every system;
    the report and its figures. ``conversations``: LoCoMo's first N; ``every``: one recall
    prompt in N (each set and half keeps its share); ``quick``: no multilingual-e5 reading
    Korean prompts for a model that cannot (the same for every row)."""
    reader: EmbeddingModel | None = None
    try:
        from mama_plugin.embeddings.e5 import E5Embedder

        if not quick and embedder is not None and not reads_korean(embedder.name):
            reader = E5Embedder(threads=1)  # as the prompt hook reads Korean prompts
    except MamaError as exc:
        (progress or print)(f"multilingual-e5 left out: {exc}")
    load_before = os.getloadavg()[0]
    figures: dict[str, Any] = {
        "dataset": str(dataset),
        "dataset_sha256": locomo.sha256(dataset),
        "model": embedder.name if embedder is not None else None,
        "reader": reader.name if reader is not None else None,
        "depth": depth,
        "bar": config.settings.relevance_bar,
        "weights": {t: getattr(WEIGHTS, t) for t in TERMS},
        "hub_boost": HUB_BOOST,
        "conversations": conversations,
        "every": every,
    }
    if "locomo" in parts:
        figures["locomo"] = locomo_rows(
            dataset, embedder, depth=depth, conversations=conversations, progress=progress
        )
    if "recall" in parts:
        data = labelled(dataset)
        data.cases = data.cases[::every]
        figures["sources"] = data.sources
        figures["recall"] = recall_rows(
            data, embedder, bar=config.settings.relevance_bar, reader=reader, progress=progress
        )
    figures["load"] = f"{load_before:.1f} → {os.getloadavg()[0]:.1f}"
    return report(figures), figures


def report(figures: dict[str, Any]) -> str:
    """The ablation table: one row a system, LoCoMo's figures then recall's, by half."""
    w = figures["weights"]
    lo_all, rc_all = figures.get("locomo"), figures.get("recall")
    n_conv = figures.get("conversations")
    lines = [
        "Relevance: ranking's factors beside the composite "
        + " + ".join(f"{w[t]} × {t}" for t in TERMS),
        f"LoCoMo {figures['dataset']} (sha256 {figures['dataset_sha256'][:16]}…)"
        + (f", its first {n_conv} conversations" if n_conv else "")
        + f"; model {figures['model'] or 'none (keywords)'}"
        + (f" (+{figures['reader']} reading Korean prompts)" if figures["reader"] else "")
        + f", depth {figures['depth']}, relevance_bar {figures['bar']}, load {figures['load']}",
        *(f"  recall source: {s}" for s in figures.get("sources", [])),
    ]
    if figures.get("every", 1) > 1:
        lines.append(f"  recall prompts: one in {figures['every']}")
    if rc_all is not None:
        lines.append(
            f"hubs in the stores: LoCoMo 0 (turns saved without links), recall "
            f"{rc_all['hubs']}: +hubs (×{1 + figures['hub_boost']}) and the hub part of "
            "importance cannot move these figures"
        )
    lines += [
        "",
        f"{'system':<22}{'half':<13}{'LoCoMo R@5':>11}{'R@10':>7}{'MRR':>7}{'nDCG10':>8}"
        f"{'recall':>8}{'silence':>9}",
    ]
    for system in SYSTEMS:
        for half in HALVES:
            cells = f"{'-':>11}{'-':>7}{'-':>7}{'-':>8}"
            if lo_all is not None:
                lo = lo_all[system][half]
                cells = f"{lo['r5']:>11.3f}{lo['r10']:>7.3f}{lo['mrr']:>7.3f}{lo['ndcg10']:>8.3f}"
            rc = rc_all[system][half] if rc_all is not None else {"recall": None, "silence": None}
            lines.append(
                f"{system:<22}{half:<13}{cells}{fmt(rc['recall']):>8}{fmt(rc['silence']):>9}"
            )
        if lo_all is not None:
            held = lo_all[system]["held-out"]["r10"] - lo_all["factors"]["held-out"]["r10"]
            lines.append(f"{'':<22}{'Δ LoCoMo R@10 held-out vs factors':<35}{held:+.3f}")
    counts = []
    if lo_all is not None:
        counts.append(f"LoCoMo {lo_all['factors']['held-out']['n']} questions of categories 1–4")
    if rc_all is not None:
        n_rc = rc_all["factors"]["held-out"]
        counts.append(f"recall {n_rc['related']} related, {n_rc['unrelated']} unrelated prompts")
    lines.append(f"(held-out: {'; '.join(counts)})")
    return "\n".join(lines) + "\n"
