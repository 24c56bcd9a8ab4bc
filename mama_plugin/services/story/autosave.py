"""The automatic checkpoint: one rolling checkpoint per session, upserted after every turn.

Claude Code's Stop hook fires after every assistant turn, so whenever a session ends its
latest state is already saved. The checkpoint is built without a model from what the session
visibly did (:mod:`mama_plugin.transcript`: files, commands, tasks, the user's requests) and
from Claude's last message. It never replaces a checkpoint Claude wrote itself: those are
separate memories, and the cliffhanger prefers the newest of either kind.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from ...storage import MemoryRecord, NewMemory, Store, now_ms
from ...text import next_step, pointed, remains, split, tension, unique
from ...transcript import Digest
from ..learning.verify import record as record_files
from .commands import (
    MAX_FAILURES,
    check_of,
    clip,
    confirmed,
    judged,
    passed,
    stopped_at,
    unresolved,
)
from .done import copied_from, copy_of
from .worklog import MAX_TEXT, WorkLog

TAG = "auto"
MAX_ITEMS = 8
_SEARCHES = frozenset(("search_by_context", "search_by_topic", "search_recent", "load_context"))


def checkpoint_turn(
    store: Store,
    project: str,
    *,
    session_id: str,
    digest: Digest,
    last_message: str = "",
    cwd: str = "",
    request: str = "",
) -> MemoryRecord | None:
    """Upsert this session's rolling checkpoint; return it, or None when nothing happened yet.

    ``request`` is the user's latest prompt as the prompt hook saw it, used when the
    transcript does not hold it yet. Writes nothing when the session has neither a request nor
    a reply, and leaves the row untouched (no new version, no re-embedding) when this turn
    changed nothing in it.
    """
    last_message = last_message.strip() or (digest.assistant_texts or [""])[-1]
    request = digest.last_request or request.strip()
    if not (request or last_message) or not session_id:
        return None
    decisions = store.memories.of_session(session_id, type="decision")
    saved, written = _upsert(
        store, project, session_id, digest, request, last_message, cwd, decisions
    )
    if written:
        # The files it cites and those its session changed, as they are now (outside its
        # transaction: reading files never holds the write lock).
        log = WorkLog.of(saved)
        record_files(store, saved, extra=[p for p, _ in log.changed or ()] if log else [])
    return saved


def _upsert(
    store: Store,
    project: str,
    session_id: str,
    digest: Digest,
    request: str,
    last_message: str,
    cwd: str,
    decisions: list[MemoryRecord],
) -> tuple[MemoryRecord, bool]:
    """The session's rolling checkpoint, inserted or updated; and whether it was written."""
    with store.transaction():
        existing = [
            (m, log)
            for m in store.memories.of_session(session_id, type="checkpoint")
            if (log := WorkLog.of(m)) is not None
        ]
        began = _work_so_far(existing[-1][1], clip(request, MAX_TEXT)) if existing else ("", 0)
        layers = layers_of(digest, request, last_message, cwd, decisions, began=began)
        if existing:
            old, log = existing[-1]
            moved = moved_on(digest, last_message)
            if log.work and not moved:
                # A quiet turn never erases the session's work; it only adds to it.
                layers = _kept(old, log, layers, echo=bool(digest.memory_tools(turn=True)))
            elif log.work and not digest.turn_work:
                # A turn that only said what comes next solved nothing: what was unresolved
                # before it still is, after what it says itself.
                said = layers["tension"].get("concerns") or []
                concerns = unique(said + (old.tension.get("concerns") or []))[:MAX_ITEMS]
                layers["tension"] = {**layers["tension"], "concerns": concerns}
            # When the work last moved on: a checkpoint Claude wrote after it says it all.
            stamp = now_ms() if moved else (log.moved_at or old.updated_at)
            fresh = WorkLog.read(layers["metadata"])
            layers["metadata"] = replace(fresh, moved_at=log.moved_at).metadata()  # as it was
            if all(getattr(old, k) == v for k, v in layers.items()):
                return old, False
            layers["metadata"] = replace(fresh, moved_at=stamp).metadata()
            return store.memories.update(old.id, expected_version=old.version, **layers)[0], True
        layers["metadata"] = replace(WorkLog.read(layers["metadata"]), moved_at=now_ms()).metadata()
        return store.memories.insert(
            NewMemory(
                type="checkpoint",
                project=project,
                topic="checkpoint",
                tags=[TAG],
                session_id=session_id,
                **layers,
            )
        )[0], True


