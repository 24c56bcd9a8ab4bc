"""Benchmark ``adr``: prompt-time recall on architecture decision records others wrote.

``benchmarks/data/recall_adr.json`` (:mod:`.adr_records`) holds the ADRs of eight public
repositories, as their teams wrote them. One repository is one project's store: each record is
saved through the product's ``save_decision`` — topic from its title, the decision its title and
the first sentence of its Decision section, the why the sentences after it (or the record's id and
status when there are none) — and its Context
section (the problem as the team put it before deciding; never stored) is a related prompt that
must bring that record back: asked as its first paragraph, and as its first sentence alone.
Records whose contexts are the same text are one group: either counts. Stack Overflow titles
(``recall_tech.json``'s unrelated prompts, questions nothing stored is about) are asked of every
repository as unrelated prompts.

Halves by repository (:data:`CALIBRATION`; the others are held out), so a rule chosen on one half
is judged on projects it never saw. Per half, what the prompt hook injects, read by the product's
own tiers (:mod:`.recall_tiers`: reach, chain, and on unrelated prompts chain, pointer and
tokens), and where the meant record stands first among the prompt's recall candidates and among
``search_by_context``'s results for the same prompt (issue 47: the two should rank alike).
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.errors import MamaError
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.services.search import indexing
from mama_plugin.services.search.retrieval import retrieve
from mama_plugin.storage import Store
from mama_plugin.text import split

from . import recall_tiers
from .checkout import DATA
from .coauthor import uptime
from .recall_core import Candidate, candidates, fmt
from .recall_data import TECH, Case

ADR = DATA / "recall_adr.json"
# The repositories whose prompts a rule may be chosen on (half the records); the rest are held
# out. Chosen by size so that each half holds a large and a small folder of both kinds
# (blockchain node software, government cloud platforms, a mail server, a framework).
CALIBRATION = (
    "cometbft/cometbft",
    "ministryofjustice/cloud-platform",
    "arachne-framework/architecture",
    "cosmos/ibc-go",
)
PARAGRAPH_CHARS = 600  # a context's first paragraph, as a developer would ask it
DECISION_CHARS = 300
WHY_CHARS = 500
BUDGET = 300  # prompt_tokens' default
BAR = 0.5  # relevance_bar's default


@dataclass(frozen=True)
class Project:
    """One repository's records as memories to save, and the prompts to ask of its store."""

    repo: str
    split: str
    memories: list[tuple[str, dict[str, Any]]]  # (record id, save_decision's fields)
    cases: list[Case]


def _topic(title: str, taken: set[str]) -> str:
    """A stable topic from a record's title ("Use AWS hosted Elasticsearch" → use_aws_…)."""
    base = "_".join(re.findall(r"[a-z0-9]+", title.lower()))[:60].strip("_") or "adr"
    topic, n = base, 2
    while topic in taken:
        topic, n = f"{base}_{n}", n + 1
    taken.add(topic)
    return topic


def _clip(sentences: list[str], limit: int) -> str:
    """The first sentences within ``limit`` characters (the first one whole, however long)."""
    out = sentences[:1]
    for s in sentences[1:]:
        if len(" ".join([*out, s])) > limit:
            break
        out.append(s)
    return " ".join(out)[: limit * 2]


def projects(path: Path = ADR, tech: Path = TECH) -> tuple[list[Project], str]:
    """Every repository of the set as a :class:`Project`, and the source line to print."""
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        unrelated = [str(p) for _, p in json.loads(tech.read_text(encoding="utf-8"))["unrelated"]]
    except (OSError, json.JSONDecodeError, KeyError) as exc:
        raise MamaError(f"cannot read the ADR set {path} or {tech}: {exc}") from exc
    out = []
    for repo in data["repositories"]:
        half = "calibration" if repo["repo"] in CALIBRATION else "held-out"
        taken: set[str] = set()
        memories: list[tuple[str, dict[str, Any]]] = []
        groups: dict[str, set[str]] = {}
        for r in repo["records"]:
            said = split(r["decision"]) or [r["decision"]]
            fields = {
                "topic": _topic(r["title"], taken),
                "decision": f"{r['title']}: {_clip(said[:1], DECISION_CHARS)}",
                # One sentence said it all: the why names the record rather than repeat it.
                "reasoning": _clip(said[1:], WHY_CHARS) or f"{r['id']}, {r['status']}",
            }
            memories.append((r["id"], fields))
            groups.setdefault(" ".join(r["context"].split()), set()).add(r["id"])
        cases = []
        for context, meant in groups.items():
            paragraph = _clip(split(context) or [context], PARAGRAPH_CHARS)
            first = (split(context) or [context])[0]
            for prompt, source in ((paragraph, "adr"), (first, "adr-first")):
                cases.append(Case(prompt, frozenset(meant), "en", source, half))
        cases += [Case(p, frozenset(), "en", "adr", half) for p in unrelated]
        out.append(Project(repo["repo"], half, memories, cases))
    records = sum(len(p.memories) for p in out)
    return out, f"{data['name']}: {records} records of {len(out)} repositories"


