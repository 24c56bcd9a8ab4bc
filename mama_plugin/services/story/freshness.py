"""What is still news in an answer: one entry a session, outcomes on their memory, open work.

Four rules the search answers apply to what retrieval ranked (``services/story/answers.py``):

- **One entry a session.** A session's checkpoints (its rolling automatic one and any Claude
  saved) collapse into the one updated last, at the rank of the session's best hit; it
  names the others in ``collapsed``.
- **An outcome is told on its memory.** An outcome event (the insight ``evolve_outcome``
  writes, linked ``outcome_of``) repeats what the memory it judges already carries (status,
  details, lessons): the memory stands in its place.
- **Done is not remaining.** A next step is still open unless a memory saved or updated after
  the one that holds it shows it done (``services/story/done.py``: its done items and tasks, the
  checks it saw pass, the step's object among what it did, a later turn asked for it); a
  step of a memory that only carries out superseded decisions is moot; a step or a concern
  that a later decision building on its memory covers is settled (:func:`building_on`).
- **A session without work is no answer.** The rolling checkpoint of a session that only
  asked, looked around or searched (:func:`idle`) is left out of search answers: what it was
  told came from the memory or the code, and its question is not work.

Read-only; standard library, storage and `text` only (the session-start hook may use it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import cached_property
from typing import TypeVar

from ...storage import MemoryRecord, Store
from ..evolution import current_of, outcome_events
from ..warm import warm
from .done import copied_from, evidence, judged_parts
from .records import OpenStep
from .results import AnswerItem
from .rules import DEFAULT, Later, Rule, Similar, select
from .words import MIN_SHARED, bag, covers, parts
from .worklog import WorkLog

T = TypeVar("T")
LATER = 40  # later checkpoints and decisions consulted per project
# What a later memory shows (done.evidence) is kept in the store's warm state
# (:mod:`..warm`), by (id, version, updated_at, personal data kept): a search reads the same
# newest memories of its project every time, and decoding them again was most of an answer's
# open steps. Every edit of what a memory says bumps its version (a use count or a replayed
# supersession does not; neither is evidence).
SHOWN_KEPT = 4096


def idle(m: MemoryRecord) -> bool:
    """True for the rolling checkpoint of a session that did no work ("Working on: hello")."""
    log = WorkLog.of(m)
    return log is not None and log.work is False


def _newer(a: MemoryRecord, b: MemoryRecord) -> bool:
    return (a.updated_at, a.seq) > (b.updated_at, b.seq)


def one_per_session(
    ranked: Sequence[tuple[MemoryRecord, T]],
) -> list[tuple[MemoryRecord, T, list[str]]]:
    """``ranked`` with each session's checkpoints folded into the one updated last.

    The kept checkpoint takes the rank (and the value beside it) of the session's best hit;
    the third element names the checkpoints folded into it. Everything else passes as is.
    """
    latest: dict[str, MemoryRecord] = {}
    for m, _ in ranked:
        if m.type == "checkpoint" and m.session_id:
            held = latest.get(m.session_id)
            if held is None or _newer(m, held):
                latest[m.session_id] = m
    out: list[tuple[MemoryRecord, T, list[str]]] = []
    placed: set[str] = set()
    for m, value in ranked:
        if m.type != "checkpoint" or not m.session_id:
            out.append((m, value, []))
        elif m.session_id not in placed:
            placed.add(m.session_id)
            keep = latest[m.session_id]
            others = [
                o.id
                for o, _ in ranked
                if o.type == "checkpoint" and o.session_id == m.session_id and o.id != keep.id
            ]
            out.append((keep, value, others))
    return out


def outcomes_on_their_memory(
    store: Store, ranked: Sequence[tuple[MemoryRecord, T]]
) -> list[tuple[MemoryRecord, T]]:
    """``ranked`` with every outcome event replaced by the memory it judges (once, best rank)."""
    targets = outcome_events(store, [m for m, _ in ranked])
    found = store.memories.get_many(set(targets.values()))
    out: list[tuple[MemoryRecord, T]] = []
    placed: set[str] = set()
    for m, value in ranked:
        target = found.get(targets.get(m.id, ""))
        memory = target if target is not None else m
        if memory.id not in placed:
            placed.add(memory.id)
            out.append((memory, value))
    return out


def _carrying_out(store: Store, memories: Sequence[MemoryRecord]) -> set[str]:
    """The ids of ``memories`` that carry out a decision (one query for all of them)."""
    return {
        ln.from_id
        for ln in store.links.among([m.id for m in memories], direction="out")
        if ln.link_category == "implementation" and ln.relationship != "outcome_of"
    }


def _superseded_plans(store: Store, memory: MemoryRecord) -> list[MemoryRecord] | None:
    """The decisions ``memory`` carries out when every one of them is superseded, else None."""
    targets = [
        ln.to_id
        for ln in store.links.of(memory.id, direction="out", categories=("implementation",))
        if ln.relationship != "outcome_of"
    ]
    found = store.memories.get_many(targets) if targets else {}
    plans = list(found.values())
    return plans if plans and all(m.status == "superseded" for m in plans) else None


def moot(store: Store, memory: MemoryRecord) -> bool:
    """True when everything ``memory`` implements has been superseded: its plans are moot."""
    return _superseded_plans(store, memory) is not None


def building_on(store: Store, memories: Sequence[MemoryRecord]) -> dict[str, list[str]]:
    """What the later decisions that build on each of ``memories`` say (choice and why), by
    the id they build on: decisions saved after it, linked to it by an evolution link (they
    refine, extend or replace it) and not judged FAILED. One query for all of them."""
    held = {m.id: m for m in memories}
    links = [
        ln for ln in store.links.among(held, direction="in") if ln.link_category == "evolution"
    ]
    found = store.memories.get_many({ln.from_id for ln in links}) if links else {}
    out: dict[str, list[str]] = {}
    for ln in links:
        later, base = found.get(ln.from_id), held[ln.to_id]
        if (
            later is not None
            and later.type == "decision"
            and later.outcome_status != "FAILED"  # what failed settled nothing
            and (later.created_at, later.seq) > (base.created_at, base.seq)
        ):
            why = str(later.reasoning.get("primary", ""))
            out.setdefault(base.id, []).append(f"{later.content}. {why}")
    return out


_UNTIL = re.compile(r"\buntil\s+(.+?)\s*[.;]?$", re.I)


def lifted(store: Store, held: Sequence[tuple[MemoryRecord, list[str]]]) -> list[list[str]]:
    """Each holder's concerns without those that hold only "until" something later work
    shows done, by the done rules ("Redis is a single point of failure until HA is set up"
    after a session asked to set up Redis HA changed files). The later memories are read once
    a project, and only when a concern says "until"."""
    projects = {m.project for m, texts in held if any(_UNTIL.search(t) for t in texts)}
    newest = {project: _later(store, project) for project in projects}
    out = []
    for holder, texts in held:
        later = [
            shown
            for at, seq, i, shown in newest.get(holder.project, [])
            if i != holder.id and (at, seq) > (holder.updated_at, holder.seq)
        ]
        out.append([t for t in texts if not (later and _lifted(t, later))])
    return out


def _lifted(text: str, later: list[Later]) -> bool:
    until = _UNTIL.search(text)
    return until is not None and all(rule for _, rule in judged_parts(until.group(1), later))


def unsettled(texts: Iterable[str], settled_by: Sequence[str]) -> list[str]:
    """``texts`` (concerns, risks) that none of ``settled_by`` (:func:`building_on`) covers."""
    return [t for t in texts if not any(covers(s, str(t)) for s in settled_by)]


def settle(store: Store, items: list[AnswerItem], memories: Sequence[MemoryRecord]) -> None:
    """Leave out of each answer item's tension the concerns and risks that a later decision
    building on its memory covers (:func:`building_on`); ``memories``: the current ones."""
    built = building_on(store, memories)
    for item in items:
        if item.id in built and item.tension is not None:
            item.tension = {
                key: unsettled(v, built[item.id]) if key in ("concerns", "risks") else v
                for key, v in item.tension.items()
            }


def _said(m: MemoryRecord) -> frozenset[str]:
    """The words of a decision's plan: topic, choice, why, outcome and next steps."""
    steps = [
        str(n.get("step", "")) if isinstance(n, dict) else str(n)
        for n in m.continuity.get("next_steps") or []
    ]
    return bag(
        " ".join(
            [
                m.topic.replace("_", " "),
                m.content,
                str(m.reasoning.get("primary", "")),
                str(m.outcome.get("details") or ""),
                *steps,
            ]
        )
    )


