"""What each prompt gets from the product's prompt hook: a full chain, a pointer, or nothing.

Prompt-time recall answers in tiers (:func:`~mama_plugin.services.recall.context.prompt_context`):
the full chain of a memory the rules judge clearly related; otherwise at most two one-line
pointers to the first candidates close enough on meaning; otherwise nothing. Each labelled
prompt's tier is read off its candidates by the product's rules, in a session of its own
(nothing shown before); an unrelated prompt that gets something is asked through the hook's
call at the configured budget, so its tokens are what a model would read. Per language and
half:

- related prompts: **reach** (the memory meant is in a chain or a pointer) and the **chain**
  rate (in a full chain);
- unrelated prompts: the share that got a **chain**, the share that got a **pointer**, and
  the **tokens** injected (mean and p95, nothing counting 0).

Targets (issue 47, held-out half): reach ≥ 0.85; chain on unrelated ≤ 0.03; mean tokens on
unrelated ≤ 10 — a pointer is bound by what it costs (~37 tokens), not by how often it is
given (issue 28 had held it to 0.10 of unrelated prompts).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.services.recall import judge as recall_judge
from mama_plugin.services.recall import prompt as recall
from mama_plugin.services.recall.context import prompt_context
from mama_plugin.storage import Store
from mama_plugin.text import estimate_tokens

from .recall_core import Candidate, fmt
from .recall_data import Case

REACH_TARGET = 0.85
CHAIN_NOISE_TARGET = 0.03
TOKENS_TARGET = 10.0


def ask(
    store: Store,
    project: str,
    cases: Sequence[Case],
    seen: Sequence[Sequence[Candidate]],
    keys: dict[str, str],
    embedders: tuple[EmbeddingModel | None, EmbeddingModel | None],
    *,
    bar: float,
    budget: int,
) -> list[dict[str, Any]]:
    """Each case's tier, the memory keys in its chains and pointers, and the tokens injected.

    The tier is read off the case's candidates (``seen``, in retrieval order) by the product's
    own rules (:func:`recall_judge.tiers`), as :func:`recall.recall` applies them; the
    tokens of an unrelated prompt that gets something are those of the product's own answer
    (:func:`prompt_context`), asked once more. ``embedders``: the
    store's model and the reader of Korean prompts (either may be None).
    """
    embedder, reader = embedders
    out = []
    for case, found in zip(cases, seen, strict=True):
        tier = tier_of(found, bar)
        tokens = 0
        if tier[0] != "none" and not case.related:
            got = prompt_context(
                store,
                case.prompt,
                project=project,
                budget=budget,
                bar=bar,
                embedder=embedder,
                reader=reader,
            )
            tokens = estimate_tokens(got.text) if got.text else 0
        out.append(
            {
                "tier": tier[0],
                "chains": [keys.get(i, i) for i in tier[1]],
                "pointers": [keys.get(i, i) for i in tier[2]],
                "tokens": tokens,
            }
        )
    return out


def tier_of(
    found: Sequence[Candidate], bar: float, offset: float | None = None
) -> tuple[str, list[str], list[str]]:
    """(tier, chain ids, pointer ids) for one prompt's candidates, by the product's own
    :func:`recall_judge.tiers`; ``offset`` replaces the models' own pointer offsets (the
    sweep)."""
    if not found:
        return "none", [], []
    _, _, _, _, terms, korean, model, _ = found[0]
    tiered = recall_judge.tiers(
        [recall_judge.Evidence(c[1], c[2], c[3], named=c[7]) for c in found],
        terms=terms,
        bar=bar,
        model=model,
        korean=korean,
        offset=offset,
    )
    chains = [found[i][0] for i in tiered.chains][: recall.MAX_HITS]
    pointed = [] if chains else tiered.pointers()
    if chains and 0 in tiered.close and found[0][0] not in chains:
        pointed = [0]  # the ranking's first, beside the chains (as recall.recall does)
    pointers = [found[i][0] for i in pointed][: recall.MAX_POINTERS]
    return ("chain" if chains else "pointer" if pointers else "none"), chains, pointers


SWEEP = (-0.15, -0.1, -0.05, 0.0, 0.05, 0.1, 0.15)


def sweep(cases: Sequence[Case], seen: Sequence[Sequence[Candidate]], bar: float) -> dict[str, Any]:
    """Reach and pointers on unrelated prompts at each pointer offset, per half and group: the
    offset is chosen on the calibration half and reported on the held-out one."""
    out: dict[str, Any] = {}
    for offset in SWEEP:
        answers = []
        for found in seen:
            tier, chains, pointers = tier_of(found, bar, offset)
            answers.append({"tier": tier, "chains": chains, "pointers": pointers, "tokens": 0})
        out[f"{offset:+.2f}"] = figures(cases, answers)
    return out


def figures(cases: Sequence[Case], answers: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The tier figures per half and language (``all`` beside each language asked)."""
    languages = ["all", *sorted({c.group for c in cases})]
    out: dict[str, Any] = {}
    for half in ("held-out", "calibration"):
        out[half] = {}
        for language in languages:
            chosen = [
                (c, a)
                for c, a in zip(cases, answers, strict=True)
                if c.split == half and language in ("all", c.group)
            ]
            related = [(c, a) for c, a in chosen if c.related]
            unrelated = [a for c, a in chosen if not c.related]
            tokens = sorted(a["tokens"] for a in unrelated)
            out[half][language] = {
                "related": len(related),
                "unrelated": len(unrelated),
                "reach": _share(bool(c.meant & {*a["chains"], *a["pointers"]}) for c, a in related),
                "chain": _share(bool(c.meant & set(a["chains"])) for c, a in related),
                "noise_chain": _share(a["tier"] == "chain" for a in unrelated),
                "noise_pointer": _share(a["tier"] == "pointer" for a in unrelated),
                "tokens_mean": round(statistics.fmean(tokens), 1) if tokens else None,
                "tokens_p95": tokens[int(len(tokens) * 0.95)] if tokens else None,
            }
    return out


