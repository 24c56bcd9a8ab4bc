"""What the search tools answer: the ranked memories, then the chain of how each came to be.

Graph expansion: a superseded hit brings the decision that replaced it, ranked right above it;
decisions bring their evolution chain and their implementation/outcome neighbours. What is
no longer news is left out (``services/story/freshness.py``): an outcome event gives way to the
memory it judges, a session's checkpoints collapse into one entry, next steps a later memory
says were done are not "remaining". The answer is a story to read (``context_summary.md.j2``:
the chains, what stands now, lessons, work per session, what is unresolved, what remains)
fenced as data, within :data:`ANSWER_TOKENS` tokens: the least relevant results go first,
never a chain's current decision.

Read-only except for usage counters (``record_usage``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from ...embeddings.protocol import EmbeddingModel
from ...errors import StoreDamaged, StoreUnwritable
from ...fence import fenced
from ...storage import MemoryRecord, Store
from ...storage.link_state import LinkState
from ...text import estimate_tokens
from ..learning.living import told
from ..learning.verify import check
from ..render import render
from ..saving.enrichment import missing, offer
from ..saving.scopes import inherited
from ..search import vector_index
from ..search.options import DEFAULT, Options
from ..search.retrieval import MIN_CONFIDENCE, RETRIEVERS, Scored, retrieve
from . import checked, results
from .freshness import (
    distinct,
    idle,
    one_per_session,
    open_steps,
    outcomes_on_their_memory,
    settle,
    unstated,
)
from .records import OpenStep
from .results import AnswerItem, Chain
from .trust import mark_trust

WORK_DEPTH = 8  # newest checkpoints looked through for the one that carries work
ANSWER_TOKENS = 600  # the default answer's text, fence and header included (estimate_tokens)
# How to correct or remove what an answer told, once an answer, after the fence (MAMA's word,
# not memory's); a verify line already names `mama verify ID`.
CORRECT = "(update_memory/forget_memory fix or remove one by id.)"


@dataclass(frozen=True)
class Status:
    """What stands now among the results told (current decisions) and what remains open."""

    current: list[AnswerItem]
    next_steps: list[OpenStep]

    def as_dict(self) -> dict[str, Any]:
        return {
            "current": [{"id": r.id, "topic": r.topic, "content": r.content} for r in self.current],
            "next_steps": [s.as_dict() for s in self.next_steps],
        }


@dataclass
class ContextResult:
    """What ``search_by_context`` answers: results, chains, current state, a story to read.

    ``primary_results`` are the results the answer tells, within its token budget;
    ``left_out`` the ids of less relevant ones it had to leave out; ``text`` the answer a
    model reads (the story and the ranked ids, fenced as data).
    """

    query: str
    primary_results: list[AnswerItem]
    evolution: list[Chain]
    status: Status
    learned_patterns: list[str]
    narrative_summary: str
    retrievers: list[str] = field(default_factory=list)
    text: str = ""
    left_out: list[str] = field(default_factory=list)
    budget: int | None = None
    ranked: list[str] = field(default_factory=list)

    def ids(self) -> list[str]:
        """Ids of every ranked result in rank order, those the budget left out included."""
        return self.ranked or [r.id for r in self.primary_results]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (structured content of the MCP tool)."""
        return {
            "query": self.query,
            "primary_results": [r.as_dict() for r in self.primary_results],
            "evolution": [c.as_dict() for c in self.evolution],
            "status": self.status.as_dict(),
            "learned_patterns": self.learned_patterns,
            "narrative_summary": self.narrative_summary,
            "retrievers": self.retrievers,
            "left_out": self.left_out,
            "token_budget": self.budget,
        }


@dataclass(frozen=True)
class _Told:
    """An answer telling some of the results: the story, the fenced text and what it holds."""

    told: list[AnswerItem]
    story: str
    text: str
    status: Status
    learned: list[str]
    chains: list[Chain]


