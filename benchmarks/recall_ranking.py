"""How prompt-time recall ranks its candidates, compared in one run: each ranking in
:data:`RANKINGS` asks every labelled prompt against the same store.

Per ranking, group (LoCoMo ``en``, Stack Overflow ``tech``, KLUE ``ko``) and half:

- the **ceiling**: the share of related prompts whose memory meant is the first candidate
  (top-1) and among the first two (top-2, the pointers' depth, ``judge.POINTER_DEPTH``);
  a prompt of fewer than ``recall.MIN_TERMS`` terms has no candidates and counts as a miss;
- the **tiers** the product's rules give those candidates (:func:`recall_tiers.tier_of`):
  reach and chain rate on related prompts, the share of unrelated prompts given a chain or
  a pointer. (Tokens are the main table's: they are asked through the hook's own call.)

A ranking is adopted for a model (``recall.Scale.ranking_weight`` and ``keyword_weight``,
:func:`recall.ranking_of`)
only when, chosen on the calibration half, it raises the held-out reach of both English sets
without more noise on unrelated prompts. The rows name each ranking, whatever the model's own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.services.recall.judge import POINTER_DEPTH
from mama_plugin.services.search.options import DEFAULT, Options
from mama_plugin.storage import Store

from . import recall_tiers
from .recall_core import Candidate, Memo, candidates, fmt
from .recall_data import Case


@dataclass(frozen=True)
class Ranking:
    """One way to rank the candidates, and what it stands for."""

    name: str
    options: Options
    why: str


RANKINGS = (
    Ranking("fused 1:2", DEFAULT, "BM25 over the best BM25, plus 2 × cosine (search's own)"),
    Ranking(
        "fused 1:3",
        replace(DEFAULT, vector_weight=3.0),
        "the same, meaning weighing more (3 × cosine)",
    ),
    Ranking(
        "convex 0.4:0.6",
        replace(DEFAULT, scale="minmax", keyword_weight=0.4, vector_weight=0.6),
        "each list min-max scaled, 0.4 BM25 + 0.6 cosine (convex combination)",
    ),
    Ranking(
        "convex 0.3:0.7",
        replace(DEFAULT, scale="minmax", keyword_weight=0.3, vector_weight=0.7),
        "each list min-max scaled, 0.3 BM25 + 0.7 cosine",
    ),
    Ranking(
        "meaning alone",
        replace(DEFAULT, keyword_weight=0.0),
        "the cosine alone, BM25 only finding candidates (EmbeddingGemma's own)",
    ),
)


def compare(
    store: Store,
    cases: Sequence[Case],
    keys: dict[str, str],
    embedders: tuple[EmbeddingModel | None, EmbeddingModel | None],
    *,
    bar: float,
    say: Callable[[str], None],
) -> dict[str, Any]:
    """Per ranking (:data:`RANKINGS`): the ceiling and the tiers, per half and group."""
    # Each prompt and candidate embedded once for every ranking.
    embedder, reader = (None if e is None else Memo(e) for e in embedders)
    out: dict[str, Any] = {}
    for ranking in RANKINGS:
        say(f"ranking {ranking.name}: {len(cases)} prompts")
        seen = [
            [(keys.get(c[0], c[0]), *c[1:]) for c in candidates(
                store, case.prompt, embedder, reader, ranking=ranking.options)]
            for case in cases
        ]  # fmt: skip
        answers = []
        for found in seen:
            tier, chains, pointers = recall_tiers.tier_of(found, bar)
            answers.append({"tier": tier, "chains": chains, "pointers": pointers, "tokens": 0})
        out[ranking.name] = {
            "ceiling": ceiling(cases, seen),
            "tiers": recall_tiers.figures(cases, answers),
        }
    return out


def ceiling(cases: Sequence[Case], seen: Sequence[Sequence[Candidate]]) -> dict[str, Any]:
    """Top-1 and top-2 of the memory meant, per half and group (``all`` too)."""
    out: dict[str, Any] = {}
    for half in ("calibration", "held-out"):
        out[half] = {}
        for group in ["all", *sorted({c.group for c in cases})]:
            firsts = [
                (case.meant, [c[0] for c in found])
                for case, found in zip(cases, seen, strict=True)
                if case.related and case.split == half and group in ("all", case.group)
            ]
            out[half][group] = {"related": len(firsts)} | {
                f"top{depth}": _share([bool(m & set(f[:depth])) for m, f in firsts])
                for depth in (1, POINTER_DEPTH)
            }
    return out


def _share(flags: list[bool]) -> float | None:
    return round(sum(flags) / len(flags), 3) if flags else None


def report(rows: dict[str, Any]) -> list[str]:
    """The printed comparison: per model, ranking, half and group, the ceiling and tiers."""
    if not rows:
        return []
    lines = [
        "",
        "Rankings compared (same store, same prompts): top-1/top-2 of the memory meant, then the",
        "tiers the rules give (reach, chain on related; chain, pointer on unrelated).",
    ]
    lines += [f"  {r.name}: {r.why}" for r in RANKINGS]
    head = (
        f"{'model':<24}{'ranking':<16}{'half':<12}{'group':<6}{'top1':>7}{'top2':>7}"
        f"{'reach':>7}{'chain':>7}{'u chain':>8}{'u ptr':>7}"
    )
    lines += [head, "-" * len(head)]
    for model, rankings in rows.items():
        for name, figures in rankings.items():
            for half in ("calibration", "held-out"):
                for group, top in figures["ceiling"][half].items():
                    if group == "all":
                        continue
                    tiers = figures["tiers"][half][group]
                    lines.append(
                        f"{model[:23]:<24}{name:<16}{half:<12}{group:<6}{fmt(top['top1']):>7}"
                        f"{fmt(top['top2']):>7}{fmt(tiers['reach']):>7}{fmt(tiers['chain']):>7}"
                        f"{fmt(tiers['noise_chain']):>8}{fmt(tiers['noise_pointer']):>7}"
                    )
    return lines
