"""Link suggestions: candidates from search and the seeds' rules, judged, stored as pending.

A suggestion is never a link. :func:`suggest_for` finds candidates for one memory — hybrid
search over its project, plus three rules from the seeds (same topic within a week, same topic
within 15 minutes, cosine ≥ 0.85 among the 5 nearest) — and has each pair judged: by the local
model when there is one (a relationship and a one-sentence reason, or ``none``), else by the
rule that fired, whose reason states the facts behind it. Pairs found by search alone are only
proposed when the model judged them. :func:`accept` turns a pending suggestion into a link (the
reason kept, ``created_by`` saying whose words it is); :func:`reject` records the verdict.

Links always go from the newer memory to the older one ("sessions addresses_failure_of JWT").
No transaction is held while the model judges, so a slow judge never holds up the store; each
verdict is written in its own transaction, after checking both memories still exist.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ..embeddings.protocol import EmbeddingModel
from ..errors import ValidationError
from ..relationships import normalise
from ..schema.assist import LinkJudgement
from ..services.learning.living import note
from ..services.render import clip
from ..services.search import vector_index
from ..services.search.retrieval import retrieve
from ..storage import LinkRecord, MemoryRecord, Store, SuggestionRecord
from ..storage.text import embedding_text
from .draft import grounded
from .runtime import Model, Prompt

log = logging.getLogger("mama.assist")

WEEK_MS = 7 * 24 * 3600 * 1000
QUARTER_HOUR_MS = 15 * 60 * 1000
SIMILAR = 0.85  # the seeds' bar for "similar": cosine among the 5 nearest
SEARCH_DEPTH = 8
MAX_PAIRS = 5
JUDGE_TOKENS = 96
SUGGESTED_TYPES = ("decision", "insight")  # checkpoints link through implements= instead

INSTRUCTIONS = (
    "Each record says whether a NEWER memory of a software project should link to an OLDER "
    "one. relationship is one of: supersedes (the newer replaces the older), refines (improves "
    "it), implements (carries it out), addresses_failure_of (fixes what failed), motivated_by, "
    "depends_on, challenges, or none. reason is one sentence with the concrete fact that links "
    "them, taken from the two memories; empty when none."
)
EXAMPLES = [
    (
        "OLDER: [decision] Cache product pages with a 60 s TTL. Outcome FAILED: stale prices "
        "were shown for up to 60 s.\nNEWER: [decision] Write-through cache for the catalog, "
        "because prices must change at once.",
        '{"relationship": "addresses_failure_of", "reason": "Write-through removes the 60 s '
        'of stale prices the TTL cache showed"}',
    ),
    (
        "OLDER: [decision] Lint with ruff in CI.\nNEWER: [insight] The payment webhook retries "
        "three times with backoff.",
        '{"relationship": "none", "reason": ""}',
    ),
]


@dataclass
class Candidate:
    """An earlier (or later) memory worth judging against the one being linked."""

    other: MemoryRecord
    sources: list[str] = field(default_factory=list)  # search, same_topic_week, ...
    score: float = 0.0


def candidates(
    store: Store,
    memory: MemoryRecord,
    *,
    embedder: EmbeddingModel | None = None,
    limit: int = MAX_PAIRS,
) -> list[Candidate]:
    """Memories of the same project worth judging against ``memory``, best first.

    Leaves out the memory itself, rolling checkpoints, memories already linked to it either
    way, and pairs judged before (whatever the verdict).
    """
    found: dict[str, Candidate] = {}

    def add(other: MemoryRecord, source: str, score: float) -> None:
        entry = found.setdefault(other.id, Candidate(other))
        if source not in entry.sources:
            entry.sources.append(source)
        entry.score = max(entry.score, score)

    text = embedding_text(memory.topic, memory.content, memory.reasoning)
    vector = None
    if embedder is not None and vector_index.has_vectors(store):
        vector = embedder.embed([text])[0]  # once: for the search and for the similarity rule
    for hit in retrieve(
        store, text, embedder=embedder, project=memory.project, k=SEARCH_DEPTH, query_vector=vector
    ):
        add(hit.memory, "search", hit.relevance)
    if memory.topic and memory.topic != "checkpoint":
        for other in store.memories.by_topic(memory.topic, project=memory.project):
            gap = abs(memory.created_at - other.created_at)
            if gap <= QUARTER_HOUR_MS:
                add(other, "same_topic_15min", 0.9)
            elif gap <= WEEK_MS:
                add(other, "same_topic_week", 0.8)
    if vector is not None:
        # The 5 nearest besides the memory itself (which may already have its vector).
        nearest = vector_index.knn(store, vector, 6, project=memory.project)
        near = {seq: 1.0 - d for seq, d in nearest if 1.0 - d >= SIMILAR}
        for seq, other in store.memories.get_by_seq(near).items():
            add(other, "similar", near[seq])
    linked = {ln.to_id for ln in store.links.among([memory.id], direction="out")}
    linked |= {ln.from_id for ln in store.links.among([memory.id], direction="in")}
    judged = {b if a == memory.id else a for a, b in store.suggestions.judged_pairs([memory.id])}
    # An outcome is recorded as an insight linked outcome_of its decision: an event, not a
    # memory to link to again.
    events = {
        ln.from_id
        for ln in store.links.among(found, direction="out")
        if ln.relationship == "outcome_of"
    }
    kept = [
        c
        for c in found.values()
        if c.other.id not in {memory.id, *linked, *judged, *events}
        and c.other.type in SUGGESTED_TYPES
        and not c.other.rolling
    ]
    # Rules first (they are the seeds' evidence of a relation), then search relevance.
    kept.sort(key=lambda c: (-sum(s != "search" for s in c.sources), -c.score))
    return kept[:limit]


@dataclass
class Verdict:
    """A judged pair: the relationship (``none`` for no link) and why, and who judged."""

    relationship: str
    reason: str
    judged_by: str  # llm | rules
    note: str = ""


def judge(
    newer: MemoryRecord,
    older: MemoryRecord,
    sources: list[str],
    *,
    assistant: Model | None = None,
) -> Verdict | None:
    """Judge one pair; None when nobody could (no model and no rule behind the pair)."""
    note = ""
    if assistant is not None:
        body = pair_text(newer, older)
        result = assistant.generate(
            Prompt(INSTRUCTIONS, EXAMPLES, body), LinkJudgement, max_tokens=JUDGE_TOKENS
        )
        verdict = result.value
        if verdict is not None and verdict.relationship != "none":
            if grounded(verdict.reason, body):
                return Verdict(verdict.relationship, verdict.reason, "llm")
            note = "model verdict dropped: its reason is not in either memory"
        elif verdict is not None:
            # The same topic is Claude's own statement that two decisions answer one question
            # (it reuses the topic on purpose): the rule's proposal stands, still pending.
            if not ({"same_topic_15min", "same_topic_week"} & set(sources)):
                return Verdict("none", verdict.reason, "llm")
            note = "model saw no link; the same-topic rule proposes one anyway"
        else:
            note = f"model {result.outcome}: {result.detail}"
    rule = _rule_verdict(newer, older, sources)
    if rule is not None:
        rule.note = note
    return rule


def suggest_for(
    store: Store,
    memory_id: str,
    *,
    assistant: Model | None = None,
    embedder: EmbeddingModel | None = None,
    limit: int = MAX_PAIRS,
) -> list[SuggestionRecord]:
    """Find, judge and store suggestions for one memory; return the new pending ones."""
    memory = store.memories.get(memory_id)
    if memory is None or memory.type not in SUGGESTED_TYPES or memory.rolling:
        return []
    pairs = candidates(store, memory, embedder=embedder, limit=limit)
    made: list[SuggestionRecord] = []
    for cand in pairs:
        newer, older = _ordered(memory, cand.other)
        verdict = judge(newer, older, cand.sources, assistant=assistant)
        if verdict is None:
            continue
        if verdict.note:
            log.info("suggestion %s -> %s: %s", newer.id, older.id, verdict.note)
        status = "no_link" if verdict.relationship == "none" else "pending"
        with store.transaction():
            if store.memories.get(newer.id) is None or store.memories.get(older.id) is None:
                continue  # deleted while the model was thinking
            record = store.suggestions.add(
                memory.project,
                newer.id,
                older.id,
                verdict.relationship,
                verdict.reason,
                judged_by=verdict.judged_by,
                sources=cand.sources,
                score=cand.score,
                status=status,
            )
        if record is not None and record.status == "pending":
            made.append(record)
    return made


def accept(
    store: Store,
    suggestion_id: int,
    *,
    decided_by: str,
    relationship: str | None = None,
    reason: str | None = None,
) -> tuple[SuggestionRecord, LinkRecord]:
    """Turn a pending suggestion into a link; return the verdict and the link.

    The link keeps the suggestion's relationship and reason unless new ones are given; its
    ``created_by`` is ``llm`` for the model's words, ``system`` for a rule's, ``user`` for
    edited ones. Raises NotFoundError or ValidationError (e.g. already decided, or the link
    would make a supersede cycle); nothing is written then.
    """
    with store.transaction():
        current = store.suggestions.require(suggestion_id)
        if current.status != "pending":
            raise ValidationError([f"suggestion #{suggestion_id} was already {current.status}"])
        edited = bool(
            (relationship and normalise(relationship) != current.relationship)
            or (reason and reason.strip() != current.reason)
        )
        author = "user" if edited else ("llm" if current.judged_by == "llm" else "system")
        link, _ = store.links.add(
            current.from_id,
            current.to_id,
            relationship or current.relationship,
            (reason or current.reason).strip(),
            created_by=author,
            context=f"accepted suggestion #{suggestion_id} ({', '.join(current.sources)})",
        )
        decided = store.suggestions.decide(
            suggestion_id, "accepted", decided_by=decided_by, link_id=link.id
        )
        note(store, [link])  # the older memory gains a dated note that the newer builds on it
    return decided, link


def reject(store: Store, suggestion_id: int, *, decided_by: str) -> SuggestionRecord:
    """Record that a pending suggestion is not a link (it is never proposed again)."""
    with store.transaction():
        current = store.suggestions.require(suggestion_id)
        if current.status != "pending":
            raise ValidationError([f"suggestion #{suggestion_id} was already {current.status}"])
        return store.suggestions.decide(suggestion_id, "rejected", decided_by=decided_by)


def _ordered(a: MemoryRecord, b: MemoryRecord) -> tuple[MemoryRecord, MemoryRecord]:
    """(newer, older): links point from the later memory to the earlier one."""
    return (a, b) if (a.created_at, a.seq) >= (b.created_at, b.seq) else (b, a)


def pair_text(newer: MemoryRecord, older: MemoryRecord) -> str:
    """The pair as the model is shown it (and as its reason is grounded against)."""
    return f"OLDER: {_describe(older)}\nNEWER: {_describe(newer)}"


def _describe(m: MemoryRecord) -> str:
    text = f"[{m.type}] {m.content}"
    primary = str(m.reasoning.get("primary") or "")
    if primary:
        text += f", because {primary}"
    if m.outcome_status not in ("PENDING", "SUPERSEDED"):
        details = str(m.outcome.get("details") or "")
        text += f". Outcome {m.outcome_status}" + (f": {details}" if details else "")
    return clip(text, 600)


def _rule_verdict(newer: MemoryRecord, older: MemoryRecord, sources: list[str]) -> Verdict | None:
    """What the rules alone can propose, with a reason made of the facts that fired them."""
    days = (newer.created_at - older.created_at) / 86_400_000
    minutes = round(days * 24 * 60)
    gap = (
        "minutes"
        if minutes < 2
        else f"{minutes} minutes"
        if days < 1 / 24
        else (f"{days * 24:.0f} hours" if days < 1 else f"{days:.0f} days")
    )
    same_topic = {"same_topic_15min", "same_topic_week"} & set(sources)
    if same_topic and older.status == "superseded":
        return None  # its successor carries the story on; a rule has nothing to add
    if same_topic and older.outcome_status == "FAILED":
        details = str(older.outcome.get("details") or "it failed")
        return Verdict(
            "addresses_failure_of",
            f"'{clip(older.content, 80)}' FAILED ({clip(details, 120)}), and "
            f"'{clip(newer.content, 80)}' was decided on the same topic "
            f"'{newer.topic}' {gap} later",
            "rules",
        )
    if same_topic and newer.type == older.type == "decision":
        return Verdict(
            "refines",
            f"Both decide '{newer.topic}', {gap} apart: '{clip(older.content, 80)}' "
            f"then '{clip(newer.content, 80)}'",
            "rules",
        )
    if same_topic:
        return Verdict(
            "relates_to",
            f"Both concern '{newer.topic}', {gap} apart: the {older.type} "
            f"'{clip(older.content, 80)}' and the {newer.type} "
            f"'{clip(newer.content, 80)}'",
            "rules",
        )
    if "similar" in sources:
        return Verdict(
            "relates_to",
            f"Nearly the same subject (cosine ≥ {SIMILAR}): "
            f"'{clip(older.content, 80)}' and '{clip(newer.content, 80)}'",
            "rules",
        )
    return None