def search_by_context(
    store: Store,
    query: str,
    *,
    embedder: EmbeddingModel | None = None,
    project: str | None = None,
    k: int = 10,
    include_evolution: bool = True,
    include_evidence: bool = True,
    include_tensions: bool = True,
    min_confidence: float = MIN_CONFIDENCE,
    retrievers: Sequence[str] = RETRIEVERS,
    record_usage: bool = True,
    as_of: int | None = None,
    tags: Sequence[str] = (),
    options: Options = DEFAULT,
    budget: int | None = ANSWER_TOKENS,
    own_session: str = "",
) -> ContextResult:
    """Hybrid search plus graph expansion; every decision is labelled current or superseded.

    ``project=None`` searches every project; a project's search reads the global scope it
    inherits too (:func:`~mama_plugin.services.saving.scopes.inherited`). A superseded hit is always
    preceded by the decision that replaced it. ``budget`` bounds the answer's text in tokens
    (None: no bound); ``record_usage`` counts a use of each result told. ``own_session``: the
    Claude Code session asking; its own rolling checkpoint is left out (it repeats this session's
    prompts, so it matched every search the session made, and the session knows its work).
    """
    ask = partial(
        retrieve,
        store,
        query,
        embedder=embedder,
        project=inherited(store, project),
        retrievers=retrievers,
        min_confidence=min_confidence,
        as_of=as_of,
        tags=tags,
        options=options,
    )
    hits, own = _news(ask, k, own_session)
    updated = {h.memory.id: h.updated_by for h in hits if h.updated_by}
    ranked = outcomes_on_their_memory(store, [(h.memory, h.score) for h in hits])
    entries = one_per_session(results.with_successors(store, ranked, k))
    used = ["keyword"] if "keyword" in retrievers else []
    if "vector" in retrievers and embedder is not None and vector_index.has_vectors(store):
        used.append("vector")
    primary = []
    for m, score, collapsed in entries:
        item = results.present(store, m, score, include_evidence, include_tensions)
        item.collapsed = collapsed or None
        item.updated_by = updated.get(m.id)
        primary.append(item)
    records = {m.id: m for m, _, _ in entries}
    # Checked against the code: a result whose cited file changed since says so (and how to
    # clear it); a search is an explicit call, so git is asked how the change came.
    for memory_id, changes in check(store, list(records.values()), git=True).items():
        item = next(r for r in primary if r.id == memory_id)
        item.verify = [checked.line(changes)]
    # Told with how far it can be trusted: old for its kind, or many memories rest on it.
    mark_trust(store, primary, list(records.values()))
    # What happened around it since it was saved: what was built on it, what it builds on
    # that failed (its latest notes, one line each); a memory built on it that the answer
    # tells too is not said twice. And the layers an imported v1.0 decision lacks.
    notes = told(store, [r.id for r in primary], known=[r.id for r in primary])
    for item in primary:
        item.notes = notes.get(item.id)
        item.enrich = list(missing(records[item.id])) or None
    every_chain, along = (
        results.chains(store, list(records.values())) if include_evolution else ([], {})
    )
    live = [r.id for r in primary if r.status == "current"]
    steps = distinct(open_steps(store, [records[i] for i in live]))
    settle(store, primary, [records[i] for i in live])
    keep = {c.current_id for c in every_chain}  # never cut a chain's current decision
    newest = _newest_work(store, [m for m in records.values() if m.type == "checkpoint"])
    cuttable = [r.id for r in primary if r.id not in keep]

    composed: dict[int, _Told] = {}

    def compose(n: int) -> _Told:
        """The answer telling the chains' heads and the ``n`` most relevant other results."""
        if n not in composed:
            told = [r for r in primary if r.id in keep or r.id in cuttable[:n]]
            composed[n] = _compose(
                query,
                told,
                records,
                every_chain,
                along,
                steps,
                len(primary),
                newest,
                own,
                store.home,
            )
        return composed[n]

    answer = compose(len(cuttable))
    size = estimate_tokens(answer.text)
    if budget is not None and size > budget:
        # The most results that fit (text grows with every result told), looked for from
        # where the whole answer's size says it should be.
        n = _most_within(
            lambda n: estimate_tokens(compose(n).text) <= budget,
            len(cuttable) - 1,
            len(cuttable) * budget // size,
        )
        answer = compose(n)
    told_ids = {r.id for r in answer.told}
    if record_usage and told_ids:
        # Bookkeeping: never fail a search on a busy, read-only, full or damaged store.
        with contextlib.suppress(StoreUnwritable, StoreDamaged):
            store.memories.touch(r.id for r in answer.told)
            # A link whose two ends were told together was used: its strength is back.
            LinkState(store).reinforce(r.id for r in answer.told)
    return ContextResult(
        query,
        answer.told,
        answer.chains,
        answer.status,
        answer.learned,
        answer.story,
        used,
        answer.text,
        [r.id for r in primary if r.id not in told_ids],
        budget,
        [r.id for r in primary],
    )


def _news(ask: Callable[..., list[Scored]], k: int, own_session: str) -> tuple[list[Scored], str]:
    """The ``k`` best hits ``ask(k=…)`` finds that are news to the asker, and the id of the
    asking session's own rolling checkpoint when it matched ("" when not).

    Left out without taking a place among the k: that own checkpoint (it repeats this
    session's prompts, so it matches every search the session makes), and the rolling
    checkpoints of sessions that did no work (:func:`.freshness.idle`: "Working on: hello —
    last: Hi.", a question asked and answered from memory; a small store returns every
    memory). While they leave fewer than k
    and retrieval had more to give, it is asked again (twice at most) for twice as many, and
    as many more as were left out; a search whose k best hold none of them asks once.
    """
    asked, hits, mine = k + (1 if own_session else 0), [], []
    for _ in range(3):
        found = ask(k=asked)
        mine = [h.memory.id for h in found if _own(h.memory, own_session)]
        hits = [h for h in found if h.memory.id not in mine and not idle(h.memory)]
        if len(hits) >= k or len(found) < asked:
            break
        asked = 2 * asked + (asked - len(hits))
    return hits[:k], mine[0] if mine else ""