def _about(store: Store, step: str, plans: list[MemoryRecord]) -> bool:
    """Whether ``step`` carries out one of the replaced ``plans``: it shares two words with
    what the plan says, or one that the decision which replaced it does not say ("JWT")."""
    wanted = bag(step)
    for plan in plans:
        shared = wanted & _said(plan)
        if len(shared) >= min(MIN_SHARED, len(wanted)):
            return True
        if shared - _said(current_of(store, plan.id)):
            return True
    return False


class _Holder:
    """What the holder rules read of one memory holding steps (:class:`.rules.Holder`)."""

    def __init__(self, store: Store, memory: MemoryRecord, work: _OpenWork) -> None:
        self._store, self._memory, self._work = store, memory, work

    @property
    def built_on(self) -> list[str]:
        return self._work.built.get(self._memory.id, [])

    @cached_property
    def _plans(self) -> list[MemoryRecord] | None:
        if self._memory.id not in self._work.carrying:
            return None
        return _superseded_plans(self._store, self._memory)

    @property
    def replaced(self) -> bool:
        return self._plans is not None

    def about_replaced(self, step: str) -> bool:
        return self._plans is not None and _about(self._store, step, self._plans)


class _OpenWork:
    """What the holder rules need of all the holders at once, each read on first use."""

    def __init__(self, store: Store, holders: list[MemoryRecord]) -> None:
        self._store, self._holders = store, holders

    @cached_property
    def carrying(self) -> set[str]:
        return _carrying_out(self._store, self._holders)

    @cached_property
    def built(self) -> dict[str, list[str]]:
        return building_on(self._store, self._holders)


