"""Living memories: the dated notes a memory gains as the graph grows around it.

A memory is never rewritten when later ones build on it; it gains a note instead
(:mod:`~mama_plugin.storage.notes`):

- **link** — a later memory links to it (a save with links, ``implements`` or a ``relation``,
  or an accepted link suggestion): "a caching decision builds on this (dec_…, 2026-11-27)".
  Replacing links and outcome events make none: the memory already tells what replaced it
  and what its outcome was.
- **outcome** — a memory it builds on (a link that carries trust, :func:`.learning.carries`,
  from it to the judged one) FAILED: "the decision this builds on FAILED on 2026-11-28
  (dec_…)". Checkpoints gain none (a snapshot of work, not a claim).

:func:`note` writes the notes a set of links makes (inside the caller's transaction, once
each); :func:`evolve` does it for every link of some memories; :func:`after_outcome` for a
judged memory's neighbourhood; :func:`evolve_pass` for what changed since the last pass
(``mama evolve``), recorded like ``mama learn``'s. :func:`told` gives each memory's latest
notes as the lines answers show.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...relationships import REPLACING
from ...storage import LinkRecord, MemoryRecord, Store, now_ms
from ...storage.notes import Note
from ..render import clip, day
from .confidence import carries, cause_of, recorded_at

NOTES_TOLD = 3  # the latest notes an answer tells with a memory, one line each
_NO_NOTE = REPLACING | {"outcome_of"}  # told by the memory itself already
_WARNED = ("FAILED",)  # the verdicts that reach what builds on the judged memory
_UNNOTED_TYPES = frozenset({"checkpoint"})
_TOPIC_CHARS = 40


def _link_note(link: LinkRecord) -> Note | None:
    if link.relationship in _NO_NOTE:
        return None
    cause = f"link:{link.from_id}:{link.relationship}"
    return Note(link.to_id, link.from_id, link.created_at, "link", link.relationship, "", cause)


def _outcome_note(link: LinkRecord, ends: dict[str, MemoryRecord]) -> Note | None:
    """The note the memory a link leaves gains when the memory it enters FAILED."""
    base, built = ends.get(link.to_id), ends.get(link.from_id)
    if base is None or built is None or base.outcome_status not in _WARNED:
        return None
    if built.type in _UNNOTED_TYPES or not carries(link):
        return None
    at = recorded_at(base)
    cause = cause_of(base, base.outcome_status, at)
    return Note(built.id, base.id, at, "outcome", "", base.outcome_status, cause)


def note(store: Store, links: Sequence[LinkRecord]) -> list[Note]:
    """Write the notes ``links`` make that are not written yet; return those written.

    Runs in the caller's transaction when one is open (a save's, an acceptance's).
    """
    if not links:
        return []
    with store.transaction():
        ends = store.memories.get_many({i for ln in links for i in (ln.from_id, ln.to_id)})
        wanted = [n for ln in links for n in (_link_note(ln), _outcome_note(ln, ends)) if n]
        return store.notes.add(wanted)


def evolve(store: Store, memory_ids: Iterable[str]) -> list[Note]:
    """Write the notes every link to or from ``memory_ids`` makes and lacks; return them."""
    ids = list(dict.fromkeys(memory_ids))
    with store.transaction():
        links = {ln.id: ln for ln in store.links.among(ids, direction="out")}
        links |= {ln.id: ln for ln in store.links.among(ids, direction="in")}
        return note(store, sorted(links.values(), key=lambda ln: (ln.created_at, ln.id)))


def after_outcome(store: Store, memory: MemoryRecord) -> list[Note]:
    """The evolution pass after ``memory`` was judged: its neighbourhood (it and every memory
    linked to it) gains the notes it lacks, what builds on it a FAILED one's warning."""
    neighbours = {
        ln.to_id if ln.from_id == memory.id else ln.from_id for ln in store.links.of(memory.id)
    }
    return evolve(store, [memory.id, *sorted(neighbours)])


@dataclass
class EvolvePass:
    """What one ``mama evolve`` pass did."""

    since: int | None  # the previous pass (None: the first, every memory considered)
    at: int
    considered: int = 0  # memories changed, or linked, since the previous pass
    notes: list[Note] = field(default_factory=list)  # written now

    def as_dict(self) -> dict[str, Any]:
        return {
            "since": self.since,
            "at": self.at,
            "considered": self.considered,
            "notes": [n.as_dict() for n in self.notes],
        }


def evolve_pass(store: Store) -> EvolvePass:
    """Write the notes missing around the memories changed or linked since the last pass
    (every memory on the first); record the pass. Idempotent: a second pass writes nothing."""
    with store.transaction():
        since = store.notes.last_pass()
        done = EvolvePass(since, now_ms())
        ids = store.notes.touched_since(since)
        done.considered = len(ids)
        done.notes = evolve(store, ids)
        store.notes.mark_pass(done.at)
    return done


def _verb(relationship: str) -> str:
    words = relationship.replace("_", " ")
    passive = relationship.endswith("_by") or relationship.startswith("based_")
    return f"is {words}" if passive else words


def _a(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def said(n: Note, trigger: MemoryRecord) -> str:
    """One note as told: "a caching decision builds on this (dec_…, 2026-11-27)"."""
    if n.kind == "outcome":
        return f"the {trigger.type} this builds on {n.outcome} on {day(n.at)} ({trigger.id})"
    topic = clip(trigger.topic.replace("_", " "), _TOPIC_CHARS)
    # A checkpoint's topic is often its type ("a checkpoint checkpoint" says nothing more).
    what = trigger.type if topic.lower() in ("", trigger.type) else f"{topic} {trigger.type}"
    return f"{_a(what)} {what} {_verb(n.relationship)} this ({trigger.id}, {day(n.at)})"


def told(
    store: Store,
    memory_ids: Iterable[str],
    latest: int | None = NOTES_TOLD,
    *,
    known: Iterable[str] = (),
) -> dict[str, list[str]]:
    """Each memory's ``latest`` notes (every one when None) as lines, oldest first; memories
    without one are absent. A link note whose trigger is among ``known`` (told beside it
    already, as in a search answer) is left out. Read-only."""
    beside = set(known)
    found = store.notes.of_many(memory_ids, latest=latest)
    triggers = store.memories.get_many({n.trigger_id for ns in found.values() for n in ns})
    out: dict[str, list[str]] = {}
    for memory_id, notes in found.items():
        lines = [
            said(n, triggers[n.trigger_id])
            for n in notes
            if n.trigger_id in triggers and not (n.kind == "link" and n.trigger_id in beside)
        ]
        if lines:
            out[memory_id] = lines
    return out


def count_told(store: Store, memory_id: str) -> int:
    """How many notes ``memory_id`` has in all (an answer tells the latest few)."""
    return len(store.notes.of(memory_id))
