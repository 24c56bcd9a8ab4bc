"""The ``recall`` benchmark: does prompt-time recall bring back the memory meant, and only then?

On public prompts nobody on this team wrote (:mod:`recall_data`: KLUE-STS in Korean and Stack
Overflow duplicate questions, shipped; LoCoMo in English, when its file is there), each system
is asked every prompt against one store holding every memory; a related prompt counts when a
memory it means is injected (of at most three), an unrelated one when nothing is. Targets:
recall ≥ ``RECALL_TARGET`` and silence ≥ ``SILENCE_TARGET``, on the held-out half. Rows:

- ``today``: the rules before this bench (:mod:`.baselines.recall_before_hybrid`), MiniLM;
- ``hybrid/<model>``: :func:`services.recall.recall` (the hybrid search's candidates, judged),
  at the configured ``relevance_bar``, with each embedding model installed;
- ``hybrid/keywords``: the same with no vectors (a model still loading);
- a bar sweep of each hybrid row, both halves, so the bar's choice can be read off the
  calibration half and checked on the held-out one;
- the candidates' ranking compared (:mod:`recall_ranking`): the memory meant among the first
  one or two candidates, and the tiers, for each ranking of :data:`recall_ranking.RANKINGS`;
- what limits each hybrid row (:mod:`recall_causes`): its misses by cause and the ceiling
  the candidates' order sets; the pairs in one-memory stores, with the term-weight prior and
  without; the hand-written ``recall_prompts.json`` (16 + 16) as a smoke test.

Each row's per-prompt time (p50, p95) is printed beside it.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.cards import reads_korean
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.errors import MamaError
from mama_plugin.storage import Store
from mama_plugin.text import recall_terms, search_terms

from . import recall_causes, recall_ranking, recall_tiers
from .baselines import recall_before_hybrid
from .checkout import ROOT
from .recall_core import (
    PROJECT,
    Candidate,
    Row,
    candidates,
    fmt,
    judged,
    keyed,
    score,
    store_of,
)
from .recall_data import GROUPS, Case, Labelled

RECALL_TARGET = 0.85
SILENCE_TARGET = 0.97
SWEEP = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65)


def _ask_all(cases: Sequence[Case], ask: Callable[[str], list[str]]) -> Row:
    injected, ms = [], []
    for case in cases:
        started = time.perf_counter()
        injected.append(ask(case.prompt))
        ms.append((time.perf_counter() - started) * 1000)
    return Row("", injected, ms)


def run(
    data: Labelled,
    embedders: dict[str, EmbeddingModel],
    *,
    bar: float,
    progress: Callable[[str], None] | None = None,
    small: bool = True,
    budget: int = 300,
    reader: EmbeddingModel | None = None,
) -> dict[str, Any]:
    """Every row's figures (see the module docstring); ``small=False`` leaves out the
    one-memory stores and the smoke set; ``reader``: the model that reads Korean prompts for
    a model that cannot (as the prompt hook uses it), named in those rows ("+ko e5")."""
    say = progress or (lambda _line: None)
    out: dict[str, Any] = {"rows": {}, "sweeps": {}, "candidates": {}, "causes": {}, "tiers": {}}
    out["pointers"] = {}
    out["rankings"] = {}
    out |= {"small": {}, "smoke": {}}
    for model, embedder in [*embedders.items(), ("keywords", None)]:
        with tempfile.TemporaryDirectory(prefix="mama-bench-recall-") as tmp:
            say(f"{model}: storing {len(data.memories)} memories")
            store, keys = store_of(Path(tmp), data, embedder)
            try:
                today = model == "all-MiniLM-L6-v2" or (embedder is None and not embedders)
                helps = reader if reader is not None and not reads_korean(model) else None
                name = f"{model}+ko e5" if helps is not None else model
                _rows(out, name, store, keys, data.cases, (embedder, helps), (bar, budget),
                      today, say)  # fmt: skip
            finally:
                store.close()
        if small:
            say(f"hybrid/{model}: one-memory stores")
            out["small"][f"hybrid/{model}"] = recall_causes.small_stores(data, embedder, bar=bar)
            out["smoke"][f"hybrid/{model}"] = recall_causes.smoke(embedder, bar=bar)
    return out | {"bar": bar, "sources": data.sources}


def _rows(
    out: dict[str, Any],
    model: str,
    store: Store,
    keys: dict[str, str],
    cases: Sequence[Case],
    embedders: tuple[EmbeddingModel | None, EmbeddingModel | None],
    limits: tuple[float, int],
    today: bool,
    say: Callable[[str], None],
) -> None:
    """The rows one store answers: today's rules (with MiniLM, or with no model), the hybrid,
    the tiers (``embedders``: the store's model and the reader of Korean prompts; ``limits``:
    the relevance bar and the prompt's token budget)."""
    bar, budget = limits
    embedder, reader = embedders
    if today:
        say("today's rules")
        asked = _ask_all(
            cases,
            lambda p: recall_before_hybrid.recalled(store, p, project=PROJECT, embedder=embedder),
        )
        out["rows"]["today"] = _figures(cases, asked, keys)
    say(f"hybrid/{model}: {len(cases)} prompts")
    seen: list[list[Candidate]] = []

    def ask(prompt: str) -> list[str]:
        seen.append(candidates(store, prompt, embedder, reader))
        return [c[0] for c in seen[-1]]

    timed = _ask_all(cases, ask)
    answers = recall_tiers.ask(store, PROJECT, cases, seen, keys, embedders, bar=bar, budget=budget)
    out["tiers"][model] = recall_tiers.figures(cases, answers)
    out["pointers"][model] = recall_tiers.sweep(cases, _keyed_seen(seen, keys), bar)
    if embedder is not None:
        out["rankings"][model] = recall_ranking.compare(
            store, cases, keys, embedders, bar=bar, say=say
        )
    out["candidates"][model] = [[(keys.get(i, i), *rest) for i, *rest in c] for c in seen]
    passed = Row("", [judged(c, bar, model) for c in seen], timed.ms)
    out["rows"][f"hybrid/{model}"] = _figures(cases, passed, keys)
    out["causes"][f"hybrid/{model}"] = recall_causes.causes(
        cases,
        keyed([[c[0] for c in found] for found in seen], keys),
        keyed([judged(c, bar, model, cut=False) for c in seen], keys),
        [len(recall_terms(search_terms(c.prompt))) for c in cases],
    )
    out["sweeps"][f"hybrid/{model}"] = {
        str(b): {
            split: score(cases, keyed([judged(c, b, model) for c in seen], keys), split)["all"]
            for split in ("calibration", "held-out")
        }
        for b in SWEEP
    }


def _keyed_seen(seen: list[list[Candidate]], keys: dict[str, str]) -> list[list[Candidate]]:
    return [[(keys.get(c[0], c[0]), *c[1:]) for c in found] for found in seen]


def _figures(cases: Sequence[Case], row: Row, keys: dict[str, str]) -> dict[str, Any]:
    injected = keyed(row.injected, keys)
    ms = sorted(row.ms)
    return {
        "held-out": score(cases, injected, "held-out"),
        "calibration": score(cases, injected, "calibration"),
        "ms_p50": round(ms[len(ms) // 2], 1) if ms else None,
        "ms_p95": round(ms[int(len(ms) * 0.95)], 1) if ms else None,
    }


def report(figures: dict[str, Any], *, load: str) -> str:
    """The printed report: one line per row, then the bar sweeps."""
    lines = ["Prompt recall on public data (related: the memory meant is injected; unrelated:"]
    lines.append(f"nothing is). Targets: recall ≥ {RECALL_TARGET}, silence ≥ {SILENCE_TARGET}.")
    lines += [f"  source: {s}" for s in figures["sources"]]
    lines.append(f"relevance_bar {figures['bar']}; load average {load}")
    lines.append("")
    head = f"{'row':<34}{'half':<12}{'recall':>8}{'silence':>9}" + "".join(
        f"{g + ' r/s':>13}" for g in GROUPS[1:]
    )
    lines += [head + f"{'p50 ms':>8}{'p95 ms':>8}", "-" * (len(head) + 16)]
    for name, row in figures["rows"].items():
        for half in ("held-out", "calibration"):
            s = row[half]
            lines.append(
                f"{name:<34}{half:<12}{fmt(s['all']['recall']):>8}{fmt(s['all']['silence']):>9}"
                f"{_pair(s['en']):>13}{_pair(s['ko']):>13}"
                + (f"{row['ms_p50']:>8}{row['ms_p95']:>8}" if half == "held-out" else "")
            )
    n = figures["rows"][next(iter(figures["rows"]))]["held-out"]["all"]
    lines.append(f"(held-out: {n['related']} related, {n['unrelated']} unrelated prompts)")
    for name, sweep in figures["sweeps"].items():
        lines += ["", f"{name}: bar sweep (recall / silence)"]
        for b, halves in sweep.items():
            cal, held = halves["calibration"], halves["held-out"]
            lines.append(
                f"  bar {b:<6} calibration {fmt(cal['recall'])} / {fmt(cal['silence'])}"
                f"   held-out {fmt(held['recall'])} / {fmt(held['silence'])}"
            )
    lines += recall_tiers.report(figures.get("tiers", {}))
    lines += recall_tiers.sweep_report(figures.get("pointers", {}))
    lines += recall_ranking.report(figures.get("rankings", {}))
    lines += recall_causes.report(figures)
    return "\n".join(lines) + "\n"


def _pair(s: dict[str, Any]) -> str:
    return f"{fmt(s['recall'])}/{fmt(s['silence'])}"


LOCOMO = ROOT.parent / "shared" / "bench" / "locomo10.json"


def recall_run(
    config: Config,
    embedder: EmbeddingModel | None,
    locomo: Path | None = None,
    *,
    assist_judge: int = 0,
    quick: bool = False,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """The ``recall`` benchmark: every row on every labelled prompt; the report and its figures.

    The rows use the configured model and, when their packages are installed,
    multilingual-e5 and all-mpnet-base-v2; with multilingual-e5 installed, a model that
    cannot read Korean has it read Korean prompts, as the prompt hook does. ``quick``: the
    configured model only (with that reader), without the one-memory stores and the smoke set.
    LoCoMo is read from ``locomo`` (default: ``shared/bench/locomo10.json`` beside the
    checkout, when there); without it only the shipped sets are asked.
    ``assist_judge`` > 0 adds the assist model as a judge on that many related and unrelated
    held-out prompts (:mod:`recall_assist`).
    """
    import os

    from .recall_data import labelled

    path = locomo if locomo is not None else (LOCOMO if LOCOMO.is_file() else None)
    data = labelled(path)
    embedders: dict[str, EmbeddingModel] = {}
    if embedder is not None:
        embedders[embedder.name] = embedder
    reader: EmbeddingModel | None = None
    try:
        from mama_plugin.embeddings.e5 import MODEL_NAME, E5Embedder

        reader = embedders.get(MODEL_NAME) or E5Embedder(threads=1)
        if MODEL_NAME not in embedders and not quick:
            embedders[MODEL_NAME] = reader
    except MamaError as exc:
        (progress or print)(f"multilingual-e5 left out: {exc}")
    try:
        from mama_plugin.embeddings import models_dir, mpnet

        if mpnet.MODEL_NAME not in embedders and not quick:
            embedders[mpnet.MODEL_NAME] = mpnet.open_mpnet(models_dir(config))
    except MamaError as exc:
        (progress or print)(f"{mpnet.MODEL_NAME} left out: {exc}")
    figures = run(
        data,
        embedders,
        bar=config.settings.relevance_bar,
        progress=progress,
        small=not quick,
        budget=config.settings.prompt_tokens,
        reader=reader,
    )
    load = f"{os.getloadavg()[0]:.1f}"
    figures.pop("candidates")
    text = report(figures, load=load)
    if assist_judge > 0:
        from mama_plugin.assist.runtime import Assistant

        from . import recall_assist

        assistant = Assistant(config)
        try:
            figures["assist_judge"] = recall_assist.judge_run(
                data, embedder, assistant, assist_judge,
                bar=config.settings.relevance_bar, progress=progress,
            )  # fmt: skip
        finally:
            assistant.close()
        text += "\n".join(recall_assist.report(figures["assist_judge"])) + "\n"
    return text, figures
