"""What limits the ``recall`` benchmark's figures, and the rows it prints beside its main table.

- :func:`causes`: each missed related prompt by its cause. ``not candidate``: no memory meant
  is among the hybrid search's candidates (``recall.CANDIDATES``), so no judge could recall
  it; ``judged out``: one is, and the judge left it out; ``cut``: it passed, but ``MAX_HITS``
  others passed before it; ``few terms``: the prompt has fewer than ``MIN_TERMS`` terms.
  And the **ceiling**: the share of related prompts whose meant memory is among the first
  ``MAX_HITS`` candidates, what a judge that kept exactly those would reach.
- :func:`small_stores`: the same public pairs, each in a store of its own holding the one
  memory a related prompt means (KLUE's first sentence, LoCoMo's first cited observation),
  asked the related prompt and an unrelated one of the same source and half: where every
  term is rare, with the term-weight prior (``recall.DF_PRIOR``) and without it (1).
- :func:`smoke`: the hand-written ``recall_prompts.json`` (16 related, 16 unrelated) through
  the same judge; a smoke test, not a measure.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.services.recall import prompt as recall
from mama_plugin.services.saving.memories import save_context
from mama_plugin.services.search import indexing
from mama_plugin.storage import Store

from .ownset import LABELLED, save_labelled
from .recall_core import Memo, fmt
from .recall_data import GROUPS, Case, Labelled

CAUSES = ("not candidate", "judged out", "cut", "few terms")
PROJECT = "/bench/recall-small"


def causes(
    cases: Sequence[Case],
    candidates: Sequence[Sequence[str]],
    passed: Sequence[Sequence[str]],
    terms: Sequence[int],
) -> dict[str, dict[str, dict[str, Any]]]:
    """Per half and language ("all" too): the misses by cause and the ceiling.

    ``candidates``: each case's candidate keys in the search's order; ``passed``: those the
    judge kept, before the cut at ``MAX_HITS``; ``terms``: how many terms each prompt has.
    """
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for half in ("calibration", "held-out"):
        out[half] = {}
        for language in GROUPS:
            counts = dict.fromkeys(CAUSES, 0)
            top = related = 0
            for case, found, kept, n in zip(cases, candidates, passed, terms, strict=True):
                if not case.related or case.split != half or language not in ("all", case.group):
                    continue
                related += 1
                top += bool(case.meant & set(found[: recall.MAX_HITS]))
                if case.meant & set(kept[: recall.MAX_HITS]):
                    continue
                if n < recall.MIN_TERMS:
                    counts["few terms"] += 1
                elif not case.meant & set(found):
                    counts["not candidate"] += 1
                elif case.meant & set(kept):
                    counts["cut"] += 1
                else:
                    counts["judged out"] += 1
            out[half][language] = counts | {
                "related": related,
                "ceiling": round(top / related, 3) if related else None,
            }
    return out


def _pairs(data: Labelled, half: str) -> list[tuple[str, Case, Case]]:
    """(the memory's text, a related case meaning it, an unrelated case) per related case."""
    text = {m.key: m.content for m in data.memories}
    unrelated = {
        source: [c for c in data.cases if c.source == source and c.split == half and not c.related]
        for source in {c.source for c in data.cases}
    }
    out: list[tuple[str, Case, Case]] = []
    for case in (c for c in data.cases if c.related and c.split == half):
        others = unrelated[case.source]
        if others:
            out.append((text[min(case.meant)], case, others[len(out) % len(others)]))
    return out


def small_stores(
    data: Labelled,
    embedder: EmbeddingModel | None,
    *,
    bar: float,
    half: str = "held-out",
    priors: Sequence[float] = (recall.DF_PRIOR, 1.0),
) -> dict[str, dict[str, dict[str, Any]]]:
    """Recall and silence in one-memory stores, per prior and language (see the docstring)."""
    memo = None if embedder is None else Memo(embedder)
    tally: dict[str, dict[str, list[int]]] = {
        str(p): {lang: [0, 0, 0, 0] for lang in GROUPS} for p in priors
    }
    with tempfile.TemporaryDirectory(prefix="mama-bench-recall-small-") as tmp:
        for number, (memory, related, unrelated) in enumerate(_pairs(data, half)):
            home = Path(tmp) / str(number)
            with Store.open(home / "one.db", config=Config(home)) as store:
                with store.transaction():
                    save_context(store, PROJECT, {"topic": "", "content": memory})
                if memo is not None:
                    indexing.drain(store, memo)
                for prior in priors:
                    ask = {
                        case.prompt: recall.recall(
                            store, case.prompt, project=PROJECT, embedder=memo,
                            cosine_bar=bar, df_prior=prior,
                        ).hits
                        for case in (related, unrelated)
                    }  # fmt: skip
                    for language in ("all", related.group):
                        counts = tally[str(prior)][language]
                        counts[0] += bool(ask[related.prompt])
                        counts[1] += 1
                    for language in ("all", unrelated.group):
                        counts = tally[str(prior)][language]
                        counts[2] += not ask[unrelated.prompt]
                        counts[3] += 1
    return {
        prior: {
            lang: {
                "recall": round(c[0] / c[1], 3) if c[1] else None,
                "silence": round(c[2] / c[3], 3) if c[3] else None,
                "pairs": c[1],
            }
            for lang, c in by_language.items()
        }
        for prior, by_language in tally.items()
    }


def smoke(embedder: EmbeddingModel | None, *, bar: float) -> dict[str, int]:
    """The hand-written set through the judge: related prompts recalled, unrelated silent."""
    data = json.loads(LABELLED.read_text(encoding="utf-8"))
    counts = {"recalled": 0, "related": 0, "silent": 0, "unrelated": 0}
    with tempfile.TemporaryDirectory(prefix="mama-bench-recall-smoke-") as tmp:
        home = Path(tmp)
        with Store.open(home / "smoke.db", config=Config(home)) as store:
            save_labelled(store, PROJECT, data["memories"])
            if embedder is not None:
                indexing.drain(store, embedder)
            for prompt, topic in data["prompts"]:
                hits = recall.recall(
                    store, prompt, project=PROJECT, embedder=embedder, cosine_bar=bar
                ).hits
                if topic is None:
                    counts["unrelated"] += 1
                    counts["silent"] += not hits
                else:
                    counts["related"] += 1
                    counts["recalled"] += any(
                        topic in (h.memory.topic, h.current.topic) for h in hits
                    )
    return counts


def report(figures: dict[str, Any]) -> list[str]:
    """The lines printed under the main table: causes, small stores, the smoke set."""
    lines: list[str] = []
    if figures.get("causes"):
        lines += ["", "held-out misses of related prompts by cause (ceiling: the meant memory"]
        lines.append(f"among the first {recall.MAX_HITS} candidates)")
        head = f"{'row':<34}{'lang':<6}" + "".join(f"{c:>15}" for c in CAUSES)
        lines += [head + f"{'ceiling':>9}", "-" * (len(head) + 9)]
        for name, halves in figures["causes"].items():
            for language, c in halves["held-out"].items():
                ceiling = "-" if c["ceiling"] is None else f"{c['ceiling']:.3f}"
                lines.append(
                    f"{name:<34}{language:<6}"
                    + "".join(f"{c[k]:>15}" for k in CAUSES)
                    + f"{ceiling:>9}"
                )
    if figures.get("small"):
        lines += ["", "one-memory stores (held-out pairs; recall / silence), by term-weight prior"]
        for name, priors in figures["small"].items():
            for prior, by_language in priors.items():
                parts = [
                    f"{lang} {fmt(s['recall'])}/{fmt(s['silence'])} ({s['pairs']})"
                    for lang, s in by_language.items()
                ]
                lines.append(f"  {name:<32}prior {prior:<6}" + "   ".join(parts))
    if figures.get("smoke"):
        lines += ["", "hand-written smoke set recall_prompts.json (recalled, silent)"]
        for name, c in figures["smoke"].items():
            lines.append(
                f"  {name:<32}{c['recalled']}/{c['related']} related, "
                f"{c['silent']}/{c['unrelated']} silent"
            )
    return lines
