"""Prompt-time recall: the few memories a prompt clearly touches, or nothing at all.

Runs inside the MCP server for the UserPromptSubmit hook, on every prompt, so it must be
fast (no model except the already-warm embedder) and, above all, quiet: most prompts
("yes", "run the tests", "fix the typo") touch no past decision and must inject nothing.

Relevance is absolute, not relative to the best hit (search's fused score is relative).
A memory passes when

- its embedding is close to the prompt's: cosine ≥ the bar (``relevance_bar``, 0.5); or
- it is nearly that close (within ``SUPPORT_BAND``) *and* shares a content word with a prompt
  of at least ``SUPPORT_WORDS`` content words — a short prompt ("run the tests") lands near
  many memories by accident; or
- it holds most of the prompt's content words (coverage ≥ ``COVERAGE_BAR`` with at least
  ``MIN_MATCHED`` of them): the rule that works before the embedding model is warm.

On mama_plugin/bench/recall_prompts.json (16 prompts that should recall a decision, 16 that
should not) these rules recall 16/16 and stay silent on 16/16; the cosine bar alone was
13/16 and 16/16 at 0.5, 16/16 and 15/16 at 0.4 (`mama bench hooks` prints it). Read-only.

:func:`prompt_context` is the hook's one call: the hits, fenced as data within a token budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..fence import TAG, defang
from ..storage import MemoryRecord, Store
from ..text import content_words as _content_words
from ..text import estimate_tokens, stem
from . import vector_index
from .briefing import predecessors
from .evolution import current_of
from .render import clip, render
from .retrieval import EmbeddingModel

# Calibrated on mama_plugin/bench/recall_prompts.json (see `mama bench hooks`).
COSINE_BAR = 0.5
SUPPORT_BAND = 0.1
SUPPORT_WORDS = 3
COVERAGE_BAR = 0.5
MIN_MATCHED = 2
MIN_WORDS = 2  # shorter prompts ("yes", "go on") never recall anything
CANDIDATES = 12
MAX_HITS = 3
MIN_LENGTH = 3  # one- and two-letter words ("db", "ok") match too much by accident
FENCE = TAG  # the tag the injected memories are fenced in, as data


@dataclass
class Hit:
    """A memory that passed the bar, why it passed, and what stands now in its place."""

    memory: MemoryRecord
    current: MemoryRecord
    cosine: float | None
    coverage: float
    matched: list[str]
    replaced: MemoryRecord | None = None  # the failed or superseded decision it replaced

    @property
    def score(self) -> float:
        return max(self.cosine or 0.0, self.coverage)


@dataclass
class Recall:
    """What a prompt recalled (possibly nothing) and the words it was judged on."""

    words: list[str]
    hits: list[Hit] = field(default_factory=list)
    used_vectors: bool = False


@dataclass(frozen=True)
class Injection:
    """What a prompt gets: the fenced text to inject ("" for nothing) and the hits behind it."""

    text: str
    hits: list[dict[str, Any]]
    used_vectors: bool = False  # the prompt was embedded and matched against the vectors


def content_words(text: str) -> list[str]:
    """Distinct lower-case words worth matching: no stopwords, no one- or two-letter words."""
    return _content_words(text, min_length=MIN_LENGTH)


def recall(
    store: Store,
    prompt: str,
    *,
    project: str,
    embedder: EmbeddingModel | None = None,
    max_hits: int = MAX_HITS,
    cosine_bar: float = COSINE_BAR,
) -> Recall:
    """The memories of ``project`` that ``prompt`` clearly touches, best first."""
    words = content_words(prompt)
    found = Recall(words)
    if len(words) < MIN_WORDS:
        return found
    seqs = [seq for seq, _ in store.search.text_ranks(words, project=project, limit=CANDIDATES)]
    cosines: dict[int, float] = {}
    if embedder is not None and vector_index.has_vectors(store):
        query = embedder.embed([prompt[:2000]])[0]
        for seq, distance in vector_index.knn(store, query, CANDIDATES, project=project):
            cosines[seq] = 1.0 - distance
        found.used_vectors = True
    stems = {stem(w): w for w in words}
    hits: list[Hit] = []
    for seq, memory in store.memories.get_by_seq([*seqs, *cosines]).items():
        if memory.type == "checkpoint":  # where work stood is for session start, not prompts
            continue
        text = " ".join(
            [
                memory.topic.replace("_", " "),
                memory.content,
                str(memory.reasoning.get("primary") or ""),
            ]
        )
        have = {stem(w) for w in content_words(text)}
        matched = [w for s, w in stems.items() if s in have]
        coverage = len(matched) / len(words)
        cosine = cosines.get(seq)
        near = cosine is not None and cosine >= cosine_bar - SUPPORT_BAND
        supported = near and len(matched) >= 1 and len(words) >= SUPPORT_WORDS
        if (
            (cosine is not None and cosine >= cosine_bar)
            or supported
            or (coverage >= COVERAGE_BAR and len(matched) >= MIN_MATCHED)
        ):
            hits.append(Hit(memory, memory, cosine, coverage, matched))
    hits.sort(key=lambda h: (-h.score, -h.memory.created_at))
    seen: set[str] = set()
    for hit in hits:
        head = current_of(store, hit.memory.id) if hit.memory.status == "superseded" else hit.memory
        if hit.memory.id in seen or (head.id in seen and head.id != hit.memory.id):
            continue  # one entry per evolution chain
        hit.current = head
        # The newest decision it superseded: the evolution behind the answer.
        replaced = next(iter(predecessors(store, head)), None)
        hit.replaced = None if replaced is None or replaced.id == hit.memory.id else replaced
        seen.update({hit.memory.id, head.id})
        if hit.replaced is not None:
            seen.add(hit.replaced.id)
        found.hits.append(hit)
        if len(found.hits) >= max_hits:
            break
    return found


def _excerpt(m: MemoryRecord, limit: int) -> dict[str, Any]:
    return {
        "id": m.id,
        "content": clip(m.content, limit),
        "why": clip(m.reasoning.get("primary"), limit),
        "outcome": m.outcome_status,
        "outcome_details": clip(m.outcome.get("details"), limit),
    }


def as_data(hit: Hit, *, short: bool = False) -> dict[str, Any]:
    """A hit as the plain dict the prompt template and the tool's structured result use."""
    limit = 120 if short else 300
    m, head = hit.memory, hit.current
    return _excerpt(m, limit) | {
        "type": m.type,
        "topic": m.topic,
        "status": m.status,
        "created_at": m.created_at,
        "current": None if head.id == m.id else _excerpt(head, limit),
        "replaced": None if hit.replaced is None else _excerpt(hit.replaced, limit),
        "cosine": None if hit.cosine is None else round(hit.cosine, 3),
        "coverage": round(hit.coverage, 3),
        "matched": hit.matched,
    }


