"""The ``decay`` benchmark: link decay rates measured where links are followed, and pruned.

Neither ``recall`` nor ``locomo``/``retrieval`` as shipped exercises link decay: prompt recall
(:mod:`mama_plugin.services.recall.prompt`) never walks the graph, and the LoCoMo stores hold no
links, so their ``+links`` row walks an empty graph. This benchmark gives decay something to
act on, in two parts:

- **LoCoMo with time links.** Each conversation through the product's save path, as the
  ``retrieval`` benchmark does, plus one temporal link a turn: ``follows`` the turn before it
  (the first turn of a session follows the last of the session before), made at the turn's
  own date. Every question is ranked as of the conversation's last date by the default
  ranking, then with link boosts on (``Options.links``: memories linked to the top result
  within two hops, along links whose decayed confidence is at least 0.5, gain ×1.5) under each
  rate table: no decay, the half-lives of 30 / 365 / 3,650 days kept before, and the
  documented 0.1 / 0.05 / 0.02 a day. The links are the benchmark's (LoCoMo has none); the
  turns, dates, questions and gold evidence are LoCoMo's.
- **An aged synthetic graph.** ``--memories`` memories with about 1.2 links each, in the four
  categories, made uniformly over the last year, a third of them used since: what share of
  each category the periodic pass archives under each rate table, and the pass's time.
"""

from __future__ import annotations

import math
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel, query_vectors
from mama_plugin.services.graph import decay as link_decay
from mama_plugin.services.graph.upkeep import prunable, prune
from mama_plugin.services.saving.memories import save_context
from mama_plugin.services.search.indexing import drain
from mama_plugin.services.search.options import DEFAULT
from mama_plugin.services.search.retrieval import retrieve
from mama_plugin.services.warm import warm
from mama_plugin.storage import NewMemory, Store

from . import locomo

LN2 = math.log(2)
# Rate tables by name (per day; 0: no decay, None: never decays).
SCHEMES: dict[str, dict[str, float | None]] = {
    "no decay": {"temporal": 0.0, "association": 0.0, "implementation": 0.0},
    "half-lives 30/365/3650 d (before)": {
        "temporal": LN2 / 30,
        "association": LN2 / 365,
        "implementation": LN2 / 3650,
    },
    "0.1/0.05/0.02 a day (documented)": {
        "temporal": 0.1,
        "association": 0.05,
        "implementation": 0.02,
    },
}
DEFAULT_ROW = "default (no link boost)"
WORDS = {"temporal": "precedes", "association": "relates_to", "implementation": "implements"}


@contextmanager
def rates(table: dict[str, float | None]) -> Iterator[None]:
    """Decay by ``table`` inside the block (the product's table, put back after)."""
    kept = dict(link_decay.DECAY_RATES)
    link_decay.DECAY_RATES.update(table)
    try:
        yield
    finally:
        link_decay.DECAY_RATES.clear()
        link_decay.DECAY_RATES.update(kept)


