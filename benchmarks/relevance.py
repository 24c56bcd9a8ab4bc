"""The ``relevance`` benchmark: ranking's factors beside the relevance composite, term by term.

Rows (:data:`SYSTEMS`, each a :class:`~mama_plugin.services.retrieval.Options` on the
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
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.errors import MamaError
from mama_plugin.services import recall
from mama_plugin.services.hubs import HUB_MIN
from mama_plugin.services.relevance import TERMS, WEIGHTS
from mama_plugin.services.retrieval import DEFAULT, HUB_BOOST, EmbeddingModel, Options

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
LOCOMO_METRICS = ("r5", "r10", "mrr", "ndcg10")


def locomo_rows(
    dataset: Path,
    embedder: EmbeddingModel | None,
    *,
    depth: int,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every system on LoCoMo: figures[system][half][metric], categories 1–4."""
    conversations, _ = locomo.load(dataset, None)
    table = {name: (options, True) for name, options in SYSTEMS.items()}
    run = locomo.run(
        conversations, embedder, depth=depth, systems=tuple(SYSTEMS), progress=progress,
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
    """Every system on the recall sets: figures[system][half] = recall, silence, counts."""
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
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The ``relevance`` benchmark: both sets, every system; the report and its figures."""
    reader: EmbeddingModel | None = None
    try:
        from mama_plugin.embeddings.e5 import E5Embedder

        if embedder is not None and not recall.reads_korean(embedder.name):
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
    }
    figures["locomo"] = locomo_rows(dataset, embedder, depth=depth, progress=progress)
    data = labelled(dataset)
    figures["sources"] = data.sources
    figures["recall"] = recall_rows(
        data, embedder, bar=config.settings.relevance_bar, reader=reader, progress=progress
    )
    figures["load"] = f"{load_before:.1f} → {os.getloadavg()[0]:.1f}"
    return report(figures), figures


def report(figures: dict[str, Any]) -> str:
    """The ablation table: one row a system, LoCoMo's figures then recall's, by half."""
    w = figures["weights"]
    lines = [
        "Relevance: ranking's factors beside the composite "
        + " + ".join(f"{w[t]} × {t}" for t in TERMS),
        f"LoCoMo {figures['dataset']} (sha256 {figures['dataset_sha256'][:16]}…), model "
        f"{figures['model'] or 'none (keywords)'}"
        + (f" (+{figures['reader']} reading Korean prompts)" if figures["reader"] else "")
        + f", depth {figures['depth']}, relevance_bar {figures['bar']}, load {figures['load']}",
        *(f"  recall source: {s}" for s in figures["sources"]),
        f"hubs in the stores: LoCoMo 0 (turns saved without links), recall "
        f"{figures['recall']['hubs']}: +hubs (×{1 + figures['hub_boost']}) and the hub part of "
        "importance cannot move these figures",
        "",
        f"{'system':<22}{'half':<13}{'LoCoMo R@5':>11}{'R@10':>7}{'MRR':>7}{'nDCG10':>8}"
        f"{'recall':>8}{'silence':>9}",
    ]
    base = figures["locomo"]["factors"]
    for system in SYSTEMS:
        for half in HALVES:
            lo = figures["locomo"][system][half]
            rc = figures["recall"][system][half]
            lines.append(
                f"{system:<22}{half:<13}{lo['r5']:>11.3f}{lo['r10']:>7.3f}{lo['mrr']:>7.3f}"
                f"{lo['ndcg10']:>8.3f}{fmt(rc['recall']):>8}{fmt(rc['silence']):>9}"
            )
        held = figures["locomo"][system]["held-out"]["r10"] - base["held-out"]["r10"]
        lines.append(f"{'':<22}{'Δ R@10 held-out vs factors':<30}{held:+.3f}")
    n_lo = base["held-out"]["n"]
    n_rc = figures["recall"]["factors"]["held-out"]
    lines.append(
        f"(held-out: LoCoMo {n_lo} questions of categories 1–4; recall {n_rc['related']} "
        f"related, {n_rc['unrelated']} unrelated prompts)"
    )
    return "\n".join(lines) + "\n"