def _share(flags: Any) -> float | None:
    values = list(flags)
    return round(sum(values) / len(values), 3) if values else None


def report(rows: dict[str, Any]) -> list[str]:
    """The printed table: one line per model, half and language."""
    if not rows:
        return []
    lines = [
        "",
        "Tiers: what the prompt hook injects (prompt_context at the configured budget). Targets "
        f"on held-out: reach ≥ {REACH_TARGET}, chain on unrelated ≤ {CHAIN_NOISE_TARGET}, "
        f"mean tokens on unrelated ≤ {TOKENS_TARGET:g}.",
    ]
    head = (
        f"{'model':<26}{'half':<12}{'lang':<6}{'n rel':>6}{'reach':>7}{'chain':>7}"
        f"{'n unr':>6}{'chain':>7}{'ptr':>7}{'tok':>6}{'p95':>5}"
    )
    lines += [head, "-" * len(head)]
    for model, halves in rows.items():
        for half, languages in halves.items():
            for language, s in languages.items():
                lines.append(
                    f"{model:<26}{half:<12}{language:<6}{s['related']:>6}{fmt(s['reach']):>7}"
                    f"{fmt(s['chain']):>7}{s['unrelated']:>6}{fmt(s['noise_chain']):>7}"
                    f"{fmt(s['noise_pointer']):>7}{fmt(s['tokens_mean'], 1):>6}"
                    f"{'-' if s['tokens_p95'] is None else s['tokens_p95']:>5}"
                )
    return lines


def sweep_report(sweeps: dict[str, Any]) -> list[str]:
    """Per model: at each pointer offset, reach and pointers on unrelated prompts, by group."""
    lines: list[str] = []
    for model, offsets in sweeps.items():
        lines += ["", f"{model}: pointer offset sweep (reach / pointer on unrelated), by group"]
        for offset, halves in offsets.items():
            cells = []
            for half in ("calibration", "held-out"):
                for group, s in halves[half].items():
                    if group != "all" and s["related"]:
                        cells.append(
                            f"{half[:3]} {group} {fmt(s['reach'])}/{fmt(s['noise_pointer'])}"
                        )
            lines.append(f"  {offset}  " + "  ".join(cells))
    return lines
