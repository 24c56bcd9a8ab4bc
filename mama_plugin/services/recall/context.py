"""What a prompt gets from memory: the chains recall found, or its pointers, fenced as data.

The UserPromptSubmit hook's one call (:func:`prompt_context`): :func:`.recall.recall`'s hits
rendered by ``prompt_context.md.j2`` within the ``prompt_tokens`` budget — each hit's chain
(what stands now, what it replaced), or, when nothing is clearly related, one line for each
pointer, each hit with its verify line when a file it cites changed since — and recorded in
the session's record of what it was shown (nothing twice). Memory
text is defanged so it cannot close the fence. Read-only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...embeddings.protocol import EmbeddingModel
from ...fence import defang
from ...storage import MemoryRecord, Store
from ...text import estimate_tokens
from ..learning.verify import check, line
from ..render import clip, render
from ..search.options import DEFAULT, Options
from .prompt import COSINE_BAR, FENCE, Hit, Recall, Seen, recall


@dataclass(frozen=True)
class Injection:
    """What a prompt gets: the fenced text to inject ("" for nothing) and the hits behind it."""

    text: str
    hits: list[dict[str, Any]]
    used_vectors: bool = False  # the prompt was embedded and matched against the vectors
    skipped: tuple[str, ...] = ()
    pointers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def tier(self) -> str:
        """``chain`` (the full story of a clearly related memory), ``pointer`` or ``none``."""
        return "chain" if self.hits else "pointer" if self.pointers else "none"


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
    shown: Seen | None = None,
    reader: EmbeddingModel | None = None,
    options: Options = DEFAULT,
) -> Injection:
    """The memories ``prompt`` clearly touches, fenced as data within ``budget`` tokens.

    Drops the weakest hits until the text fits; when even one is over budget, shortens it
    instead of dropping it. Memory text is defanged so it cannot close the fence. ``shown``:
    the session's record of what it was shown (nothing twice); ``reader``: a model that reads
    a Korean prompt ``embedder`` cannot (:func:`.recall.recall`); ``options``: how the
    candidates are ranked (the ``ranking`` setting). Read-only.
    """
    found = recall(
        store,
        prompt,
        project=project,
        embedder=embedder,
        cosine_bar=bar,
        shown=shown,
        reader=reader,
        options=options,
    )
    skipped = tuple(found.skipped)
    if found.pointers and not found.hits:
        return _pointed(store, found, budget, shown)
    # Stat calls (and hashes of what differs) only: a hook's check never spawns git.
    changes = check(store, [h.memory for h in found.hits], git=False)
    hits = [
        _defang(
            as_data(h) | ({"verify": line(changes[h.memory.id])} if h.memory.id in changes else {})
        )
        for h in found.hits
    ]
    # Beside the chains, the ranking's first candidate when the rules chained others: the
    # first thing given up when the budget is short.
    beside = [_defang(as_data(h, short=True)) for h in found.pointers]
    while hits:
        text = render("prompt_context.md.j2", store.home, hits=hits, pointers=beside, fence=FENCE)
        text = text.strip()
        if estimate_tokens(text) <= budget:
            break
        if beside:
            beside = []
            continue
        hits = hits[:-1]
        if not hits:  # even one memory is over budget: shorten it instead of dropping it
            hits = [_defang(as_data(found.hits[0], short=True))]
            text = render("prompt_context.md.j2", store.home, hits=hits, pointers=[], fence=FENCE)
            text = text.strip()[: budget * 4]
            break
    else:
        return Injection("", [], found.used_vectors, skipped)
    if shown is not None:
        for hit in [*found.hits[: len(hits)], *found.pointers[: len(beside)]]:
            shown.add(hit.shown())
    return Injection(text, hits, found.used_vectors, skipped, beside)


def _pointed(store: Store, found: Recall, budget: int, shown: Seen | None) -> Injection:
    """One line for each of ``found.pointers`` (as many as fit ``budget``), recorded as shown;
    a pointer to a memory whose cited file changed since says so (stat calls only)."""
    changes = check(store, [h.memory for h in found.pointers], git=False)
    pointers = [
        _defang(as_data(h, short=True) | ({"changed": True} if h.memory.id in changes else {}))
        for h in found.pointers
    ]
    while pointers:
        text = render("prompt_context.md.j2", store.home, hits=[], pointers=pointers, fence=FENCE)
        if estimate_tokens(text.strip()) <= budget:
            break
        pointers = pointers[:-1]
    else:
        return Injection("", [], found.used_vectors, tuple(found.skipped))
    if shown is not None:
        for hit in found.pointers[: len(pointers)]:
            shown.add(hit.shown())
    return Injection(text.strip(), [], found.used_vectors, tuple(found.skipped), pointers)


def _defang(value: Any) -> Any:
    """Memory text cannot close the fence it is shown in."""
    if isinstance(value, str):
        return defang(value)
    if isinstance(value, dict):
        return {k: _defang(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_defang(v) for v in value]
    return value
