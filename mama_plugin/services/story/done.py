"""Whether later work shows a next step done: what a later memory shows, judged by the rules.

:func:`evidence` reads what one later memory shows (a :class:`.rules.Later`); the part rules
of :mod:`.rules` say whether it shows a part of a step done. A step of several parts ("write
the flag, then rerun smoke.sh") is done only when every part is. The newest memory that
speaks of a step decides: one that lists it as open again (as its own next step or a pending
task) keeps it open, whatever older memories (or its own other layers) said. The holder rules
(``refined``, ``moot``) are applied by :func:`.freshness.open_steps` to the holder itself.

Pure functions over records; standard library only (the session-start hook may use them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...storage import MemoryRecord
from ...text import next_step, remains, split, tension
from .rules import DEFAULT, TICKED, Later, Rule, Similar, select
from .words import bag, covers, parts
from .worklog import WorkLog

COPIED = "next step of "  # a checkpoint's copy of a decision's step says whose it is


def doubts(tension: dict[str, Any]) -> list[str]:
    """A memory's concerns and risks: what it left in doubt."""
    return [str(x) for key in ("concerns", "risks") for x in (tension or {}).get(key) or []]


def _text(item: Any, key: str) -> str:
    return str(item.get(key, "")) if isinstance(item, dict) else str(item)


def evidence(m: MemoryRecord) -> Later:
    """What ``m`` shows was done and what it still calls open."""
    c = m.continuity
    steps = [_text(s, "step") for s in c.get("next_steps") or []]
    if m.type == "decision":
        return Later(m.id, decided=[f"{m.topic.replace('_', ' ')}: {m.content}"], still_open=steps)
    # A checkpoint carries its decisions' HIGH next steps to tell them: that copy says nothing
    # of whether the work did them.
    steps = [_text(s, "step") for s in c.get("next_steps") or [] if not copied_from(s)]
    log = WorkLog.of(m)
    tasks = [t for t in c.get("tasks") or [] if isinstance(t, dict)]
    passed = []
    for check in c.get("confirmed") or []:
        if isinstance(check, dict):
            passed += [_text(check, "claim"), *TICKED.findall(_text(check, "evidence"))]
    changed = [
        str(e.get("source", ""))
        for e in m.evidence
        if isinstance(e, dict) and e.get("kind") == "file"
    ]
    # The requests of a rolling checkpoint whose turns changed files or passed a check.
    worked = log is not None and (changed or c.get("open_files") or passed)
    asked = [log.first_request or log.request, log.request] if log is not None and worked else []
    return Later(
        m.id,
        done=[d for d in WorkLog.done_items(m) if d.strip()],
        tasks_done=[_text(t, "task") for t in tasks if t.get("status") == "done"],
        passed=[p for p in passed if p.strip()],
        changed=[*changed, *(str(f) for f in c.get("open_files") or [])],
        reported=[
            x
            for x in split(log.last_message if log is not None else "")
            if not (tension(x) or next_step(x) or remains(x) or x.endswith("?"))
        ],
        still_open=[*steps, *(_text(t, "task") for t in tasks if t.get("status") != "done")],
        asked=list(dict.fromkeys(a for a in asked if a.strip())),
        session=m.session_id or "",
        troubled=frozenset().union(*(bag(d) for d in doubts(m.tension))),
    )


def copy_of(decision_id: str) -> str:
    """The context of a step a checkpoint copied from a decision: "next step of dec_…"."""
    return COPIED + decision_id


def copied_from(step: Any) -> str:
    """The id of the decision a checkpoint's step was copied from (:func:`copy_of`), or ""."""
    context = str(step.get("context", "")) if isinstance(step, dict) else ""
    return context.removeprefix(COPIED) if context.startswith(COPIED) else ""


def shows_done(
    part: str, later: Later, rules: Iterable[str | Rule] = DEFAULT, similar: Similar | None = None
) -> str:
    """The first part rule by which ``later`` shows ``part`` done ("" when none does)."""
    return _first(part, later, [r for r in select(rules) if r.shows is not None], similar)


def _first(part: str, later: Later, rules: Sequence[Rule], similar: Similar | None) -> str:
    return next(
        (r.name for r in rules if r.shows is not None and r.shows(part, later, similar)), ""
    )


def _lists_open(part: str, later: Later) -> bool:
    return any(covers(s, part) and covers(part, s) for s in later.still_open)


def judged_parts(
    step: str,
    later: Sequence[Later],
    rules: Iterable[str | Rule] = DEFAULT,
    similar: Similar | None = None,
) -> list[tuple[str, str]]:
    """Each part of ``step`` with the rule that shows it done by ``later`` ("" if open).

    ``later`` is oldest first; each part is judged by the newest memory that speaks of it: a
    memory that lists the part as open again keeps it open unless a newer one shows it done.
    """
    asked = [r for r in select(rules) if r.shows is not None]
    # Every rule but the wordless ones needs a word of the part in the memory's texts, and so
    # does listing it open (:func:`covers`; a part's object is a suffix of it, its words a
    # subset).
    wordless = [r for r in asked if r.wordless]
    out = []
    for part in parts(step):
        wanted = bag(part)
        state = ""
        for memory in later:
            if wanted.isdisjoint(memory.vocabulary):
                state = _first(part, memory, wordless, similar) or state
            elif _lists_open(part, memory):
                state = ""
            else:
                state = _first(part, memory, asked, similar) or state
        out.append((part, state))
    return out


def done_by(
    step: str,
    later: Sequence[Later],
    rules: Iterable[str | Rule] = DEFAULT,
    similar: Similar | None = None,
) -> str:
    """Which rule shows ``step`` done by ``later`` (oldest first): every part must be shown
    done (:func:`judged_parts`); "" while any part is open."""
    judged = judged_parts(step, later, rules, similar)
    return judged[0][1] if all(rule for _, rule in judged) else ""
