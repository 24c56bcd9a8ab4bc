"""What the ``recall`` benchmark's parts share: the store of labelled memories, each prompt's
candidates before any bar, the rules' verdict on them, and the score of what was injected.

One home for :mod:`.recall` (the rows, the sweep, the report), :mod:`.recall_assist` (the
assist model as a judge), :mod:`.recall_tiers` and :mod:`.recall_causes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mama_plugin.config import Config
from mama_plugin.embeddings.protocol import EmbeddingModel, query_vectors
from mama_plugin.services.recall import prompt as recall
from mama_plugin.services.recall.judge import judge
from mama_plugin.services.saving.memories import save_context
from mama_plugin.services.search import indexing
from mama_plugin.services.search.options import Options
from mama_plugin.storage import Store
from mama_plugin.text import hangul

from .recall_data import GROUPS, Case, Labelled

PROJECT = "/bench/recall"


@dataclass
class Row:
    """One system's answers: for each case, the ids it would inject."""

    name: str
    injected: list[list[str]]
    ms: list[float]


def score(cases: Sequence[Case], injected: Sequence[Sequence[str]], split: str) -> dict[str, Any]:
    """Recall of related cases and silence on unrelated ones, in ``split`` ("all": both)."""
    out: dict[str, Any] = {}
    for language in GROUPS:
        chosen = [
            (c, ids)
            for c, ids in zip(cases, injected, strict=True)
            if split in ("all", c.split) and language in ("all", c.group)
        ]
        related = [c.meant & set(ids) != set() for c, ids in chosen if c.related]
        unrelated = [not ids for c, ids in chosen if not c.related]
        out[language] = {
            "recall": round(sum(related) / len(related), 3) if related else None,
            "silence": round(sum(unrelated) / len(unrelated), 3) if unrelated else None,
            "related": len(related),
            "unrelated": len(unrelated),
        }
    return out


def store_of(home: Path, data: Labelled, embedder: EmbeddingModel | None) -> tuple[Store, dict]:
    store = Store.open(home / "recall.db", config=Config(home))
    ids: dict[str, str] = {}
    with store.transaction():
        for memory in data.memories:
            saved = save_context(store, PROJECT, {"topic": memory.topic, "content": memory.content})
            ids[saved.memory.id] = memory.key
    if embedder is not None:
        indexing.drain(store, embedder)
    return store, ids


# id, relevance, weight, matched, terms, whether the prompt is Korean, the model whose scale
# the relevance is on ("" without vectors), whether it holds a rare name the prompt gives
Candidate = tuple[str, float | None, float, int, int, bool, str, bool]


def candidates(
    store: Store,
    prompt: str,
    embedder: EmbeddingModel | None,
    reader: EmbeddingModel | None = None,
    ranking: Options | None = None,
    *,
    project: str = PROJECT,
) -> list[Candidate]:
    """Every chain's candidate, before any bar (see :data:`Candidate`); ``reader``: the model
    that reads a Korean prompt the store's cannot (``recall.recall``'s); ``ranking``: how the
    candidates are ranked (None: as the product ranks them, ``recall.ranking_of``)."""
    found = recall.recall(
        store,
        prompt,
        project=project,
        embedder=embedder,
        judged=False,
        max_hits=99,
        reader=reader,
        ranking=ranking,
    )
    return [
        (
            h.memory.id,
            recall.relevance(h.cosine or 0.0, found.model) if found.model else None,
            h.coverage,
            len(h.matched),
            len(found.words),
            hangul(prompt),
            found.model,
            h.named,
        )
        for h in found.hits
    ]


def judged(candidates: list[Candidate], bar: float, model: str, *, cut: bool = True) -> list[str]:
    """The ids the rules pass at ``bar``, each candidate read on its own model's scale."""
    passed = [
        memory_id
        for memory_id, relevant, weight, matched, terms, korean, read, _ in candidates
        if terms >= recall.MIN_TERMS
        and judge(relevant, weight, matched, bar=bar, model=read or model, korean=korean)
    ]
    return passed[: recall.MAX_HITS] if cut else passed


class Memo:
    """An embedding model that embeds each text once (every prior or ranking asks the same
    prompts, and the same candidates' narratives)."""

    def __init__(self, model: EmbeddingModel) -> None:
        self.model = model
        self.name, self.dim = model.name, model.dim
        self.known: dict[str, list[float]] = {}

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self._embed(texts, "", self.model.embed)

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """The model's query form when it has one (retrieval.query_vectors)."""
        return self._embed(texts, "query:", lambda t: query_vectors(self.model, t))

    def _embed(self, texts: list[str], kind: str, embed: Any) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if kind + t not in self.known]
        if missing:
            made = embed(missing)
            self.known.update(zip((kind + t for t in missing), made, strict=True))
        return [self.known[kind + t] for t in texts]


def keyed(injected: list[list[str]], keys: dict[str, str]) -> list[list[str]]:
    return [[keys.get(i, i) for i in ids] for ids in injected]


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"
