"""Prompt-time recall: the few memories a prompt clearly touches, or nothing at all.

Runs inside the MCP server for the UserPromptSubmit hook, on every prompt, so it must be fast
(no model but the warm embedder) and, above all, quiet: most prompts ("yes", "run the tests",
"파이썬에서 리스트를 뒤집는 방법 알려줘") touch no past decision and must inject nothing.

One path with ``search_by_context``: the candidates are :func:`retrieval.retrieve`'s best
(``CANDIDATES``, ranked as search ranks them or with the model's own cosine weight,
:func:`ranking_of`), found by the same keyword index (Korean words as stems, matched as prefixes:
:func:`~mama_plugin.text.search_terms`) and the same vectors. Search ranks relative to its best
hit; recall must also say *whether* anything is related, so each candidate is judged on
absolute evidence:

- **meaning**: the prompt's cosine with the memory's vector, read on the model's own scale
  (``relevance``: 0 at the model's floor, see ``SCALES``) against ``relevance_bar``;
- **words**: the share of the prompt's term weight the memory holds (:func:`weights`: a
  term's inverse document frequency in the store; terms compared by English stem or Korean
  syllable pairs, :func:`~mama_plugin.text.matched_terms`, in the memory's narrative, the
  text it is embedded as: a decision with what it replaced and what happened to it). A
  prompt about another person or another service names something no memory holds, and that
  term weighs most; in a store of a few memories every term is rare, so the frequencies are
  read as if ``DF_PRIOR`` more memories held none of them (one unknown word, "the *new*
  API", no longer outweighs the four the memory holds).

The rules that turn that evidence into a tier — a full chain, a one-line pointer, or nothing —
are :mod:`.judge`'s (:func:`~.judge.tiers`). Measured by
``python -m benchmarks recall`` on public data beside the old rules (README, "Prompt recall").

Nothing twice (``shown``, a :class:`Seen`; :mod:`.story.shown` keeps one a session): what the
session start injected and what an earlier prompt of the same session injected is not
injected again unless it changed (its row version moved).
What the hook injects (the chains, or the pointers, fenced as data within a token budget) is
:mod:`.prompt_context`'s. Read-only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Protocol

from ...embeddings.cards import reads_korean
from ...embeddings.protocol import EmbeddingModel, query_vector_of
from ...errors import MamaError
from ...fence import TAG
from ...storage import MemoryRecord, Store
from ...storage.fts import Terms
from ...text import PREFIX, hangul, matched_terms, recall_terms, search_terms, text_keys
from ..evolution import current_of, outcome_events, predecessors
from ..search import vector_index
from ..search.indexing import narrative_text
from ..search.options import DEFAULT, Options
from ..search.retrieval import retrieve
from ..search.views import EMBED_CHARS, best_cosines, read_with
from .judge import (
    MAX_HITS,
    MAX_POINTERS,
    MIN_TERMS,
    RARE_DF,
    VIEW_TERMS,
    WEIGHT_BAR,
    Evidence,
    tiers,
)
from .scales import ranking_of, relevance

COSINE_BAR = 0.5  # relevance_bar's default


class Seen(Protocol):
    """What a session has been shown: memory id → row version (:mod:`.story.shown`)."""

    def holds(self, memories: dict[str, int]) -> bool: ...

    def add(self, memories: dict[str, int]) -> None: ...


DF_CAP = 2000  # a term in more memories than this weighs as if in this many
# Term weights read the store as if it held this many more memories, none holding the term:
# in a 1-memory store an unknown word weighed 4.7 times a held one (log 2/0.5 vs log 2/1.5),
# now 1.4 times; past a few hundred memories the weights barely move.
DF_PRIOR = 20
CANDIDATES = 10
# The vector neighbours read for the candidates' cosines: a candidate found by its words far
# down the vector order still gets its own cosine (at 50 deep, many got none and read as 0).
KNN_DEPTH = 400
FENCE = TAG  # the tag the injected memories are fenced in, as data


@dataclass
class Hit:
    """A memory that passed the bar, why it passed, and what stands now in its place."""

    memory: MemoryRecord
    current: MemoryRecord
    cosine: float | None
    coverage: float  # the share of the prompt's term weight the memory holds
    matched: list[str]
    replaced: MemoryRecord | None = None  # the failed or superseded decision it replaced
    named: bool = False  # it holds a rare name the prompt gives (:func:`rare_names`)

    @property
    def score(self) -> float:
        return max(self.cosine or 0.0, self.coverage)

    def shown(self) -> dict[str, int]:
        """Every memory this hit shows, with the row version shown."""
        chain = (self.memory, self.current, self.replaced)
        return {m.id: m.version for m in chain if m is not None}


@dataclass
class Recall:
    """What a prompt recalled (possibly nothing) and the terms it was judged on."""

    words: list[str]
    hits: list[Hit] = field(default_factory=list)
    used_vectors: bool = False
    skipped: list[str] = field(default_factory=list)  # passed, but already shown this session
    # When nothing is clearly related: the first candidates close enough for a one-line
    # pointer (the decision, its status, its id), which Claude may follow with a search.
    pointers: list[Hit] = field(default_factory=list)
    model: str = ""  # the model whose scale the hits' cosines are on ("" without vectors)


def weights(store: Store, terms: list[str], *, prior: float = DF_PRIOR) -> dict[str, float]:
    """Each term's weight, its inverse document frequency in the store: a term no memory holds
    (another person's name, another service) weighs most, so a memory that lacks it is far.
    The store counts ``prior`` more memories than it holds (see the module docstring)."""
    return _weights(*Terms(store).statistics(terms, cap=DF_CAP), terms, prior)


def _weights(
    count: int, frequency: dict[str, int], terms: list[str], prior: float
) -> dict[str, float]:
    documents = count + prior
    return {t: math.log(documents / (frequency.get(t, 0) + 0.5)) + 0.01 for t in terms}


# A word shaped like a name: an inner capital (FastAPI, PostgreSQL), an acronym of three
# letters or more (JWT, SQS), an identifier (max_entries, http.server), letters with digits
# (S3), or a capital inside a sentence (Redis, Kafka).
_NAMED = re.compile(
    r"\b(?:[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*|[A-Z]{3,}[A-Za-z0-9]*|[A-Za-z]\w*[_.]\w*[A-Za-z0-9]"
    r"|[A-Za-z]+\d+\w*)\b|(?<=[a-z,;:] )[A-Z][a-z]{2,}\w*"
)


def rare_names(store: Store, prompt: str, terms: list[str]) -> set[str]:
    """Of the prompt's judged ``terms``, those of a word shaped like a name that at most
    ``RARE_DF`` memories of the store hold."""
    named = _named(prompt, terms)
    if not named:
        return set()
    return _rare(named, Terms(store).statistics(sorted(named), cap=RARE_DF + 1)[1])


def _named(prompt: str, terms: list[str]) -> set[str]:
    """The ``terms`` the prompt gives as words shaped like a name (``_NAMED``)."""
    found = {t for word in _NAMED.findall(prompt) for t in recall_terms(search_terms(word))}
    return {t.rstrip("*") for t in found} & {t.rstrip("*") for t in terms}


def _rare(named: set[str], frequency: dict[str, int]) -> set[str]:
    held = {t.rstrip("*"): n for t, n in frequency.items()}
    return {t for t in named if 0 < held.get(t, 0) <= RARE_DF}


def recall(
    store: Store,
    prompt: str,
    *,
    project: str,
    embedder: EmbeddingModel | None = None,
    max_hits: int = MAX_HITS,
    cosine_bar: float = COSINE_BAR,
    shown: Seen | None = None,
    judged: bool = True,
    views: bool = True,
    df_prior: float = DF_PRIOR,
    reader: EmbeddingModel | None = None,
    options: Options = DEFAULT,
    ranking: Options | None = None,
    names: bool = True,
) -> Recall:
    """The memories of ``project`` that ``prompt`` clearly touches, best first.

    ``shown`` (this session's): a hit it already holds, unchanged, is left out (and listed in
    ``skipped``). Recording what was injected is the caller's (:func:`prompt_context`).
    ``judged=False`` keeps every candidate (the ``recall`` benchmark judges them at many bars);
    ``views=False`` reads the stored narrative's cosine only (:mod:`recall_views`);
    ``df_prior`` is the bench's ablation of :data:`DF_PRIOR` (1: the weights before it);
    ``reader``: a model that reads Korean (multilingual-e5), used for a Korean prompt when
    ``embedder`` cannot (:func:`reads_korean`). ``options``: how the candidates are ranked
    (:class:`.retrieval.Options`; the ``ranking`` setting), with the cosine weight of the
    model whose vectors rank them (:func:`ranking_of`); ``ranking`` replaces all of it (the
    bench's comparison). ``names=False``: no candidate pointed at for a rare name alone
    (:func:`rare_names`; the bench's comparison).
    """
    # The prompt read once: the index's terms, and those recall judges (no short ASCII word).
    words = search_terms(prompt)
    terms = recall_terms(words)
    found = Recall([t.rstrip("*") for t in terms])
    if len(terms) < MIN_TERMS:
        return found
    vector, model = None, ""
    if embedder is not None and vector_index.has_vectors(store):
        try:
            store.vectors.check_model(embedder.name, embedder.dim)
            vector, model = query_vector_of(embedder, prompt[:EMBED_CHARS]), embedder.name
        except MamaError:  # another model's vectors: keywords until they are re-embedded
            vector = None
    found.used_vectors = vector is not None
    # Read before the candidates: views embedded for text erased after this are not kept.
    erased = store.erasure.token()
    # One nearest-neighbour search for both the ranking and the candidates' cosines.
    neighbours = (
        [] if vector is None else vector_index.knn(store, vector, KNN_DEPTH, project=project)
    )
    ranked = retrieve(
        store,
        prompt,
        embedder=embedder if vector is not None else None,
        project=project,
        k=CANDIDATES,
        query_vector=vector,
        retrievers=("keyword", "vector") if vector is not None else ("keyword",),
        # Where work stood is for session start, not prompts: checkpoints are left out before
        # the cut, so a project's many checkpoints repeating a topic never crowd out its
        # decisions (ten of them once silenced recall of the decision they were about).
        exclude_types=("checkpoint",),
        neighbours=neighbours if vector is not None else None,
        words=words,
        options=ranking or ranking_of(model, options),
    )
    near = dict(neighbours)
    cosines = {s.memory.id: 1.0 - near[s.memory.seq] for s in ranked if s.memory.seq in near}
    # The store's frequencies, read once: the terms' weights, and which names are rare.
    count, frequency = Terms(store).statistics(terms, cap=DF_CAP)
    weight = _weights(count, frequency, terms, df_prior)
    korean = hangul(prompt)
    total = sum(weight.values())
    told = [(s.memory, narrative_text(store, s.memory)) for s in ranked]
    meaning = vector is not None  # the candidates are judged on meaning too
    if korean and reader is not None and not reads_korean(model or getattr(embedder, "name", "")):
        # The model cannot read Korean: a model that can judges these candidates' meaning.
        cosines = read_with(reader, prompt, told, store, erased)
        model, meaning = reader.name, bool(told)
        found.used_vectors = found.used_vectors or meaning
    elif vector is not None and embedder is not None and views and len(terms) >= VIEW_TERMS:
        told_cosines = [(m, n, cosines.get(m.id)) for m, n in told]
        cosines = best_cosines(embedder, vector, told_cosines, store=store, erased=erased)
    events = outcome_events(store, [m for m, _ in told])  # an outcome event: its verdict
    judges = store.memories.get_many(set(events.values()))  # is on the memory it judges
    found.model = model if meaning else ""
    keys = [matched_terms(terms, text_keys(narrative)) for _, narrative in told]
    rare = _rare(_named(prompt, terms), frequency) if names else set()
    shares = [sum(weight[t] for t in matched) / total for matched in keys]
    # An outcome event is told on the memory it judges.
    decided = [judges.get(events.get(m.id, ""), m) for m, _ in told]
    # Only a memory holding enough of the weight can be near (the words-and-meaning rule).
    evolved = _evolved(
        store, [m for m, share in zip(decided, shares, strict=True) if share >= WEIGHT_BAR]
    )
    evidence = [
        Evidence(
            relevance(cosines.get(memory.id) or 0.0, model) if meaning else None,
            share,
            len(matched),
            share >= WEIGHT_BAR and decision.id in evolved,
            bool(rare & {t.removesuffix(PREFIX).rstrip("*") for t in matched}),
        )
        for (memory, _), decision, share, matched in zip(told, decided, shares, keys, strict=True)
    ]
    tiered = tiers(evidence, terms=len(terms), bar=cosine_bar, model=model, korean=korean)
    made: dict[int, Hit] = {}
    for rank, ((candidate, _), memory, read, matched) in enumerate(
        zip(told, decided, evidence, keys, strict=True)
    ):
        if not judged or rank in tiered.chains or rank in tiered.near or rank in tiered.close:
            held = [t.removesuffix(PREFIX) for t in matched]
            made[rank] = Hit(
                memory, memory, cosines.get(candidate.id), read.weighted, held, named=read.named
            )
    chained = list(made) if not judged else tiered.chains
    found.hits = _chains(store, [made[r] for r in chained], found, max_hits, shown)
    if judged and not found.hits:
        pointed = tiered.pointers(told_before=bool(found.skipped))
        found.pointers = _chains(store, [made[r] for r in pointed], found, MAX_POINTERS, shown)
    elif judged and 0 in tiered.close and 0 not in chained:
        # The ranking's first candidate, close on meaning, while the rules chained another:
        # pointed at beside the chains, so the hook tells what search would put first
        # (`python -m benchmarks adr`, calibration: reach 0.662 → 0.689 on a context's paragraph).
        chained_ids = {i for hit in found.hits for i in hit.shown()}
        if made[0].memory.id not in chained_ids:
            found.pointers = _chains(store, [made[0]], found, 1, shown)
    return found


def _evolved(store: Store, memories: list[MemoryRecord]) -> set[str]:
    """Which of ``memories`` have a chain that tells more than their line
    (:attr:`Evidence.evolved`): replaced, failed or partly failed, or one that replaced
    another decision (their links read in one query)."""
    replacing = {
        ln.from_id
        for ln in store.links.among([m.id for m in memories], direction="out")
        if ln.relationship == "supersedes"
    }
    return {
        m.id
        for m in memories
        if m.status == "superseded"
        or m.outcome_status in ("FAILED", "PARTIAL")
        or m.id in replacing
    }


def _chains(
    store: Store, hits: list[Hit], found: Recall, most: int, shown: Seen | None
) -> list[Hit]:
    """One entry per evolution chain (at most ``most``), with what stands now and what it
    replaced; one the session already holds is listed in ``found.skipped`` instead."""
    kept: list[Hit] = []
    seen: set[str] = set()
    for hit in hits:
        head = current_of(store, hit.memory.id) if hit.memory.status == "superseded" else hit.memory
        if hit.memory.id in seen or (head.id in seen and head.id != hit.memory.id):
            continue
        hit.current = head
        # The newest decision it superseded: the evolution behind the answer.
        replaced = next(iter(predecessors(store, head)), None)
        hit.replaced = None if replaced is None or replaced.id == hit.memory.id else replaced
        seen.update(hit.shown())
        if shown is not None and shown.holds(hit.shown()):
            found.skipped.append(hit.memory.id)
            continue
        kept.append(hit)
        if len(kept) >= most:
            break
    return kept
