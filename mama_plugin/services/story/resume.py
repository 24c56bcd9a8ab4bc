"""Where the work stopped: the checkpoint to resume from, and what came before and since.

Read by the session start and ``load_checkpoint`` alike (:func:`.briefing.resumed`).

**The resume point follows the work.** The checkpoint to resume from is the newest one that
carries work — one Claude wrote, or a rolling one whose session edited or changed tasks, or
ran a check whose result moved the open work: a failure no earlier session had, or a failing
check made good (``metadata.worked``, ``failing``, ``passed``). A later session that only
re-ran a check with the result already known, saved a decision, said what comes next in
prose, asked to carry on, searched the memory or reloaded the checkpoint never replaces it:
it is told in one line ("since then: one session searched memory"), its decisions are told
with the rest, and the next steps it said are open work. A session that did nothing at all
("hello") is not told.

**Open work outlives the session that found it.** A check that failed in an earlier session
and has not passed since is still unresolved, and when the resume point names no next step,
the newest next step of a later light session or an earlier session that no later work shows
done is the next step (:attr:`ResumePoint.later`, :attr:`ResumePoint.earlier`, read by
:func:`.briefing.resumed`).
Read-only; no I/O beyond the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...storage import MemoryRecord, Store
from ..render import clip
from .commands import covers
from .words import same_item
from .worklog import WorkLog

RECENT = 30
RECENT_WORK = 5  # the earlier sessions with work whose next steps may still be open
_COUNT = {1: "one", 2: "two", 3: "three"}


@dataclass(frozen=True)
class ResumePoint:
    """The checkpoint to resume from, what its session did after it, and what came since."""

    checkpoint: MemoryRecord | None
    then: MemoryRecord | None = None  # the same session's rolling checkpoint, newer and with work
    since: str = ""  # one line: what later sessions without work did
    failing: tuple[str, ...] = ()  # checks failing since an earlier session, not the lead's own
    earlier: tuple[MemoryRecord, ...] = ()  # older checkpoints with work, newest first
    later: tuple[MemoryRecord, ...] = ()  # newer checkpoints without work, oldest first
    # The same session's rolling checkpoint when Claude wrote the one resumed from: what it
    # found unresolved is open work too, told or not by Claude's.
    mate: MemoryRecord | None = None


def carries_work(
    m: MemoryRecord, rolling: MemoryRecord | None = None, failing: dict[str, str] | None = None
) -> bool:
    """Whether a checkpoint carries work.

    Claude's own does, unless its session's rolling checkpoint (``rolling``) says the session
    did no work and it holds nothing to pick up (no next step, file, task, tension, evidence
    or remaining work): a closing ``/mama-save`` after a search is not where the work stopped.
    ``failing``: the checks failing before it (check → how it failed); given, a session whose
    work was only checks, saved decisions and steps said carries work only when a check's
    result moved (:func:`moved`).
    """
    log = WorkLog.of(m)
    if log is None:
        if rolling is None or carries_work(rolling, failing=failing):
            return True
        c, t = m.continuity or {}, m.tension or {}
        held = ("next_steps", "open_files", "tasks", "first_action", "remains", "stopped_at")
        return bool(any(c.get(k) for k in held) or any(t.values()) or m.evidence)
    if log.work is not None:
        return log.work and (failing is None or moved(log, failing))
    c = m.continuity or {}  # rows written before metadata.work: what they hold
    commands = any(isinstance(e, dict) and e.get("kind") == "command" for e in m.evidence)
    return bool(c.get("open_files") or c.get("next_steps") or commands or log.decisions)


def moved(log: WorkLog, failing: dict[str, str]) -> bool:
    """Whether a session moved the open work: anything beyond running checks, saving
    decisions and saying what comes next (editing, tasks), or a check that failed where it
    had not been failing, or a failing check that passed. Rows from before ``worked`` was
    recorded: as their ``work`` says."""
    if log.worked is None or set(log.worked) - {"ran", "decisions", "said"}:
        return True
    new = [
        text
        for check, text in log.failing
        if check not in failing and not any(same_item(text, old) for old in failing.values())
    ]
    return bool(new or any(covers(p, check) for p in log.passed for check in failing))


def resume_point(store: Store, project: str) -> ResumePoint:
    """Where ``project``'s work stopped (see the module docstring)."""
    recent = store.memories.latest(project=project, type="checkpoint", limit=RECENT)
    # A teammate's checkpoint (a .mama/ file) is theirs: never told as where my work stopped.
    recent = [m for m in recent if not m.metadata.get("shared_from")]
    if not recent:
        return ResumePoint(None)
    rolling: dict[str, MemoryRecord] = {}
    for m in recent:  # newest first: each session's newest rolling checkpoint
        if m.rolling and m.session_id:
            rolling.setdefault(m.session_id, m)
    # Oldest first: which checks each session found failing, and which carry work.
    failing: dict[str, str] = {}
    working: list[MemoryRecord] = []
    for m in reversed(recent):
        if carries_work(m, rolling.get(m.session_id or ""), failing):
            working.append(m)
        log = WorkLog.of(m)
        if log is not None and log.worked is not None:
            failing = {
                k: v for k, v in failing.items() if not any(covers(p, k) for p in log.passed)
            }
            for check, text in log.failing:  # one failure told by two checks is one
                same = [k for k, v in failing.items() if k != check and same_item(text, v)]
                for k in same:
                    del failing[k]
                failing[check] = text
    # Before any session carried work: the last one that opened an item (said a next step,
    # found a failure, saved a decision); before that, none.
    working = working or [m for m in recent[::-1] if _opened(m)][-1:]
    if not working:
        sessions = _per_session(recent)
        return ResumePoint(
            None, since=since_line(sessions), failing=tuple(failing.values()), later=sessions
        )
    lead = working[-1]
    then = mate = None
    if lead.session_id:
        mates = [m for m in recent if m.session_id == lead.session_id and m.id != lead.id]
        written = next((m for m in [lead, *mates] if not m.rolling), None)
        auto = next((m for m in [lead, *mates] if m.rolling), None)
        if written is not None:  # Claude's own words tell the story best
            went_on = _moved_at(auto) if auto is not None else 0
            if auto is not None and went_on > written.updated_at and carries_work(auto):
                then = auto  # the work moved on after Claude wrote its checkpoint
            mate = auto
            lead = written
    newer = [
        m
        for m in recent
        if m.updated_at > lead.updated_at
        and m.id != getattr(then, "id", None)
        and (not lead.session_id or m.session_id != lead.session_id)
    ]
    since = _per_session(newer)
    told = {lead.id, getattr(then, "id", None)}
    # The checks the told checkpoints tell themselves; a written lead tells none of its
    # session's: what its rolling checkpoint found failing stays unresolved.
    own = {
        check
        for cp in (lead, then)
        if cp is not None and (log := WorkLog.of(cp)) is not None
        for check, _ in log.failing
    }
    earlier = [
        m
        for m in working[::-1]
        if m.id not in told
        and m.updated_at <= lead.updated_at
        and (not lead.session_id or m.session_id != lead.session_id)
    ]
    return ResumePoint(
        lead,
        then,
        since_line(since),
        mate=mate,
        failing=tuple(text for check, text in failing.items() if check not in own),
        earlier=tuple(earlier[:RECENT_WORK]),
        later=since,
    )