def prompt_context(
    store: Store,
    prompt: str,
    *,
    project: str,
    budget: int,
    bar: float = COSINE_BAR,
    embedder: EmbeddingModel | None = None,
) -> Injection:
    """The memories ``prompt`` clearly touches, fenced as data within ``budget`` tokens.

    Drops the weakest hits until the text fits; when even one is over budget, shortens it
    instead of dropping it. Memory text is defanged so it cannot close the fence. Read-only.
    """
    found = recall(store, prompt, project=project, embedder=embedder, cosine_bar=bar)
    hits = [_defang(as_data(h)) for h in found.hits]
    while hits:
        text = render("prompt_context.md.j2", hits=hits, fence=FENCE).strip()
        if estimate_tokens(text) <= budget:
            return Injection(text, hits, found.used_vectors)
        hits = hits[:-1]
        if not hits:  # even one memory is over budget: shorten it instead of dropping it
            hits = [_defang(as_data(found.hits[0], short=True))]
            text = render("prompt_context.md.j2", hits=hits, fence=FENCE).strip()
            return Injection(text[: budget * 4], hits, found.used_vectors)
    return Injection("", [], found.used_vectors)


def _defang(value: Any) -> Any:
    """Memory text cannot close the fence it is shown in."""
    if isinstance(value, str):
        return defang(value)
    if isinstance(value, dict):
        return {k: _defang(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_defang(v) for v in value]
    return value
