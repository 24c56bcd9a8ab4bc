"""What is still news in an answer: one entry a session, outcomes on their memory, open work.

Three rules the search answers apply to what retrieval ranked (``services/answers.py``):

- **One entry a session.** A session's checkpoints (its rolling automatic one and any Claude
  saved) collapse into the one updated last, at the rank of the session's best hit; it
  names the others in ``collapsed``.
- **An outcome is told on its memory.** An outcome event (the insight ``evolve_outcome``
  writes, linked ``outcome_of``) repeats what the memory it judges already carries (status,
  details, lessons): the memory stands in its place.
- **Done is not remaining.** A next step is still open unless a memory saved or updated after
  the one that holds it says it was done: a ``done`` item of a later checkpoint, or a later
  decision, that holds most of the step's words (:func:`covers`).

Read-only; standard library and storage only (the session-start hook may use it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from ..storage import MemoryRecord, Store
from ..text import stem, words
from .evolution import outcome_events

T = TypeVar("T")
COVERAGE = 0.6  # share of a step's words a later "done" item must hold to close it
MIN_SHARED = 2  # and at least this many of them
LATER = 40  # later checkpoints and decisions consulted per project


def is_auto(m: MemoryRecord) -> bool:
    """True for the rolling checkpoint the Stop hook writes (not one Claude saved)."""
    return m.type == "checkpoint" and bool(m.metadata.get("auto"))


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
            others = [o.id for o, _ in ranked if o.type == "checkpoint"
                      and o.session_id == m.session_id and o.id != keep.id]  # fmt: skip
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


@lru_cache(maxsize=4096)  # every search compares the same later memories' words again
def _bag(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in words(text))


def covers(done: str, step: str) -> bool:
    """Whether the ``done`` text holds most of ``step``'s words (stemmed): the step is done."""
    wanted = _bag(step)
    shared = len(wanted & _bag(done))
    return (
        bool(wanted)
        and shared >= min(MIN_SHARED, len(wanted))
        and (shared / len(wanted) >= COVERAGE)
    )


def _said_done(m: MemoryRecord) -> list[str]:
    """What a memory says was done: a checkpoint's ``done`` items, a decision's choice."""
    if m.type == "decision":
        return [m.content]
    return [str(d) for d in (m.continuity.get("done") or []) if str(d).strip()]


def open_steps(store: Store, holders: Iterable[MemoryRecord]) -> list[dict[str, Any]]:
    """The next steps of ``holders`` no later memory of their project says were done.

    Each step is a dict with ``step``, ``priority`` and ``from`` (the holder's id), in
    holder order, without repeats (compared case-insensitively).
    """
    later: dict[str, list[MemoryRecord]] = {}
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for m in holders:
        if m.project not in later:
            later[m.project] = [
                *store.memories.latest(project=m.project, type="checkpoint", limit=LATER),
                *store.memories.latest(project=m.project, type="decision", limit=LATER),
            ]
        said = [d for o in later[m.project] if o.id != m.id and _newer(o, m)
                for d in _said_done(o)]  # fmt: skip
        for s in m.continuity.get("next_steps") or []:
            text = str(s.get("step", "")) if isinstance(s, dict) else str(s)
            if not text.strip() or text.lower() in seen or any(covers(d, text) for d in said):
                continue
            seen.add(text.lower())
            priority = s.get("priority", "MEDIUM") if isinstance(s, dict) else "MEDIUM"
            out.append({"step": text, "priority": priority, "from": m.id})
    return out
