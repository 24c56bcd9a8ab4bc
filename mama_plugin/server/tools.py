"""The MCP tools that save, load and search memories, each declared beside its handler.

A handler's ``@tool`` (:mod:`.declare`) is the one place its name, description, input model,
hints and exposure are written. The hidden tools Claude Code's hooks call are not here: they
are :mod:`.hook_tools`', run on their own lanes (:mod:`.hook_lane`) without pydantic.

Handlers are plain functions of a :class:`Env` and a validated pydantic model; they return an
:class:`Answer` (compact text a model reads once, plus structured data). Errors are raised as
:class:`~mama_plugin.errors.MamaError` and turned into tool errors by the server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import NotFoundError
from ..fence import fenced
from ..schema import (
    CheckpointInput,
    DecisionInput,
    InsightInput,
    LoadCheckpointInput,
    LoadContextInput,
    OutcomeInput,
    SearchByContextInput,
    SearchByTopicInput,
    SearchRecentInput,
    SupersedeInput,
)
from ..services.evolution import current_of
from ..services.graph.depths import TOPIC_DEPTH
from ..services.graph.traverse import traverse
from ..services.graph.upkeep import used_together
from ..services.hygiene.conflicts import conflicts_of
from ..services.learning.living import told
from ..services.learning.premises import premises_of
from ..services.learning.teaching import next_move
from ..services.learning.views import moves_text
from ..services.render import render
from ..services.saving.checks import decide, learn
from ..services.saving.enrichment import missing, offer
from ..services.saving.memories import SaveResult, save_checkpoint
from ..services.saving.outcomes import record_outcome_event
from ..services.search.options import options_for
from ..services.story import checked
from ..services.story.answers import CORRECT, search_by_context
from ..services.story.briefing import render_brief, resumed
from ..services.story.browsing import search_by_topic, search_recent
from ..services.story.fitting import left_out
from ..services.story.resume import ResumePoint, resume_point
from ..storage import MemoryRecord, Store
from ..storage.link_tags import LinkTags
from ..transcript.context import start_told
from .assist_tools import do_draft_decision
from .base import Answer, Env
from .declare import CORE_READS, CORE_WRITES, WRITES, Hints, tool
from .graph_tools import relationship_hints

# Every tool name obeys the Anthropic API pattern even behind Claude Code's plugin prefix.
NAME_PATTERN = r"^[a-zA-Z0-9_-]{1,64}$"
CLAUDE_PREFIX = "mcp__plugin_mama_mama__"
S = TypeVar("S", DecisionInput, CheckpointInput, InsightInput, SupersedeInput)


def _saved(result: SaveResult, env: Env | None = None, *, store: Store | None = None) -> Answer:
    """A save's answer; ``env`` when the save asks for its vector, links and hints, else the
    ``store`` its links' tags are read from."""
    m = result.memory
    store = env.store if env is not None else store
    if env is not None:
        env.session.embed_soon(env.project)  # its vector within moments, not at the next poll
    if env is not None and env.config.settings.link_suggestions:
        env.session.suggest_later(m.id)  # judged in the background
    hints = relationship_hints(env, (ln.relationship for ln in result.links)) if env else []
    tags = LinkTags(store).of(ln.id for ln in result.links) if store and result.links else {}
    extra = {"relationship_hints": hints} if hints else {}
    return Answer(
        "\n".join([result.summary(), *(h["text"] for h in hints)]),
        extra
        | {
            "id": m.id,
            "type": m.type,
            "topic": m.topic,
            "superseded": result.superseded,
            "links": [
                {"to_id": ln.to_id, "relationship": ln.relationship, "category": ln.link_category}
                | ({"tags": list(tags[ln.id])} if ln.id in tags else {})
                for ln in result.links
            ],
            "masked_secrets": result.redactions.counts,
            "questions": [q.as_dict() for q in result.questions],
            "duplicate_of": result.duplicate.as_dict() if result.duplicate else None,
        },
    )


def _list_item(m: MemoryRecord, store: Store | None = None) -> dict[str, Any]:
    """The few fields a list shows; a superseded memory names what replaced it."""
    extra: dict[str, Any] = {}
    if store is not None and m.status == "superseded":
        head = current_of(store, m.id)
        extra = {"current_id": head.id, "current_content": head.content}
    return extra | {
        **m.fields("id", "type", "topic", "content", "status"),
        "outcome": m.outcome_status,
        "created_at": m.created_at,
    }


def _in_session(env: Env, args: S) -> S:
    """Stamp a save with the Claude Code session it happened in (learned from the hooks)."""
    if env.session.id and not args.session_id:
        return args.model_copy(update={"session_id": env.session.id})
    return args


def _saved_in_session(env: Env, args: S, save: Callable[..., SaveResult]) -> Answer:
    """Save a decision or an insight stamped with its session; answered with its vector,
    links and hints (:func:`_saved`)."""
    return _saved(save(env.store, env.project, _in_session(env, args), embedder=env.embedder), env)