def layers_of(
    digest: Digest,
    request: str,
    last: str,
    cwd: str,
    decisions: list[Any],
    *,
    began: tuple[str, int] = ("", 0),
) -> dict[str, Any]:
    """The checkpoint's layers for a session so far (no model: what it did and said last).

    ``began``: the session's first request that did work and how many did, this one included
    (its rolling checkpoint keeps them): "Working on: the first; then (n more) this one", so a
    long session's start names the work it began with, not only its latest request.

    Unresolved: the failed commands no later run of the same command made good (the newest
    four, newest first), the sentences of Claude's last message that state a failure, risk
    or gap, and the open concerns of this session's current decisions. The next steps, first
    the one to show: the explicit one ("Next: …"), a task in progress, a current decision's
    HIGH next step, a pending task. What remains ("Remaining: …") is never a next step.
    ``decisions`` are memory records (or anything with ``id``, ``status``, ``topic``,
    ``tension`` and ``continuity``), oldest first.
    """
    sentences = split(last)
    request = clip(request, MAX_TEXT)
    first, count = began if began[1] else (request, 1 if request else 0)
    changed = digest.changed()
    # The files changed are told after the tasks done, within the same MAX_ITEMS.
    done = [clip(t.subject, MAX_TEXT) for t in digest.done_tasks()]
    done = done[-(MAX_ITEMS - 1) :] if changed else done
    open_tasks = digest.open_tasks()
    current = [d for d in decisions if getattr(d, "status", "active") != "superseded"]

    def step(text: str, priority: str, context: str) -> dict[str, str]:
        return {"step": clip(text, MAX_TEXT), "priority": priority, "context": context}

    said = [(x, referent(sentences, i, x)) for i, s in enumerate(sentences) if (x := next_step(s))]
    next_steps = [step(x, "HIGH", why or "from Claude's last message") for x, why in said]
    next_steps += [
        step(t.subject, "HIGH", "in progress") for t in open_tasks if t.status == "in_progress"
    ]
    next_steps += [
        step(str(n.get("step", "")), "HIGH", copy_of(d.id))
        for d in current
        for n in (d.continuity or {}).get("next_steps") or []
        if isinstance(n, dict) and n.get("priority") == "HIGH" and n.get("step")
    ]
    next_steps += [step(t.subject, "MEDIUM", "") for t in open_tasks if t.status != "in_progress"]
    # Newest failure first: a list cut to its first items keeps the one this turn hit. A
    # failure the session then judged (an outcome recorded after it) is told by the decision.
    outcome_at = judged(digest)
    concerns = [
        clip(c.failure(), MAX_TEXT)
        for c in unresolved(digest.commands)[::-1][:4]
        if not outcome_at or c.calls > outcome_at
    ]
    concerns += [clip(r.told(cwd), MAX_TEXT) for r in digest.refused[-2:]]
    concerns += [
        clip(pointed(sentences, i), MAX_TEXT) for i, s in enumerate(sentences) if tension(s)
    ]
    concerns += [
        clip(f"{c} ({d.id})", MAX_TEXT)
        for d in current
        for key in ("concerns", "risks")
        for c in (d.tension or {}).get(key) or []
    ]
    left = [clip(t.subject, MAX_TEXT) for t in open_tasks]
    left += [clip(x, MAX_TEXT) for x in (remains(s) for s in sentences) if x]
    evidence = [{"source": t.cite(cwd), "kind": "file", "detail": t.action} for t in changed]
    evidence += [
        {
            "source": clip(c.command, 300),
            "kind": "command",
            "detail": c.description + (f" ({c.outcome})" if c.failed or c.stopped else ""),
        }
        for c in digest.commands[-4:]
    ]
    failing = unresolved(digest.commands)
    continuity: dict[str, Any] = {
        "done": done[-MAX_ITEMS:],
        "remains": unique(left)[:MAX_ITEMS],
        "next_steps": unique(next_steps, key=lambda n: n["step"].lower())[:MAX_ITEMS],
        "open_files": [t.cite(cwd) for t in changed][-MAX_ITEMS:],
    }
    extra = {
        "stopped_at": stopped_at(digest, cwd, decisions),
        "tasks": [
            {"task": clip(t.subject, MAX_TEXT), "status": _STATUS.get(t.status, t.status)}
            for t in digest.tasks.values()
            if t.subject
        ][:MAX_ITEMS],
        "confirmed": confirmed(digest.commands, failing),
    }
    ran_any = any(not (c.looks or c.not_run) for c in digest.commands)
    kinds = {
        "changed": changed,
        "ran": ran_any,
        "tasks": digest.tasks,
        "decisions": decisions,
        "said": said and not digest.memory_tools(),  # not an echo of the memory
    }
    worked = tuple(kind for kind, shown in kinds.items() if shown)
    ok = passed(digest.commands, failing)  # the checks it ran, by their result (or none)
    bad = {check_of(c) for c in failing}
    ran = [check_of(c) for c in digest.commands if not (c.looks or c.not_run)]
    log = WorkLog(
        request=request,
        first_request=first,
        work_requests=count,
        last_message=clip(last, 1200),
        decisions=tuple(d.id for d in decisions),
        tool_calls=digest.tool_calls,
        work=bool(worked),
        activity="worked" if worked else activity(digest),
        changed=tuple((t.cite(cwd), t.action) for t in changed),
        worked=worked,
        failing=tuple((check_of(c), clip(c.failure(), MAX_TEXT)) for c in failing),
        passed=tuple(ok)[-MAX_FAILURES:],
        checks=tuple(k for k in dict.fromkeys(ran) if k not in ok and k not in bad)[-MAX_FAILURES:],
    )
    return {
        "content": log.summary(),
        "continuity": continuity | {k: v for k, v in extra.items() if v},
        "tension": {"concerns": unique(concerns)[:MAX_ITEMS]},
        "evidence": evidence[-MAX_ITEMS:],
        "metadata": log.metadata(),
    }


