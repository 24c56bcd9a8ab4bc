"""Benchmark ``recall-bars``: other bars for a prompt-time pointer beside today's tiers, every set.

A pointer is one line Claude reads and drops when it does not apply (issue 47), so the question
is which bar lets one through. The rules compared, in one run, each adding a pointer to one of
a prompt's first two candidates only where today's tiers tell no chain:

- **memory**: the bar relative to the memory (issue 47, item 2). A memory's null is the highest
  relevance it got from a fixed set of unrelated prompts, every other Stack Overflow title of
  ``recall_tech.json``'s unrelated ones (the other half stays the unrelated prompts asked); a
  candidate gets a pointer when it stands ``delta`` above its own null;
- **absolute**: a fixed relevance, whatever the memory;
- **words**: a fixed relevance and a share of the prompt's term weight held.

The sets: the ADR records (:mod:`.recall_adr`, one store per repository, a context's paragraph
and its first sentence) and the recall set (:mod:`.recall_data`: KLUE-STS, Stack Overflow,
LoCoMo when its file is there, one store), halves as their own benchmarks split them. No
model reads Korean for MiniLM here (``recall --quick`` adds multilingual-e5 when installed).
Per set and half: reach (the meant memory in a chain or a pointer) and, on unrelated prompts,
the mean tokens injected: today's as the product answers them (:func:`.recall_tiers.ask`),
plus a pointer's measured cost for each pointer a rule adds (``POINTER_TOKENS``).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mama_plugin.embeddings.cards import reads_korean
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.storage import Store

from . import recall_adr, recall_tiers
from .coauthor import uptime
from .recall_core import PROJECT, Candidate, candidates, fmt, store_of
from .recall_data import Case, labelled

# What one pointer costs, its framing included, and a second beside it (CHANGELOG: 37, 58).
POINTER_TOKENS = (0, 37, 58)
DEPTH = 2  # recall_judge.POINTER_DEPTH: only the first candidates get a pointer
SETS = ("adr", "adr-first", "locomo", "tech", "klue-sts")


@dataclass(frozen=True)
class Near:
    """One of a prompt's first candidates, as the rules read it."""

    key: str
    relevant: float | None
    weighted: float
    terms: int
    readable: bool  # the model reads the prompt's script
    null: float  # the highest relevance its memory got from the null prompts (0: none)


@dataclass(frozen=True)
class Seen:
    """One prompt: where it counts, what today's tiers gave it, its first candidates."""

    group: str  # one of SETS
    half: str
    meant: frozenset[str]
    told: frozenset[str]  # today's chains and pointers
    chain: bool  # today told a chain
    pointers: int  # today's pointers
    tokens: int  # what today's answer costs (unrelated prompts; 0 otherwise)
    near: tuple[Near, ...]


Rule = Callable[[Near], bool]


def rules() -> dict[str, Rule | None]:
    """The rules compared, by name (None: today's tiers alone)."""

    def memory(delta: float) -> Rule:
        return lambda n: n.relevant is not None and n.relevant >= n.null + delta

    def absolute(bar: float, weight: float = 0.0) -> Rule:
        return lambda n: n.relevant is not None and n.relevant >= bar and n.weighted >= weight

    return {
        "today": None,
        **{f"memory +{d:g}": memory(d) for d in (0.0, 0.05, 0.1, 0.15)},
        **{f"absolute {b:g}": absolute(b) for b in (0.35, 0.4, 0.45)},
        **{f"words {b:g}, weight {w:g}": absolute(b, w) for b, w in ((0.35, 0.3), (0.4, 0.2))},
    }


def added(seen: Seen, rule: Rule | None) -> list[str]:
    """The pointers ``rule`` adds to ``seen`` (never beside a chain, never over two in all, never
    for a prompt of fewer than three terms or in a script the model cannot read)."""
    if rule is None or seen.chain:
        return []
    new = [
        n.key
        for n in seen.near[:DEPTH]
        if n.readable and n.terms >= 3 and n.key not in seen.told and rule(n)
    ]
    return new[: max(0, 2 - seen.pointers)]


def score(seen: Sequence[Seen], rule: Rule | None) -> dict[str, dict[str, Any]]:
    """Per half and set: reach, and the unrelated prompts' mean tokens and share given any."""
    out: dict[str, dict[str, Any]] = {}
    for half in ("calibration", "held-out"):
        for group in SETS:
            chosen = [s for s in seen if s.half == half and s.group == group]
            related = [s for s in chosen if s.meant]
            unrelated = [s for s in chosen if not s.meant]
            if not chosen:
                continue
            reach = [bool((s.told | set(added(s, rule))) & s.meant) for s in related]
            tokens, given = [], []
            for s in unrelated:
                more = len(added(s, rule))
                cost = s.tokens + POINTER_TOKENS[s.pointers + more] - POINTER_TOKENS[s.pointers]
                tokens.append(cost)
                given.append(cost > 0)
            out[f"{half}/{group}"] = {
                "reach": round(sum(reach) / len(reach), 3) if reach else None,
                "unrelated": len(unrelated),
                "tokens_mean": round(sum(tokens) / len(tokens), 1) if tokens else None,
                "given": round(sum(given) / len(given), 3) if given else None,
            }
    return out