def open_steps(
    store: Store,
    holders: Iterable[MemoryRecord],
    *,
    rules: Iterable[str | Rule] = DEFAULT,
    similar: Similar | None = None,
) -> list[OpenStep]:
    """The next steps of ``holders`` no later memory of their project shows done.

    In holder order, without repeats (compared case-insensitively); a step shown done in
    part says which parts are left and which were done (:class:`.records.OpenStep`). A step
    the holder rules among ``rules`` settle (:mod:`.rules`: ``refined``, ``moot``) is left
    out before any later memory is read; the part rules judge the rest
    (:func:`.done.judged_parts`, with ``similar``).
    """
    rules = tuple(rules)
    settling = [r for r in select(rules) if r.settles is not None]
    holders = list(holders)
    work = _OpenWork(store, holders)
    later: dict[str, list[tuple[int, int, str, Later]]] = {}
    out: list[OpenStep] = []
    seen: set[str] = set()
    for m in holders:
        holder = _Holder(store, m, work)
        if m.project not in later:
            later[m.project] = _later(store, m.project)
        told = _told_after(m, later[m.project])
        for s in m.continuity.get("next_steps") or []:
            text = str(s.get("step", "")) if isinstance(s, dict) else str(s)
            if not text.strip() or text.lower() in seen:
                continue
            if any(r.settles is not None and r.settles(text, holder) for r in settling):
                continue  # settled by what happened to its holder
            # A checkpoint's copy of a decision's step ("next step of dec_…") is the
            # decision's: what came after the decision judges it, the copying checkpoint
            # included (its copy says nothing, :func:`.done.evidence`; what its session did
            # after the save does: a turn that saves a decision and then does its step).
            of = _decision_of(store, s, m)
            after = told if of is None else _told_after(of, later[m.project])
            judged = judged_parts(text, after, rules, similar)
            if all(rule for _, rule in judged):
                continue
            seen.add(text.lower())
            priority = s.get("priority", "MEDIUM") if isinstance(s, dict) else "MEDIUM"
            left = done = ""
            if any(rule for _, rule in judged):  # done in part: say which part is left
                left = "; then ".join(p for p, rule in judged if not rule)
                done = "; ".join(p for p, rule in judged if rule)
            out.append(OpenStep(text, str(priority), m.id, left, done))
    return out