def _most_within(fits: Callable[[int], bool], high: int, guess: int) -> int:
    """The largest ``n`` in 1..``high`` for which ``fits(n)`` (0 when none is), for a ``fits``
    that holds up to some n and not above it; asked first at ``guess``, then step by step."""
    n = max(0, min(guess, high))
    if n > 0 and not fits(n):
        n -= 1
        while n > 0 and not fits(n):
            n -= 1
        return n
    while n < high and fits(n + 1):
        n += 1
    return n


def _compose(
    query: str,
    told: list[AnswerItem],
    records: dict[str, MemoryRecord],
    every_chain: list[Chain],
    along: dict[str, MemoryRecord],
    steps: list[OpenStep],
    ranked: int,
    newest: MemoryRecord | None,
    own: str,
    home: Path,
) -> _Told:
    """The story and the fenced text for the results ``told`` (of ``ranked`` results);
    ``along`` holds the chains' steps by id; ``newest`` is the project's newest checkpoint
    with work, named when it is not told; ``own`` the asking session's rolling checkpoint
    when it matched and was left out (named when nothing else matched); ``home`` the MAMA
    home whose templates may override the shipped ones."""
    ids = {r.id for r in told}
    chains = [c for c in every_chain if any(s.id in ids for s in c.steps)]
    on_chains = {s.id for c in chains for s in c.steps}
    current = [r for r in told if r.status == "current" and r.type == "decision"]
    work = sorted(
        (r for r in told if r.type == "checkpoint"),
        key=lambda r: records[r.id].updated_at,
        reverse=True,
    )
    told_by = [records[r.id] for r in current] + [
        along[s.id] for c in chains for s in c.steps if s.id in along
    ]
    status = Status(current, unstated([s for s in steps if s.holder in ids], told_by))
    learned = results.learned([records[i] for i in ids], chains, along)
    newer = newest if work and newest is not None and newest.id not in ids else None
    auto = {r.id for r in work if records[r.id].rolling} | (
        {newer.id} if newer is not None and newer.rolling else set()
    )
    concerned = current + ([_own_concerns(work[0])] if work and newer is None else [])
    story = render(
        "context_summary.md.j2",
        home,
        query=query,
        results=told,
        chains=chains,
        status=status,
        learned=learned,
        stands=[r for r in current if r.role == "advice"],
        lessons=[r for r in told if r.role == "lesson" and r.id not in on_chains],
        also=[r for r in told if r.type in ("insight", "context") and r.role == "advice"],
        work=work,
        auto=auto,
        newer=newer,
        concerned=concerned,
        own=own,
    ).strip()
    lines = [f"{i}. {r.id} ({r.type}) {r.mark}, {r.role}" for i, r in enumerate(told, 1)]
    if len(told) < ranked:
        lines.append(
            f"({ranked - len(told)} less relevant results left out to keep this "
            "answer short: ask a narrower question to see them.)"
        )
    body = story + ("\n\nRanked:\n" + "\n".join(lines) if told else "")
    text = fenced(body) + (f"\n{CORRECT}" if told else "")
    enrich = offer(records[r.id] for r in told)
    text += f"\n{enrich}" if enrich else ""
    return _Told(told, story, text, status, learned, chains)


def _own(m: MemoryRecord, session: str) -> bool:
    """Whether ``m`` is the rolling checkpoint of the asking ``session`` ("" : none asks)."""
    return bool(session) and m.rolling and m.session_id == session


def _newest_work(store: Store, checkpoints: list[MemoryRecord]) -> MemoryRecord | None:
    """The newest checkpoint that carries work in the project of the newest ``checkpoints``.

    An automatic checkpoint of a session that did nothing (it only searched memory, say) is
    not where the work stands.
    """
    if not checkpoints:
        return None
    project = max(checkpoints, key=lambda m: (m.updated_at, m.seq)).project
    newest = store.memories.latest(project=project, type="checkpoint", limit=WORK_DEPTH)
    return next((m for m in newest if not idle(m)), None)


def _own_concerns(r: AnswerItem) -> AnswerItem:
    """A checkpoint's result without the concerns its work line already tells."""
    tension = r.tension or {}
    concerns = [c for c in tension.get("concerns") or [] if str(c)[:80] not in r.content]
    return replace(r, tension={**tension, "concerns": concerns})