def project_store(
    home: Path, project: Project, embedder: EmbeddingModel | None
) -> tuple[Store, dict]:
    """A fresh store holding ``project``'s records, embedded; its ids → record ids."""
    store = Store.open(home / f"{project.repo.replace('/', '+')}.db", config=Config(home))
    keys = {}
    for key, fields in project.memories:
        keys[save_decision(store, scope_of(project), fields).memory.id] = key
    if embedder is not None:
        indexing.drain(store, embedder)
    return store, keys


def scope_of(project: Project) -> str:
    return f"/bench/adr/{project.repo}"


def _first(ids: list[str], meant: frozenset[str], keys: dict[str, str]) -> bool:
    return bool(ids) and keys.get(ids[0], ids[0]) in meant


def ask(
    project: Project, embedder: EmbeddingModel | None, home: Path
) -> tuple[list[dict[str, Any]], list[list[Candidate]]]:
    """Each of ``project``'s cases: what the hook injects, and what recall and search rank
    first; and its candidates, by record id (for the pointer sweep)."""
    store, keys = project_store(home, project, embedder)
    try:
        scope = scope_of(project)
        seen = [candidates(store, c.prompt, embedder, project=scope) for c in project.cases]
        answers = recall_tiers.ask(
            store, scope, project.cases, seen, keys, (embedder, None), bar=BAR, budget=BUDGET
        )
        for case, found, answer in zip(project.cases, seen, answers, strict=True):
            searched = retrieve(store, case.prompt, embedder=embedder, project=scope, k=3)
            answer["recall_first"] = _first([c[0] for c in found], case.meant, keys)
            answer["search_first"] = _first([h.memory.id for h in searched], case.meant, keys)
            answer["search_top3"] = any(keys.get(h.memory.id) in case.meant for h in searched)
    finally:
        store.close()
    return answers, [[(keys.get(c[0], c[0]), *c[1:]) for c in found] for found in seen]


def figures(cases: list[Case], answers: list[dict[str, Any]]) -> dict[str, Any]:
    """Per half and prompt form (a context's paragraph, its first sentence): the tier figures
    and how often recall and search put the meant record first."""
    out: dict[str, Any] = {}
    for half in ("held-out", "calibration"):
        for source in ("adr", "adr-first"):
            chosen = [
                (c, a)
                for c, a in zip(cases, answers, strict=True)
                if c.split == half and (c.source == source or not c.related)
            ]
            tiers = recall_tiers.figures([c for c, _ in chosen], [a for _, a in chosen])
            row = tiers[half]["all"]
            related = [a for c, a in chosen if c.related]
            for key in ("recall_first", "search_first", "search_top3"):
                row[key] = (
                    round(sum(a[key] for a in related) / len(related), 3) if related else None
                )
            out[f"{half}/{source}"] = row
    return out


def adr_run(
    embedder: EmbeddingModel | None, progress: Callable[[str], None] | None = None
) -> tuple[str, dict[str, Any]]:
    """Ask every repository's prompts of its own store; the report and its figures."""
    started, load_before = time.perf_counter(), uptime()
    repos, source = projects()
    cases: list[Case] = []
    answers: list[dict[str, Any]] = []
    seen: list[list[Candidate]] = []
    with tempfile.TemporaryDirectory(prefix="mama-adr-") as tmp:
        for project in repos:
            if progress:
                progress(f"{project.repo}: {len(project.memories)} records")
            cases += project.cases
            got, asked = ask(project, embedder, Path(tmp) / project.repo.replace("/", "+"))
            answers += got
            seen += asked
    model = embedder.name if embedder is not None else "keywords"
    data = {
        "model": model,
        "source": source,
        "repositories": {p.repo: {"half": p.split, "records": len(p.memories)} for p in repos},
        "figures": figures(cases, answers),
        "pointers": recall_tiers.sweep(cases, seen, BAR),
        "timing": {
            "seconds": round(time.perf_counter() - started, 1),
            "load_before": load_before,
            "load_after": uptime(),
        },
    }
    return report(data), data


def report(data: dict[str, Any]) -> str:
    """The printed table: one line per half and prompt form."""
    lines = [
        f"ADR recall ({data['source']}); model {data['model']}, relevance_bar {BAR}, "
        f"prompt_tokens {BUDGET}; halves by repository",
        "",
        "| half / prompt | related | reach | chain | recall first | search first | search top 3 "
        "| unrelated | given a chain | given a pointer | tokens mean / p95 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, s in data["figures"].items():
        lines.append(
            f"| {key} | {s['related']} | {fmt(s['reach'])} | {fmt(s['chain'])} | "
            f"{fmt(s['recall_first'])} | {fmt(s['search_first'])} | {fmt(s['search_top3'])} | "
            f"{s['unrelated']} | {fmt(s['noise_chain'])} | {fmt(s['noise_pointer'])} | "
            f"{fmt(s['tokens_mean'], 1)} / {s['tokens_p95']} |"
        )
    lines += recall_tiers.sweep_report({data["model"]: data["pointers"]})
    t = data["timing"]
    lines += ["", f"run {t['seconds']} s; load {t['load_before']} → {t['load_after']}"]
    return "\n".join(lines) + "\n"