@tool(
    "save_decision",
    "Save a decision with its narrative: WHAT was decided, WHY (reasoning.primary, with a "
    "concrete fact), evidence, alternatives, unresolved tension, next steps. Use "
    "supersedes=<id> when it replaces an earlier decision. draft=true saves nothing and "
    "returns a narrative drafted from this session to review first.",
    CORE_WRITES,
    drafted=do_draft_decision,
)
def do_save_decision(env: Env, args: DecisionInput) -> Answer:
    return _saved_in_session(env, args, decide)


@tool(
    "save_checkpoint",
    "Save where the work stands so the next session carries on from that very point: the "
    "state as it was left (the edit or command in progress, what the code does now and what "
    "it was being changed to), what was done and remains, the next step with its context, "
    "open files, unresolved tension, the evidence for what is confirmed; "
    "implements=[decision ids].",
    CORE_WRITES,
)
def do_save_checkpoint(env: Env, args: CheckpointInput) -> Answer:
    saved = save_checkpoint(env.store, env.project, _in_session(env, args))
    return _saved(saved, store=env.store)


@tool(
    "save_insight",
    "Save a quick lesson worth keeping, with evidence and links.",
    CORE_WRITES,
)
def do_save_insight(env: Env, args: InsightInput) -> Answer:
    return _saved_in_session(env, args, learn)


@tool(
    "load_checkpoint",
    "Load the project's latest checkpoint (or a given one) with the decisions it touched and "
    "where each stands now.",
    CORE_READS,
)
def do_load_checkpoint(env: Env, args: LoadCheckpointInput) -> Answer:
    """The checkpoint to resume from (or the one asked for), told as the session start tells it."""
    if args.checkpoint_id:
        cp = env.store.memories.require(args.checkpoint_id)
        if cp.type != "checkpoint":
            raise NotFoundError(f"{cp.id} is a {cp.type}, not a checkpoint")
        point = ResumePoint(cp)
    else:
        # The one the session-start cliffhanger resumes from.
        point = resume_point(env.store, env.project)
        if point.checkpoint is None:
            return Answer("No checkpoint saved in this project yet.", {"checkpoint": None})
        cp = point.checkpoint
    facts = checked.flag(env.store, resumed(env.store, point), git=True)
    decisions = facts.decisions
    budget = 2 * env.config.settings.session_start_tokens
    text = render_brief(
        facts,
        env.config.home,
        budget=budget,
        short=False,
        template="checkpoint.md.j2",
        limits=(8, 5, 3, 2, 1),
    ).text
    # After a session start that told this checkpoint: only what the start left out.
    said = start_told(env.session.transcripts.get(env.session.id or ""), cp.id)
    rest = left_out(text, said) if said else text
    if said and not rest:
        told_all = f"The session start told all of {cp.id}: continue from its next step."
        return Answer(told_all, {"checkpoint": cp.as_dict(), "since": point.since})
    if said:
        text = f"The session start told the rest of {cp.id}; what it left out:\n{rest}"
    listed = [
        {**_list_item(d.m, env.store), "current_id": d.m.id, "replaced": [r.id for r in d.replaced]}
        for d in decisions
    ]
    data = {"checkpoint": cp.as_dict(), "decisions": listed, "since": point.since}
    return Answer(f"{text}\n{CORRECT}", data)


@tool(
    "load_context",
    "Tell one memory and its linked neighbourhood (depth 2, up to 5 asked): what led to it, "
    "what replaced it, what carried it out.",
    Hints(read_only=True, contexts=("resuming", "searching", "deciding")),
)
def do_load_context(env: Env, args: LoadContextInput) -> Answer:
    m = env.store.memories.require(args.memory_id)
    steps = traverse(env.store, m.id, max_depth=args.depth)
    found = env.store.memories.get_many(s.memory_id for s in steps)
    tags = LinkTags(env.store).of(s.link.id for s in steps)
    rows: list[dict[str, Any]] = [
        {"step": s, "m": found[s.memory_id], "tags": tags.get(s.link.id, ())}
        for s in steps
        if s.memory_id in found
    ]
    head = current_of(env.store, m.id) if m.status == "superseded" else m
    history = env.store.confidence.of(m.id)
    rests = [p.said() for p in premises_of(env.store, m)]
    conflicts = [c.said() for c in conflicts_of(env.store, m)]
    notes = told(env.store, [m.id]).get(m.id, [])
    used_together(env.store, [m.id, *(r["m"].id for r in rows)])  # told with both their ends
    text = render(
        "neighbourhood.md.j2",
        env.config.home,
        m=m,
        steps=rows,
        head=head,
        history=history,
        premises=rests,
        conflicts=conflicts,
        notes=notes,
    ).strip()
    data = {
        "memory": m.as_dict(),
        "current_id": head.id,
        "neighbours": [
            {
                **_list_item(r["m"], env.store),
                "depth": r["step"].depth,
                "relationship": r["step"].link.relationship,
                "reason": r["step"].link.reason,
                "confidence": round(r["step"].confidence, 4),
            }
            | ({"tags": list(r["tags"])} if r["tags"] else {})
            for r in rows
        ],
        "conflicts": conflicts,
        "notes": notes,
    }
    # Memory text, teammates' versions among it, is data to the model: fenced like searches.
    enrich = offer([m])
    data["enrich"] = list(missing(m))
    return Answer(fenced(text) + f"\n{CORRECT}" + (f"\n{enrich}" if enrich else ""), data)


