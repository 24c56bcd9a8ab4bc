"""LoCoMo-10 retrieval benchmark through the product's own save and search paths.

Protocol (``shared/bench/README.md``): one isolated store per conversation; every dialog turn
is saved as a memory ``"<speaker>: <text>"`` (plus `` [shares <caption>]``) dated with its
session's date; every question goes through ``search_by_context`` as of the conversation's
last date. Metrics at turn level and at session level, by category, with the original and
the audit-corrected evidence, in one run for: plain FTS5 BM25 (``bm25``), the ranking before
issue 16 (``today``: wall-clock recency, no version signal), main's ranking before question dates
(``main``), the default (``full``), its
keyword-only and vector-only retrievers, and every option of the ablation (``ABLATION``:
one change to the default each, ranked by ``retrieve`` with the same query vector).
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel, query_vectors
from mama_plugin.errors import MamaError
from mama_plugin.services.saving.memories import save_context
from mama_plugin.services.search.indexing import drain
from mama_plugin.services.search.options import DEFAULT, MAIN, TODAY, Options
from mama_plugin.services.search.retrieval import retrieve
from mama_plugin.services.story.answers import search_by_context
from mama_plugin.storage import Store

from . import metrics

# Systems through search_by_context: retrievers, options, and whether "now" is the
# conversation's own date (as_of) or the wall clock.
SYSTEMS: dict[str, tuple[tuple[str, ...], Options, bool]] = {
    "full": (("keyword", "vector"), DEFAULT, True),
    "today": (("keyword", "vector"), TODAY, False),
    "keyword": (("keyword",), DEFAULT, True),
    "vector": (("vector",), DEFAULT, True),
}
BM25 = "bm25"  # FTS5 BM25 alone: no fusion, session context or ranking
# One change to the default each (``retrieve`` with both retrievers).
ABLATION: dict[str, tuple[Options, bool]] = {
    "main": (MAIN, True),
    "wallclock": (DEFAULT, False),
    "-updates": (replace(DEFAULT, updates=False), True),
    "-dates": (replace(DEFAULT, date_boost=0.0), True),
    "date0.5": (replace(DEFAULT, date_boost=0.5), True),
    "+links": (replace(DEFAULT, links=True), True),
    "+typepair": (replace(DEFAULT, type_pairs=True), True),
    "+lastuse": (replace(DEFAULT, last_use=True), True),
    "vw1.5": (replace(DEFAULT, vector_weight=1.5), True),
    "vw1": (replace(DEFAULT, vector_weight=1.0), True),
    "nb0.15": (replace(DEFAULT, neighbour_weight=0.15), True),
    "nw1": (replace(DEFAULT, neighbour_window=1), True),
    "nosess": (replace(DEFAULT, neighbour_weight=0.0, session_weight=0.0), True),
    "+expand": (replace(DEFAULT, expand_terms=10, expand_weight=0.3), True),
}
HEADLINE = (1, 2, 3, 4)
_DIA = re.compile(r"D:?0*(\d+):0*(\d+)")


@dataclass
class Question:
    """One QA item with its cleaned original and audit-corrected gold turns."""

    sample: int
    index: int
    text: str
    category: int
    original: list[str]
    audited: list[str]


@dataclass
class Conversation:
    """One LoCoMo sample: its turns (dia_id, session, text, time) and questions."""

    sample: int
    turns: list[tuple[str, str, str, int]]
    questions: list[Question] = field(default_factory=list)


@dataclass
class Cleaning:
    """What evidence cleaning changed, to be printed with the results."""

    rewritten: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    questions_without_evidence: list[str] = field(default_factory=list)


def clean_evidence(raw: Sequence[str], known: set[str]) -> tuple[list[str], list[str], list[str]]:
    """Split multi-id strings, fix ``D:11:26`` and leading zeros, drop ids that do not exist.

    Returns (clean ids, rewritten originals, dropped originals).
    """
    clean: list[str] = []
    rewritten: list[str] = []
    dropped: list[str] = []
    for entry in raw:
        found = [f"D{int(s)}:{int(t)}" for s, t in _DIA.findall(entry)]
        if found != [entry]:
            rewritten.append(entry)
        kept = [f for f in found if f in known]
        if len(kept) < len(found) or not found:
            dropped.append(entry)
        clean.extend(k for k in kept if k not in clean)
    return clean, rewritten, dropped


def _date_ms(text: str) -> int:
    moment = datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def load(dataset: Path, audit: Path | None) -> tuple[list[Conversation], Cleaning]:
    """Read LoCoMo (and the audit's WRONG_CITATION corrections); clean the evidence."""
    try:
        samples = json.loads(dataset.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise MamaError(f"cannot read the LoCoMo dataset {dataset}: {exc}") from exc
    corrections: dict[tuple[int, str], list[str]] = {}
    if audit is not None:
        for record in json.loads(audit.read_text(encoding="utf-8")):
            if record.get("error_type") == "WRONG_CITATION" and record.get("correct_evidence"):
                sample = int(re.match(r"locomo_(\d+)_", record["question_id"])[1])  # type: ignore[index]
                corrections[(sample, record["question"])] = list(record["correct_evidence"])
    cleaning = Cleaning()
    conversations = []
    for number, sample in enumerate(samples):
        conv = sample["conversation"]
        turns: list[tuple[str, str, str, int]] = []
        sessions = sorted(
            (int(key.split("_")[1]) for key in conv if re.fullmatch(r"session_\d+", key)),
        )
        for session in sessions:
            base = _date_ms(conv[f"session_{session}_date_time"])
            for offset, turn in enumerate(conv[f"session_{session}"]):
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares {turn['blip_caption']}]"
                turns.append((turn["dia_id"], f"S{session}", text, base + offset * 1000))
        known = {t[0] for t in turns}
        conversation = Conversation(number, turns)
        for index, qa in enumerate(sample["qa"]):
            original, rewritten, dropped = clean_evidence(qa.get("evidence", []), known)
            cleaning.rewritten += [f"conv {number} q{index}: {r!r}" for r in rewritten]
            cleaning.dropped += [f"conv {number} q{index}: {d!r}" for d in dropped]
            fixed = corrections.get((number, qa["question"]))
            audited = clean_evidence(fixed, known)[0] if fixed else original
            if not original:
                cleaning.questions_without_evidence.append(f"conv {number} q{index}")
                continue
            conversation.questions.append(
                Question(
                    number,
                    index,
                    qa["question"],
                    int(qa["category"]),
                    original,
                    audited or original,
                )
            )
        conversations.append(conversation)
    return conversations, cleaning


@dataclass
class Run:
    """Per-question ranked dia ids for every system, plus timings."""

    ranked: dict[str, list[list[str]]] = field(default_factory=dict)
    questions: list[Question] = field(default_factory=list)
    session_of: dict[tuple[int, str], str] = field(default_factory=dict)
    ingest_seconds: float = 0.0
    embed_seconds: float = 0.0
    search_ms: dict[str, list[float]] = field(default_factory=dict)
    turns: int = 0


def systems_for(embedder: EmbeddingModel | None) -> tuple[str, ...]:
    """Every system the run compares (without a model: those that need none)."""
    if embedder is None:
        return (BM25, "full", "today")
    return (BM25, *SYSTEMS, *ABLATION)


def run(
    conversations: list[Conversation],
    embedder: EmbeddingModel | None,
    *,
    depth: int = 50,
    systems: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
    ablation: dict[str, tuple[Options, bool]] | None = None,
) -> Run:
    """Ingest each conversation into its own temporary store and ask every question.

    ``ablation``: the options each system not in :data:`SYSTEMS` ranks with (default
    :data:`ABLATION`)."""
    systems = tuple(systems) if systems is not None else systems_for(embedder)
    table = ABLATION if ablation is None else ablation
    out = Run(ranked={s: [] for s in systems}, search_ms={s: [] for s in systems})
    for conv in conversations:
        with tempfile.TemporaryDirectory(prefix="mama-locomo-") as tmp:
            home = Path(tmp)
            project = f"/locomo/conv-{conv.sample}"
            with Store.open(home / "mama.db", config=Config(home)) as store:
                started = time.perf_counter()
                by_id: dict[str, str] = {}
                by_seq: dict[int, str] = {}
                with store.transaction():
                    for dia, session, text, when in conv.turns:
                        turn = {"content": text, "session_id": session}
                        saved = save_context(store, project, turn, created_at=when)
                        by_id[saved.memory.id] = dia
                        by_seq[saved.memory.seq] = dia
                        out.session_of[(conv.sample, dia)] = session
                out.ingest_seconds += time.perf_counter() - started
                out.turns += len(conv.turns)
                # The questions were asked after the conversation: "now" is its last date.
                as_of = max(when for *_, when in conv.turns)
                vectors: list[list[float] | None] = [None] * len(conv.questions)
                if embedder is not None:
                    started = time.perf_counter()
                    drain(store, embedder, batch_size=64)
                    vectors = list(query_vectors(embedder, [q.text for q in conv.questions]))
                    out.embed_seconds += time.perf_counter() - started
                for question, vector in zip(conv.questions, vectors, strict=True):
                    out.questions.append(question)
                    for system in systems:
                        started = time.perf_counter()
                        ranked = _ask(store, system, question.text, embedder, project, depth,
                                      as_of, vector, by_id, by_seq, table)  # fmt: skip
                        out.search_ms[system].append((time.perf_counter() - started) * 1000)
                        out.ranked[system].append(ranked)
        if progress:
            asked = len(conv.questions)
            progress(f"conversation {conv.sample}: {len(conv.turns)} turns, {asked} questions")
    return out


def _ask(
    store: Store,
    system: str,
    text: str,
    embedder: EmbeddingModel | None,
    project: str,
    depth: int,
    as_of: int,
    vector: list[float] | None,
    by_id: dict[str, str],
    by_seq: dict[int, str],
    ablation: dict[str, tuple[Options, bool]],
) -> list[str]:
    """One question through one system: the dia ids it ranks, best first."""
    if system == BM25:
        return [by_seq[seq] for seq, _ in store.search.text_ranks(text, limit=depth)]
    if system in SYSTEMS:
        retrievers, options, dated = SYSTEMS[system]
        result = search_by_context(
            store, text, embedder=embedder, project=project, k=depth, retrievers=retrievers,
            record_usage=False, as_of=as_of if dated else None, options=options,
        )  # fmt: skip
        return [by_id[i] for i in result.ids() if i in by_id]
    options, dated = ablation[system]
    hits = retrieve(store, text, embedder=embedder, project=project, k=depth,
                    as_of=as_of if dated else None, query_vector=vector,
                    options=options)  # fmt: skip
    return [by_id[h.memory.id] for h in hits if h.memory.id in by_id]


def score(result: Run) -> dict[str, Any]:
    """Every metric: figures[evidence][system][unit][category] = {metric: value, "n": count}."""
    figures: dict[str, Any] = {}
    for evidence in ("original", "audited"):
        figures[evidence] = {}
        for system, ranked_lists in result.ranked.items():
            per_unit: dict[str, dict[str, dict[str, float]]] = {"turn": {}, "session": {}}
            groups: dict[str, list[int]] = {}
            for i, q in enumerate(result.questions):
                groups.setdefault(str(q.category), []).append(i)
                if q.category in HEADLINE:
                    groups.setdefault("1-4", []).append(i)
            for group, members in sorted(groups.items()):
                for unit, table in (
                    ("turn", metrics.TURN_METRICS),
                    ("session", metrics.SESSION_METRICS),
                ):
                    values: dict[str, list[float]] = {name: [] for name in table}
                    for i in members:
                        q = result.questions[i]
                        gold_turns = set(q.original if evidence == "original" else q.audited)
                        ranked = ranked_lists[i]
                        if unit == "session":
                            ranked = metrics.distinct(
                                [result.session_of[(q.sample, d)] for d in ranked]
                            )
                            gold = {result.session_of[(q.sample, d)] for d in gold_turns}
                        else:
                            gold = gold_turns
                        for name, fn in table.items():
                            values[name].append(fn(ranked, gold))
                    per_unit[unit][group] = {
                        n: round(metrics.mean(v), 4) for n, v in values.items()
                    }
                    per_unit[unit][group]["n"] = len(members)
            figures[evidence][system] = per_unit
    return figures


def sha256(path: Path) -> str:
    """The dataset's digest, printed with the results."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def ablation_table(figures: dict[str, Any], evidence: str = "original") -> str:
    """R@5 / R@10 by category for every system: turn level, then session level."""
    groups = ("1", "2", "3", "4", "1-4", "5")
    lines: list[str] = []
    for unit in ("turn", "session"):
        lines.append(f"\n{unit} R@5 / R@10 by category ({evidence} evidence)")
        lines.append(f"{'system':<10}" + "".join(f"{'cat ' + g:>14}" for g in groups))
        for system, units in figures[evidence].items():
            cells = []
            for group in groups:
                row = units[unit].get(group)
                cells.append(f"{row['r5']:.3f}/{row['r10']:.3f}" if row else "-")
            lines.append(f"{system:<10}" + "".join(f"{c:>14}" for c in cells))
    return "\n".join(lines) + "\n"