# A pronoun whose referent is outside the step: "it", "them", or a "this"/"that" that ends a
# clause ("fix that."; not "check that the cache works", not "this file").
_PRONOUN = re.compile(r"\b(?:it|them)\b|\b(?:this|that)\b(?=\s*(?:[.,;:!?)]|$))", re.I)


def referent(sentences: list[str], i: int, step: str) -> str:
    """What a step's pronoun points at ("cap it at 1024" after "_entries grows without
    bound."): the sentence before it, as the step's context ("" when it needs none)."""
    found = _PRONOUN.search(step)
    if i == 0 or found is None:
        return ""
    return f"“{found.group(0).lower()}” is what I said just before: “{clip(sentences[i - 1], 200)}”"


def _work_so_far(old: WorkLog, request: str) -> tuple[str, int]:
    """The session's first request that did work and how many did, counting ``request`` when
    it is a new one (("", 0) when its rolling checkpoint holds no work yet)."""
    if not old.work:
        return "", 0
    return old.started, max(old.work_requests, 1) + (1 if request and request != old.request else 0)


_STATUS = {"completed": "done"}


def activity(digest: Digest) -> str:
    """What a session without work did, in a few words ("recorded an outcome and searched
    memory"): what it recorded first, then what it looked up."""
    tools = set(digest.memory_tools())
    did = ["recorded an outcome"] if "evolve_outcome" in tools else []
    did += ["linked memories"] if tools & {"evolve_link", "suggest_links"} else []
    if tools & _SEARCHES:
        did.append("searched memory")
    elif "load_checkpoint" in tools:
        did.append("reloaded the checkpoint")
    return " and ".join(did[:2]) or "changed nothing"


def moved_on(digest: Digest, last: str) -> bool:
    """Whether this turn moved the work on: it edited, ran a command that does more than look
    around, or changed tasks, or it said what comes next without only echoing the memory (a
    turn that called MAMA's tools echoes it). ``python -m benchmarks extraction`` scores it.
    """
    if digest.turn_work:
        return True
    said = any(next_step(s) for s in split(last))
    return said and not digest.memory_tools(turn=True)


def _kept(old: MemoryRecord, log: WorkLog, new: dict[str, Any], echo: bool) -> dict[str, Any]:
    """The session's checkpoint as it was, gaining what this quiet turn added.

    It gains the decisions the turn saved (their concerns and HIGH next steps) and, unless the
    turn only echoed the memory (``echo``: it called MAMA's tools), the concerns and next steps
    of its closing message, after the old ones.
    """
    fresh = WorkLog.read(new["metadata"])
    ids = fresh.decisions

    def gained(item: str, step: dict[str, Any] | None = None) -> bool:
        from_decision = bool(copied_from(step)) or item.endswith(tuple(f"({i})" for i in ids))
        return from_decision or not echo

    steps = (old.continuity.get("next_steps") or []) + [
        n for n in new["continuity"]["next_steps"] if gained(str(n.get("step", "")), n)
    ]
    concerns = (old.tension.get("concerns") or []) + [
        c for c in new["tension"]["concerns"] if gained(c)
    ]
    kept = replace(log, decisions=ids, tool_calls=fresh.tool_calls)
    return {
        "content": old.content,
        "continuity": {
            **old.continuity,
            "next_steps": unique(steps, key=lambda n: str(n.get("step", "")).lower())[:MAX_ITEMS],
        },
        "tension": {**old.tension, "concerns": unique(concerns)[:MAX_ITEMS]},
        "evidence": old.evidence,
        "metadata": kept.metadata(),
    }