def _per_session(checkpoints: list[MemoryRecord]) -> tuple[MemoryRecord, ...]:
    """One checkpoint a session, oldest first: its rolling one, which tells what it did."""
    later = {(m.session_id or m.id): m for m in checkpoints[::-1] if not m.session_id or m.rolling}
    later |= {
        m.session_id: m for m in checkpoints[::-1] if m.session_id and m.session_id not in later
    }
    return tuple(sorted(later.values(), key=lambda m: m.updated_at))


def since_line(later: Sequence[MemoryRecord]) -> str:
    """What later checkpoints without work did, in one line ("" when there were none)."""
    groups: dict[str, list[MemoryRecord]] = {}
    for m in later:
        if WorkLog.trivial_of(m):
            continue  # a session that did nothing ("hello") is not told
        log = WorkLog.of(m)
        what = (_light(log) or log.activity) if log else ""
        groups.setdefault(what or "changed nothing", []).append(m)
    parts = []
    for what, members in groups.items():
        n = len(members)
        log = WorkLog.of(members[0])
        request = log.request if log else ""
        if n == 1 and what == "changed nothing" and request:
            parts.append(f"one session only asked “{clip(request, 60)}” and changed nothing")
        else:
            parts.append(f"{_COUNT.get(n, str(n))} session{'s' if n > 1 else ''} {what}")
    return "; ".join(parts)


def _light(log: WorkLog) -> str:
    """What a session that only ran checks and saved decisions did ("ran `pytest -q`: still
    failing", "saved a decision"); "" for any other."""
    if not log.worked or set(log.worked) - {"ran", "decisions", "said"}:
        return ""
    did = ["said what comes next"] if log.worked == ("said",) else []
    if "ran" in log.worked:
        checks = [check for check, _ in log.failing] + [*log.passed, *log.checks]
        ran = ", ".join(f"`{clip(c, 60)}`" for c in list(dict.fromkeys(checks))[:2]) or "checks"
        result = "passed" if log.passed else "its output showed no result"
        did.append(f"ran {ran}: " + ("still failing" if log.failing else result))
    if "decisions" in log.worked:
        n = len(log.decisions)
        did.append(f"saved {_COUNT.get(n, str(n))} decision{'s' if n != 1 else ''}")
    return " and ".join(did)


def _opened(m: MemoryRecord) -> bool:
    """Whether a light session left open work: a next step said, a failure, a decision."""
    log = WorkLog.of(m)
    worked = set(log.worked or ()) if log is not None else set()
    return log is not None and bool(worked & {"said", "decisions"} or log.failing)


def _moved_at(m: MemoryRecord) -> int:
    """When a rolling checkpoint's work last moved on (its last update, for older rows)."""
    log = WorkLog.of(m)
    return (log.moved_at if log is not None else None) or m.updated_at