def locomo_part(
    conversations: list[locomo.Conversation],
    embedder: EmbeddingModel | None,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """R@k of the default ranking and of link boosts under each rate table."""
    systems = (DEFAULT_ROW, *(f"+links, {name}" for name in SCHEMES))
    run = locomo.Run(ranked={s: [] for s in systems}, search_ms={s: [] for s in systems})
    followed: dict[str, list[int]] = {name: [] for name in SCHEMES}
    for conv in conversations:
        with tempfile.TemporaryDirectory(prefix="mama-decay-") as tmp:
            project = f"/locomo/conv-{conv.sample}"
            with Store.open(Path(tmp) / "mama.db", config=Config(Path(tmp))) as store:
                by_id = _ingest(store, project, conv, run)
                as_of = max(when for *_, when in conv.turns)
                for name, table in SCHEMES.items():
                    with rates(table):
                        followed[name].append(_followed(store, as_of))
                vectors: list[list[float] | None] = [None] * len(conv.questions)
                if embedder is not None:
                    drain(store, embedder, batch_size=64)
                    vectors = list(query_vectors(embedder, [q.text for q in conv.questions]))
                for question, vector in zip(conv.questions, vectors, strict=True):
                    run.questions.append(question)
                    for system in systems:
                        scheme = system.removeprefix("+links, ")
                        options = DEFAULT if system == DEFAULT_ROW else replace(DEFAULT, links=True)
                        warm(store).walks.clear()  # walks cached under another rate table
                        began = time.perf_counter()
                        with rates(SCHEMES.get(scheme, {})):
                            hits = retrieve(
                                store, question.text, embedder=embedder, project=project,
                                k=50, as_of=as_of, query_vector=vector, options=options,
                            )  # fmt: skip
                        run.search_ms[system].append((time.perf_counter() - began) * 1000)
                        run.ranked[system].append(
                            [by_id[h.memory.id] for h in hits if h.memory.id in by_id]
                        )
        progress(f"conversation {conv.sample}: {len(conv.turns)} turns")
    figures = locomo.score(run)
    return {
        "conversations": len(conversations),
        "turns": run.turns,
        "questions": len(run.questions),
        "links": run.turns - len(conversations),
        "followed_share": {
            name: round(sum(shares) / len(shares), 3) for name, shares in followed.items()
        },
        "figures": figures,
        "search_ms_p50": {
            s: round(sorted(v)[len(v) // 2], 1) for s, v in run.search_ms.items() if v
        },
    }


def _ingest(
    store: Store, project: str, conv: locomo.Conversation, run: locomo.Run
) -> dict[str, str]:
    """Save every turn and link it ``follows`` the turn before; {memory id: dia id}."""
    by_id: dict[str, str] = {}
    previous = ""
    with store.transaction():
        for dia, session, text, when in conv.turns:
            saved = save_context(store, project, {"content": text, "session_id": session},
                                 created_at=when)  # fmt: skip
            by_id[saved.memory.id] = dia
            run.session_of[(conv.sample, dia)] = session
            if previous:
                store.links.add(saved.memory.id, previous, "follows",
                                "the next turn of the conversation", created_at=when)  # fmt: skip
            previous = saved.memory.id
    run.turns += len(conv.turns)
    return by_id


def _followed(store: Store, now: int) -> int:
    """How many links are strong enough (≥ the link boost's 0.5) to be followed at ``now``,
    per thousand links."""
    from mama_plugin.services.search.ranking import LINK_MIN_CONFIDENCE

    links = list(store.links.iter())
    strong = sum(link_decay.decayed(ln, now) >= LINK_MIN_CONFIDENCE for ln in links)
    return round(1000 * strong / len(links)) if links else 0


def aged_graph(store: Store, memories: int, now: int, seed: int = 11) -> dict[str, int]:
    """``memories`` memories and ~1.2 links each over the last year; links by category."""
    rng = random.Random(seed)
    day = link_decay.DAY_MS
    made: dict[str, int] = {}
    with store.transaction():
        for i in range(memories):
            at = now - rng.randrange(365) * day
            new = NewMemory(id=f"a{i:05d}", type="insight", project="/bench/decay",
                            content=f"memory {i}", created_at=at)  # fmt: skip
            store.memories.insert(new)
        for i in range(1, memories):
            for _ in range(rng.choice((0, 1, 1, 1, 2, 2))):
                category = rng.choice(("temporal", "association", "implementation", "evolution"))
                word = "refines" if category == "evolution" else WORDS[category]
                j = rng.randrange(i)
                if store.links.exists(f"a{i:05d}", f"a{j:05d}", word):
                    continue
                age = rng.uniform(0, 365)
                used = now - round(rng.uniform(0, age) * day) if rng.random() < 1 / 3 else None
                store.links.add(
                    f"a{i:05d}", f"a{j:05d}", word, "synthetic", used_at=used,
                    created_at=now - round(age * day),
                )  # fmt: skip
                made[category] = made.get(category, 0) + 1
    return made


def aged_part(memories: int, progress: Callable[[str], None]) -> dict[str, Any]:
    """The share of each category the pass would archive under each table; the pass's time."""
    now = int(time.time() * 1000)
    with (
        tempfile.TemporaryDirectory(prefix="mama-decay-") as tmp,
        Store.open(Path(tmp) / "mama.db", config=Config(Path(tmp))) as store,
    ):
        progress(f"building an aged graph of {memories} memories")
        made = aged_graph(store, memories, now)
        shares: dict[str, dict[str, float]] = {}
        for name, table in SCHEMES.items():
            with rates(table):
                gone: dict[str, int] = {}
                for shown, _ in prunable(store, now):
                    cat = shown.link.link_category
                    gone[cat] = gone.get(cat, 0) + 1
            shares[name] = {c: round(gone.get(c, 0) / n, 3) for c, n in made.items()}
        began = time.perf_counter()
        listed = prune(store, dry_run=True, now=now)
        dry_ms = (time.perf_counter() - began) * 1000
        began = time.perf_counter()
        prune(store, now=now)
        pass_ms = (time.perf_counter() - began) * 1000
    return {
        "memories": memories,
        "links": made,
        "archived_share": shares,
        "pruned": len(listed.pruned),
        "dry_run_ms": round(dry_ms),
        "prune_ms": round(pass_ms),
    }


def decay_run(
    dataset: Path | None,
    embedder: EmbeddingModel | None,
    *,
    memories: int = 10_000,
    conversations: int = 10,
    progress: Callable[[str], None] = print,
) -> tuple[str, dict[str, Any]]:
    """Both parts (the LoCoMo part only when ``dataset`` is given)."""
    figures: dict[str, Any] = {"model": embedder.name if embedder else "keywords only"}
    if dataset is not None:
        loaded, _ = locomo.load(dataset, None)
        figures["locomo"] = locomo_part(loaded[:conversations], embedder, progress)
        figures["locomo"]["sha256"] = locomo.sha256(dataset)
    figures["aged"] = aged_part(memories, progress)
    return report(figures), figures


def report(figures: dict[str, Any]) -> str:
    """The figures as text."""
    lines = [f"link decay ({figures['model']})"]
    part = figures.get("locomo")
    if part:
        lines.append(
            f"\nLoCoMo with a `follows` link a turn: {part['conversations']} conversations, "
            f"{part['turns']} turns, {part['links']} links, {part['questions']} questions, "
            "as of each conversation's last date"
        )
        lines.append(
            f"{'system':<44}{'turn R@5':>9}{'R@10':>7}{'sess R@5':>10}{'R@10':>7}"
            f"{'followed':>10}{'p50 ms':>8}"
        )
        for system, units in part["figures"]["original"].items():
            turn, session = units["turn"]["1-4"], units["session"]["1-4"]
            scheme = system.removeprefix("+links, ")
            share = part["followed_share"].get(scheme)
            lines.append(
                f"{system:<44}{turn['r5']:>9.3f}{turn['r10']:>7.3f}{session['r5']:>10.3f}"
                f"{session['r10']:>7.3f}"
                f"{'' if share is None else f'{share / 10:.1f}%':>10}"
                f"{part['search_ms_p50'][system]:>8.1f}"
            )
        lines.append("(categories 1-4, original evidence; followed: links ≥ 0.5 at the date)")
    aged = figures["aged"]
    lines.append(
        f"\naged synthetic graph: {aged['memories']} memories, links "
        + ", ".join(f"{c} {n}" for c, n in sorted(aged["links"].items()))
        + " (made over a year, a third used since)"
    )
    cats = sorted(aged["links"])
    lines.append(f"{'archived share':<44}" + "".join(f"{c:>16}" for c in cats))
    for name, shares in aged["archived_share"].items():
        lines.append(f"{name:<44}" + "".join(f"{shares[c]:>16.3f}" for c in cats))
    lines.append(
        f"the pass at the documented rates: {aged['pruned']} links, dry run "
        f"{aged['dry_run_ms']} ms, archiving {aged['prune_ms']} ms"
    )
    return "\n".join(lines) + "\n"
