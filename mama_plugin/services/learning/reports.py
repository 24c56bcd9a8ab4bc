"""What memory learned, as reports: stale memories, hubs, lessons, a learn-and-evolve pass.

The same words in ``mama decay``, ``mama hubs``, ``mama learned``, ``mama evolve`` and the
tools that answer them (``project_context`` with ``detail``, ``evolve_pass``). Read-only;
memory text appears clipped to one line, as data.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...storage import Store
from ..render import clip, confidence
from .confidence import LearnPass
from .hubs import Hub
from .living import EvolvePass, said
from .staleness import Staleness
from .teaching import Learned
from .views import arrow, when


def decay_text(found: Sequence[Staleness], project: str, *, aging: bool) -> str:
    """The stale and expired memories (aging too, when asked), two lines each."""
    if not found:
        return f"nothing stale in {project}" + ("" if aging else " (ask for the aging ones too)")
    lines: list[str] = []
    for s in found:
        lines.append(f"{s.memory.id} ({s.memory.type}) {clip(s.memory.content, 100)}")
        lines.append(f"    {s.said()}")
    return "\n".join(lines)


def hubs_text(found: Sequence[Hub], project: str, minimum: int) -> str:
    """The hubs, the most referenced first: references, confidence, last use, review flag."""
    if not found:
        return f"no memory of {project} is referenced by {minimum} or more others"
    lines: list[str] = []
    for h in found:
        m = h.memory
        used = when(m.last_used) if m.last_used else "never"
        lines.append(
            f"{m.id} ({m.type}, {m.status}) {clip(m.content, 100)}\n"
            f"    {len(h.referrers)} references, confidence {confidence(m.confidence)}, "
            f"last used {used}"
            + (f", {h.staleness.category}" if h.staleness else "")
            + (" — review it: many memories rest on it" if h.review else "")
        )
        lines.append(f"    referenced by {', '.join(h.referrers)}")
    return "\n".join(lines)


def learned_text(found: Learned, where: str, limit: int) -> str:
    """What the outcomes taught: verdicts, success rate, would-repeat, moves, lessons."""
    if not found.judged:
        return f"no outcome recorded in {where} yet (evolve_outcome, /mama:outcome)"
    verdicts = ", ".join(f"{n} {k}" for k, n in sorted(found.outcomes.items()))
    rate = found.success_rate or 0.0
    plural = "" if found.judged == 1 else "s"
    lines = [f"{where}: {found.judged} outcome{plural} ({verdicts}), success rate {rate:.0%}"]
    if found.would_repeat:
        repeat = ", ".join(
            f"{k.replace('_', ' ')} {n}" for k, n in sorted(found.would_repeat.items())
        )
        lines.append(f"would repeat: {repeat}")
    passed = when(found.last_pass) if found.last_pass else "never (`mama learn`)"
    lines.append(f"confidence moves recorded: {found.moves}; last learn pass: {passed}")
    for lesson in found.lessons[: max(limit, 0)]:
        lines.append(
            f"- {lesson.kind}: {clip(lesson.text, 200)} ({lesson.memory_id}, {lesson.outcome})"
        )
    return "\n".join(lines)


def learn_text(done: LearnPass) -> str:
    """One learn pass: what it considered and applied, then each confidence it moved."""
    since = f"since {when(done.since)}" if done.since is not None else "first pass"
    lines = [
        f"Learn pass ({since}): {done.considered} judged memor"
        f"{'y' if done.considered == 1 else 'ies'} considered, {len(done.applied)} outcome"
        f"{'' if len(done.applied) == 1 else 's'} applied, {len(done.changes)} confidence"
        f"{'' if len(done.changes) == 1 else 's'} recorded."
    ]
    lines += [f"  {c.memory_id}  {arrow(c)}  {c.why}" for c in done.changes]
    return "\n".join(lines)


def evolve_text(store: Store, done: EvolvePass) -> str:
    """One evolve pass: what it looked at, then each note it wrote, on which memory."""
    since = f"since {when(done.since)}" if done.since is not None else "first pass"
    n = len(done.notes)
    lines = [
        f"Evolve pass ({since}): {done.considered} memor"
        f"{'y' if done.considered == 1 else 'ies'} changed or linked, {n} note"
        f"{'' if n == 1 else 's'} written."
    ]
    triggers = store.memories.get_many({x.trigger_id for x in done.notes})
    for x in done.notes:
        if x.trigger_id in triggers:
            lines.append(f"  {x.memory_id}: {said(x, triggers[x.trigger_id])}")
    return "\n".join(lines)