@tool(
    "search_by_topic",
    "All memories of an exact topic, newest first, each marked current or superseded (the "
    "evolution chain), then those of other topics its evolution links reach (3 hops).",
    Hints(read_only=True, contexts=("searching", "deciding", "tracking")),
)
def do_search_by_topic(env: Env, args: SearchByTopicInput) -> Answer:
    rows = search_by_topic(
        env.store, args.topic, project=None if args.all_projects else env.project
    )
    if not rows:
        return Answer(
            f"No memory has the topic '{args.topic}'.", {"topic": args.topic, "chain": []}
        )
    lines = [f"'{args.topic}', newest first:"]
    header = f"Linked by evolution from other topics (up to {TOPIC_DEPTH} hops):"
    for r in rows:
        if r.linked_from and header not in lines:
            lines.append(header)
        via = f" ({r.via})" if r.via else ""
        extra = f" — {r.outcome}: {r.failure_reason}" if r.failure_reason else ""
        lines.append(f"- [{r.mark}] {r.id} ({r.type}){via} {r.content}{extra}")
    chain = [r.as_dict() for r in rows]
    return Answer(fenced("\n".join(lines)) + f"\n{CORRECT}", {"topic": args.topic, "chain": chain})


@tool(
    "search_by_context",
    "Ask memory a question in plain words. Returns the relevant memories marked current or "
    "superseded, their evolution (what failed, what replaced it), lessons, and what remains — "
    "as a short story plus structured results.",
    CORE_READS,
)
def do_search_by_context(env: Env, args: SearchByContextInput) -> Answer:
    result = search_by_context(
        env.store,
        args.query,
        embedder=env.embedder,
        project=None if args.all_projects else env.project,
        k=args.k,
        include_evolution=args.include_evolution,
        include_evidence=args.include_evidence,
        include_tensions=args.include_tensions,
        min_confidence=args.min_confidence,
        tags=args.tags,
        as_of=args.as_of_ms(),
        own_session=env.session.id,
        options=options_for(env.config.settings.ranking),
    )
    return Answer(result.text or result.narrative_summary, result.as_dict())


@tool(
    "search_recent",
    "The newest memories of this project, optionally of one type.",
    Hints(read_only=True, contexts=("resuming", "searching")),
)
def do_search_recent(env: Env, args: SearchRecentInput) -> Answer:
    rows = search_recent(env.store, args.n, type=args.type, project=env.project)
    if not rows:
        return Answer("No memories in this project yet.", {"memories": []})
    briefs = [_list_item(m, env.store) for m in rows]
    lines = []
    for b in briefs:
        mark = f"superseded → {b['current_id']}" if "current_id" in b else b["status"]
        lines.append(f"- {b['id']} ({b['type']}, {mark}) {b['content']}")
    return Answer(fenced("\n".join(lines)) + f"\n{CORRECT}", {"memories": briefs})


@tool(
    "evolve_outcome",
    "Record what happened to a decision: SUCCESS, PARTIAL or FAILED with details (numbers) "
    "and what was learned; VERIFIED when it still holds against the code (a 'verify:' line "
    "clears). It moves the decision's confidence and what rests on it; a replacement is "
    "save_decision with supersedes=<id>.",
    Hints(read_only=False, core=True, contexts=("tracking",)),
)
def do_outcome(env: Env, args: OutcomeInput) -> Answer:
    """Record the outcome on the memory and as an event linked to it (outcome_of)."""
    done = record_outcome_event(env.store, args)
    target, head = done.memory, done.current
    text = f"Recorded {args.outcome} for {target.id} ('{target.content[:120]}')"
    text += f"; event {done.event.id}."
    if head.id != target.id:
        text += f" It was already superseded by {head.id}: {head.content[:120]}."
    moved = moves_text(done.changes)
    text += f" {moved}" if moved else ""
    offer = next_move(target, head)
    text += f" {offer}" if offer else ""
    data = {
        "id": target.id,
        "outcome": args.outcome,
        "event_id": done.event.id,
        "current_id": head.id,
        "confidence": [
            {"id": c.memory_id, "from": c.from_value, "to": c.to_value, "why": c.why}
            for c in done.changes
        ],
    }
    return Answer(text, data)


@tool(
    "evolve_supersede",
    "Replace an earlier decision with a new one (supersedes is required); the old one is kept "
    "as history, marked superseded.",
    WRITES,
    drafted=do_draft_decision,
)
def do_supersede(env: Env, args: SupersedeInput) -> Answer:
    return _saved_in_session(env, args, decide)