def _told_after(m: MemoryRecord, later: list[tuple[int, int, str, Later]]) -> list[Later]:
    """What the memories saved or updated after ``m`` show (:func:`_later`'s rows); its own
    session's requests may have come before its steps, so they close none."""
    told = [shown for at, seq, i, shown in later if i != m.id and (at, seq) > (m.updated_at, m.seq)]
    if m.session_id:
        told = [replace(t, asked=[]) if t.asked and t.session == m.session_id else t for t in told]
    return told


def _decision_of(store: Store, step: object, holder: MemoryRecord) -> MemoryRecord | None:
    """The decision a checkpoint's step was copied from (:func:`.done.copied_from`), if stored."""
    of = copied_from(step) if holder.type == "checkpoint" else ""
    found = store.memories.get(of) if of else None
    return found if found is not None and found.type == "decision" else None


def _later(store: Store, project: str) -> list[tuple[int, int, str, Later]]:
    """(updated_at, seq, id, what it shows) of the project's ``LATER`` newest checkpoints and
    decisions, oldest first; a memory is decoded only when it changed since it was read."""
    personal = store.memories.masks_personal
    with store.snapshot():  # the versions and the memories from one state
        rows = [
            *store.search.changed(project=project, type="checkpoint", limit=LATER),
            *store.search.changed(project=project, type="decision", limit=LATER),
        ]
        keys = [(i, v, at, personal) for _, i, at, v in rows]
        shown = warm(store).later
        # One lookup a key: another thread's search may clear the cache between two.
        known = {key: got for key in keys if (got := shown.get(key)) is not None}
        missing = [key[0] for key in keys if key not in known]
        found = store.memories.get_many(missing) if missing else {}
    fresh = {(m.id, m.version, m.updated_at, personal): evidence(m) for m in found.values()}
    if len(shown) + len(fresh) > SHOWN_KEPT:
        shown.clear()
    shown.update(fresh)
    known.update(fresh)
    out = [(at, seq, i, known[key]) for (seq, i, at, _), key in zip(rows, keys, strict=True)]
    return sorted(out, key=lambda row: (row[0], row[1]))


def unstated(steps: list[OpenStep], deciders: Sequence[MemoryRecord]) -> list[OpenStep]:
    """``steps`` without those a decision told beside them states ("replace the lru_cache with
    a TTL cache" when "Replace lru_cache with a 30 s TTL cache" stands or was just told on its
    chain): decided is not remaining. A decision never settles a step it lists itself (its
    next step carries it out, whoever repeats it: "Give /ready a 2 s timeout" after "/ready
    checks the database with a 2 s timeout"), nor one of its own holder."""
    return [s for s in steps if not any(_states(d, s) for d in deciders)]


def _states(decision: MemoryRecord, step: OpenStep) -> bool:
    if decision.id == step.holder or not covers(decision.content, step.told):
        return False
    own = [
        str(n.get("step", "")) if isinstance(n, dict) else str(n)
        for n in decision.continuity.get("next_steps") or []
    ]
    return not any(covers(o, step.told) and covers(step.told, o) for o in own)


def distinct(steps: list[OpenStep]) -> list[OpenStep]:
    """``steps`` without one that only says again what an earlier one says (each of its open
    parts holds most of a part of an earlier step's words, and the other way round)."""
    kept: list[OpenStep] = []
    said: list[str] = []
    for s in steps:
        mine = parts(s.told)
        if all(any(covers(p, q) and covers(q, p) for q in said) for p in mine):
            continue
        said += mine
        kept.append(s)
    return kept
