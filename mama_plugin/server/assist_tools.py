"""The tools the local model serves: drafting a narrative, proposing links, confirming them.

Drafting and judging may take seconds, so these handlers run in a worker thread
(:attr:`Tool.slow`), which has its own connection to the store. The model itself runs on the
server's model worker (``env.assistant``, :class:`~..assist.jobs.ModelJobs`): one job at a
time. A draft waits for it ``assist_draft_wait_s`` at most from the call, then answers with
the extractor's draft; the model's job goes on, and the next draft of the same decision gets
its items.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from ..assist import suggest
from ..assist.draft import Reading, ask, compose, model_note, read
from ..assist.jobs import JobsClosed, ModelJobs
from ..assist.models import draft_layers, link_judge
from ..assist.runtime import Generation
from ..schema.assist import DraftedNarrative, DraftRequest, EvolveLinkInput, SuggestLinksInput
from ..services.render import clip
from ..services.saving.quality import reason_quality
from ..storage import Store, SuggestionRecord
from ..transcript import Digest
from .base import Answer, Env
from .declare import Hints, tool

# Running the local model, which may take seconds.
_MODEL_LINKS = Hints(read_only=False, slow=True, contexts=("linking",))


def do_draft_decision(env: Env, args: DraftRequest) -> Answer:
    """``save_decision(draft=true)``: a proposed narrative from this session; nothing saved.

    Answers within ``assist_draft_wait_s`` of the call (plus the extractor's milliseconds).
    """
    started = time.monotonic()
    path = args.transcript_path or env.session.transcripts.get(env.session.id, "")
    digest, waited = Digest(), 0.0
    if path:
        # The session's reader has digested the transcript turn by turn (the Stop hook): only
        # the lines added since are read, until this call is among them (Claude Code's pending
        # entries land first). A copy, as the hooks keep adding to it meanwhile.
        reader = env.session.reader(path)
        waited = reader.settle(env.call_id)
        digest = reader.copy()
    reading = read(args, digest)
    jobs: ModelJobs | None = env.assistant
    wait_s = float(env.config.settings.assist_draft_wait_s)
    layers, skipped = draft_layers(env.config)
    generation, pending = None, False
    if jobs is not None and reading.prompt is not None and layers:
        generation = _model_within(jobs, args, path, reading, started + wait_s)
        pending = generation is None
    note = (
        skipped
        if jobs is not None and not layers
        else f"still drafting after {wait_s:g} s (assist_draft_wait_s): this draft is the "
        "extractor's; ask for the draft of the same decision again for the model's items"
        if pending
        else model_note(jobs, generation)
    )
    draft = compose(args, reading, generation, note, layers=layers)
    data = draft.as_data() | {"model_pending": pending}
    return Answer(
        draft.as_text(env.config.home),
        data | {"transcript": path or None, "transcript_wait_s": round(waited, 3)},
    )


def _model_within(
    jobs: ModelJobs, args: DraftRequest, path: str, reading: Reading, until: float
) -> Generation[DraftedNarrative] | None:
    """The model's proposal if it is ready by monotonic ``until``, else None (its job goes on).

    The job is keyed by the decision, its context and the transcript, not by the conversation
    read: the next call's transcript has grown by this answer, and still gets this job.
    """
    assert reading.prompt is not None
    key = "\0".join(("draft", path, args.decision, args.context))
    try:
        job = jobs.submit(partial(ask, prompt=reading.prompt), key=key)
    except JobsClosed as exc:
        return Generation(None, "unavailable", str(exc))
    if not job.wait(max(0.0, until - time.monotonic())):
        return None
    return job.take()


@tool(
    "suggest_links",
    "Links to earlier memories that MAMA proposes (pending until someone accepts them). With "
    "memory_id: look for links to that memory now (may take seconds).",
    _MODEL_LINKS,
)
def do_suggest_links(env: Env, args: SuggestLinksInput) -> Answer:
    """List pending suggestions, or find (and judge) links for one memory now."""
    note = ""
    if args.memory_id is not None:
        env.store.memories.require(args.memory_id)
        made = suggest.suggest_for(
            env.store,
            args.memory_id,
            assistant=link_judge(env.config, env.assistant),
            embedder=env.embedder,
            limit=min(args.limit, suggest.MAX_PAIRS),
        )
        note = f"Judged candidates for {args.memory_id}: {len(made)} new suggestion(s).\n"
    with env.store.snapshot():
        pending = env.store.suggestions.of_project(
            env.project, memory_id=args.memory_id, limit=args.limit
        )
        rows = [_row(env.store, s) for s in pending]
    if not rows:
        return Answer(note + "No pending link suggestions.", {"suggestions": []})
    lines = [note + "Pending link suggestions (accept or reject each with evolve_link):"]
    for r in rows:
        lines.append(
            f"#{r['id']} {r['from_id']} --{r['relationship']}--> {r['to_id']}: {r['reason']}\n"
            f"    newer: {clip(r['from_content'], 120)}\n    older: {clip(r['to_content'], 120)}\n"
            f"    (judged by {r['judged_by']}; found by {', '.join(r['sources'])})"
        )
    return Answer("\n".join(lines), {"suggestions": rows})


@tool(
    "evolve_link",
    "Accept a suggested link (it becomes a real link, optionally with your own relationship "
    "or reason) or reject it (never proposed again).",
    _MODEL_LINKS,
)
def do_evolve_link(env: Env, args: EvolveLinkInput) -> Answer:
    """Accept a suggestion (it becomes a link) or reject it (never proposed again)."""
    if args.verdict == "reject":
        record = suggest.reject(env.store, args.suggestion_id, decided_by="claude")
        return Answer(
            f"Rejected suggestion #{record.id}; it will not be proposed again.",
            {"suggestion": record.as_dict(), "link": None},
        )
    record, link = suggest.accept(
        env.store,
        args.suggestion_id,
        decided_by="claude",
        relationship=args.relationship,
        reason=args.reason,
    )
    env.session.brief_stale(env.project)
    text = (
        f"Linked {link.from_id} --{link.relationship}--> {link.to_id} "
        f"(link #{link.id}, reason by {link.created_by}): {link.reason}"
    )
    return Answer(text, {"suggestion": record.as_dict(), "link": link.as_dict()})


def _row(store: Store, s: SuggestionRecord) -> dict[str, Any]:
    found = store.memories.get_many([s.from_id, s.to_id])
    return s.as_dict() | {
        "from_content": found[s.from_id].content if s.from_id in found else "",
        "to_content": found[s.to_id].content if s.to_id in found else "",
        "reason_quality": reason_quality(s.reason),
    }
