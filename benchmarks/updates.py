"""Latest version first: facts that change over time, from SituatedQA's temporal split.

SituatedQA (Zhang & Choi, EMNLP 2021; github.com/mikejqzhang/SituatedQA, ``data/qa_data/
temp.{dev,test}.jsonl``) gives Natural Questions whose answer changed over time, with the date
each answer started to hold (``date_type: start``) and dates sampled while it held. Not
shipped here (the repository states no licence); ``python -m benchmarks retrieval --updates PATH``.

Protocol: one store; every answer of every question is saved through the product's save path
as a memory ``"<question>? <answer>"`` dated when that answer started to hold (the most precise
start given). Every question is asked through ``search_by_context`` with:

- **latest**: questions with two or more answers, as of a day after the newest answer started:
  the newest version must rank above every older one (latest-first rate);
- **as of**: each sampled date at which two or more answers had started: the answer that held
  then must rank above the others that existed by then;
- **static**: questions whose answer never changed (``orig``): their memory must rank first
  (the "no loss on the rest" check).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.errors import MamaError
from mama_plugin.services.saving.memories import save_context
from mama_plugin.services.search.indexing import drain
from mama_plugin.services.search.options import DEFAULT, TODAY, Options
from mama_plugin.services.story.answers import search_by_context
from mama_plugin.storage import Store

DAY_MS = 86_400_000
PROJECT = "/situatedqa"
# name: (options, dated): "dated" searches as of the question's date, else the wall clock.
BM25 = "bm25"  # FTS5 BM25 alone
SYSTEMS: dict[str, tuple[Options, bool]] = {
    "today": (TODAY, False),
    "as_of only": (TODAY, True),
    "full": (DEFAULT, True),
}


@dataclass
class Fact:
    """One question: its answers with the time each started to hold; sampled (date, answer)."""

    question: str
    versions: dict[str, int] = field(default_factory=dict)
    sampled: list[tuple[int, str]] = field(default_factory=list)
    static: bool = False


def _date_ms(text: str) -> tuple[int, bool]:
    """(ms, precise) for ``2019`` or ``April 07, 2019``."""
    text = text.strip()
    for form, precise in (("%B %d, %Y", True), ("%Y", False)):
        try:
            moment = datetime.strptime(text, form).replace(tzinfo=UTC)
        except ValueError:
            continue
        return int(moment.timestamp() * 1000), precise
    raise ValueError(text)


def load(path: Path) -> list[Fact]:
    """Read a SituatedQA temporal file into facts (rows with unreadable dates are skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise MamaError(f"cannot read the SituatedQA file {path}: {exc}") from exc
    facts: dict[Any, Fact] = {}
    starts: dict[Any, dict[str, tuple[bool, int]]] = {}
    for row in rows:
        if not row.get("answer"):
            continue
        fact = facts.setdefault(row["id"], Fact(row["question"].strip()))
        answer = str(row["answer"][0]).strip()
        try:
            when, precise = _date_ms(row["date"])
        except ValueError:
            continue
        if row["date_type"] == "orig":
            fact.static = True
            fact.versions.setdefault(answer, when)
        elif row["date_type"] == "start":
            # The most precise start wins (a year alone reads as 1 January).
            best = starts.setdefault(row["id"], {}).get(answer)
            if best is None or (precise, when) > best:
                starts[row["id"]][answer] = (precise, when)
        else:
            fact.sampled.append((when, answer))
    for key, answers in starts.items():
        facts[key].versions = {answer: when for answer, (_, when) in answers.items()}
        facts[key].static = False
    return [f for f in facts.values() if f.versions]


def run(
    facts: list[Fact],
    embedder: EmbeddingModel | None,
    *,
    k: int = 10,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Save every version, ask every question through every system; return the rates."""
    tally: dict[str, dict[str, list[int]]] = {
        name: {"latest": [0, 0], "as_of": [0, 0], "static": [0, 0]} for name in (BM25, *SYSTEMS)
    }
    with tempfile.TemporaryDirectory(prefix="mama-updates-") as tmp:
        home = Path(tmp)
        with Store.open(home / "mama.db", config=Config(home)) as store:
            ids: dict[tuple[int, str], str] = {}
            by_seq: dict[int, str] = {}
            with store.transaction():
                for n, fact in enumerate(facts):
                    for answer, when in fact.versions.items():
                        text = f"{fact.question}? {answer}"
                        saved = save_context(store, PROJECT, {"content": text}, created_at=when)
                        ids[(n, answer)] = saved.memory.id
                        by_seq[saved.memory.seq] = saved.memory.id
            if embedder is not None:
                drain(store, embedder, batch_size=64)
            if progress:
                progress(f"SituatedQA: {len(ids)} versions of {len(facts)} facts saved")
            for n, fact in enumerate(facts):
                for kind, as_of, gold, rivals in _questions(fact):
                    for name in tally:
                        if name == BM25:
                            hits = store.search.text_ranks(fact.question, limit=k)
                            ranked = [by_seq[seq] for seq, _ in hits]
                        else:
                            options, dated = SYSTEMS[name]
                            ranked = search_by_context(
                                store, fact.question, embedder=embedder, project=PROJECT, k=k,
                                record_usage=False, as_of=as_of if dated else None,
                                options=options,
                            ).ids()  # fmt: skip
                        won = _first(ranked, ids[(n, gold)], [ids[(n, r)] for r in rivals])
                        tally[name][kind][0] += won
                        tally[name][kind][1] += 1
    return {
        name: {kind: {"right": r, "n": total, "rate": round(r / total, 4) if total else 0.0}
               for kind, (r, total) in kinds.items()}
        for name, kinds in tally.items()
    }  # fmt: skip


def _questions(fact: Fact) -> list[tuple[str, int, str, list[str]]]:
    """(kind, as_of, the answer that must come first, the versions it must beat)."""
    out: list[tuple[str, int, str, list[str]]] = []
    if fact.static:
        answer, when = next(iter(fact.versions.items()))
        return [("static", when + DAY_MS, answer, [])]
    if len(fact.versions) < 2:
        return out
    newest = max(fact.versions, key=lambda a: fact.versions[a])
    rivals = [a for a in fact.versions if a != newest]
    out.append(("latest", fact.versions[newest] + DAY_MS, newest, rivals))
    for when, answer in fact.sampled:
        known = [a for a, start in fact.versions.items() if start <= when]
        if answer not in known or len(known) < 2:
            continue
        holding = max(known, key=lambda a: fact.versions[a])
        if holding != answer:
            continue  # the sampled date disagrees with the starts: ambiguous, left out
        out.append(("as_of", when, answer, [a for a in known if a != answer]))
    return out


def _first(ranked: list[str], gold: str, rivals: list[str]) -> int:
    """1 when ``gold`` is ranked and above every rival, else 0."""
    if gold not in ranked:
        return 0
    position = ranked.index(gold)
    return int(all(r not in ranked[:position] for r in rivals))


def table(rates: dict[str, Any]) -> str:
    """The rates as a table: one row per system."""
    lines = [f"{'system':<12}{'latest first':>22}{'as of a date':>22}{'static R@1':>22}"]
    for name, kinds in rates.items():
        cells = [
            f"{kinds[kind]['rate']:.3f} ({kinds[kind]['right']}/{kinds[kind]['n']})"
            for kind in ("latest", "as_of", "static")
        ]
        lines.append(f"{name:<12}" + "".join(f"{c:>22}" for c in cells))
    return "\n".join(lines) + "\n"