def _seen(
    store: Store,
    project: str,
    cases: Sequence[Case],
    group: Callable[[Case], str],
    keys: dict[str, str],
    null: Sequence[str],
    embedder: EmbeddingModel,
    limits: tuple[float, int],
) -> list[Seen]:
    """Each case of one store as the rules read it, its candidates' nulls from ``null``."""
    highest: dict[str, float] = {}
    for prompt in null:
        for c in candidates(store, prompt, embedder, project=project):
            highest[c[0]] = max(highest.get(c[0], 0.0), c[1] or 0.0)
    found = [candidates(store, c.prompt, embedder, project=project) for c in cases]
    bar, budget = limits
    answers = recall_tiers.ask(
        store, project, cases, found, keys, (embedder, None), bar=bar, budget=budget
    )
    return [
        Seen(
            group(case),
            case.split,
            case.meant,
            frozenset(a["chains"]) | frozenset(a["pointers"]),
            a["tier"] == "chain",
            len(a["pointers"]),
            a["tokens"],
            tuple(_near(c, keys, highest) for c in near[:DEPTH]),
        )
        for case, near, a in zip(cases, found, answers, strict=True)
    ]


def _near(c: Candidate, keys: dict[str, str], highest: dict[str, float]) -> Near:
    memory_id, relevant, weighted, _, terms, korean, model, _ = c
    readable = not korean or reads_korean(model)
    return Near(keys.get(memory_id, memory_id), relevant, weighted, terms, readable,
                highest.get(memory_id, 0.0))  # fmt: skip


def bars_run(
    embedder: EmbeddingModel,
    *,
    locomo: Path | None = None,
    repositories: int | None = None,
    recall_set: bool = True,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict[str, Any]]:
    """Every rule on every set; the report and its figures (``repositories``: the first N ADR
    repositories only; ``recall_set=False``: the ADR set alone)."""
    say = progress or (lambda _line: None)
    started, load_before = time.perf_counter(), uptime()
    repos, source = recall_adr.projects()
    repos = repos[:repositories] if repositories else repos
    titles = [c.prompt for c in repos[0].cases if not c.related]
    null, asked = titles[0::2], set(titles[1::2])
    limits = (recall_adr.BAR, recall_adr.BUDGET)
    sources = [source]
    seen: list[Seen] = []
    with tempfile.TemporaryDirectory(prefix="mama-bars-") as tmp:
        for project in repos:
            say(f"{project.repo}: {len(project.memories)} records")
            home = Path(tmp) / project.repo.replace("/", "+")
            store, keys = recall_adr.project_store(home, project, embedder)
            cases = [c for c in project.cases if c.related or c.prompt in asked]
            scope = recall_adr.scope_of(project)
            try:
                seen += _seen(store, scope, cases, lambda c: c.source, keys, null, embedder, limits)
            finally:
                store.close()
        if recall_set:
            data = labelled(locomo)
            sources += data.sources
            say(f"the recall set: {len(data.memories)} memories")
            store, keys = store_of(Path(tmp) / "recall", data, embedder)
            cases = [c for c in data.cases if c.related or c.prompt in asked or c.source != "tech"]
            try:
                seen += _seen(
                    store, PROJECT, cases, lambda c: c.source, keys, null, embedder, limits
                )
            finally:
                store.close()
    figures = {name: score(seen, rule) for name, rule in rules().items()}
    data_out = {
        "model": embedder.name,
        "sources": sources,
        "null_prompts": len(null),
        "figures": figures,
        "timing": {
            "seconds": round(time.perf_counter() - started, 1),
            "load_before": load_before,
            "load_after": uptime(),
        },
    }
    return report(data_out), data_out


def report(data: dict[str, Any]) -> str:
    """One table per half: reach per set, then each set's unrelated tokens (share given any)."""
    some = next(iter(data["figures"].values()))
    lines = [
        f"Pointer bars on every set; model {data['model']}; null: {data['null_prompts']} Stack "
        "Overflow titles (every other one of the unrelated set; the rest are asked)",
        *(f"- {s}" for s in data["sources"]),
    ]
    for half in ("held-out", "calibration"):
        groups = [g for g in SETS if f"{half}/{g}" in some]
        unrelated = [g for g in groups if some[f"{half}/{g}"]["unrelated"]]
        lines += [
            "",
            f"{half}: reach per set; unrelated prompts' mean tokens (share given anything)",
            "",
            "| rule | " + " | ".join(f"{g} reach" for g in groups) + " | "
            + " | ".join(f"{g} unrelated" for g in unrelated) + " |",
            "|---|" + "---|" * (len(groups) + len(unrelated)),
        ]  # fmt: skip
        for name, figures in data["figures"].items():
            cells = [fmt(figures[f"{half}/{g}"]["reach"]) for g in groups]
            cells += [
                f"{fmt(figures[f'{half}/{g}']['tokens_mean'], 1)} "
                f"({fmt(figures[f'{half}/{g}']['given'], 2)})"
                for g in unrelated
            ]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    t = data["timing"]
    lines += ["", f"run {t['seconds']} s; load {t['load_before']} → {t['load_after']}"]
    return "\n".join(lines) + "\n"
