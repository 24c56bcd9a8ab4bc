"""The resume point and the story told from it: where the work stopped, as it was left.

Shared by the session start (:mod:`.briefing`) and ``load_checkpoint`` (``/mama-resume``).

**The resume point follows the work.** The checkpoint to resume from is the newest one that
carries work — one Claude wrote, or a rolling one whose session edited, changed tasks, said
what comes next, or ran a check whose result moved the open work: a failure no earlier session
had, or a failing check made good (``metadata.worked``, ``failing``, ``passed``). A later
session that only re-ran a check with the result already known, saved a decision, asked to
carry on, searched the memory or reloaded the checkpoint never replaces it: it is told in one
line ("since then: one session searched memory"), and its decisions are told with the rest.

**Open work outlives the session that found it.** A check that failed in an earlier session
and has not passed since is still unresolved, and when the resume point names no next step,
the newest next step of an earlier session that no later work shows done is the next step
(:attr:`ResumePoint.earlier`, read by :func:`.briefing.gather`).

**The story is a cliffhanger, not a status report** (the original design's tests on real
sessions: describing the interrupted state drew direct action, a list of orders drew "should I
proceed?", urgency drew suspicion, evidence stopped re-checking): what I did; where I stopped,
as it was left; what you will see now and what I was changing it to; what is unresolved; a
context block of ✅ confirmed (with evidence), ⚠️ skipped (reason, risk) and ❓ unknown
(assumption, when it is checked); the decisions as "D1: choice > alternative (confidence) —
why not the alternative"; the next step with why it comes first. Each item is said once.
Read-only; no I/O beyond the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...storage import MemoryRecord, Store
from ...text import strip_cue
from ..render import because, clip, confidence, day
from .freshness import unstated
from .records import DecisionView, NextStep, OpenStep, Story
from .words import covers, same_item
from .worklog import WorkLog

RECENT = 30
RECENT_WORK = 5  # the earlier sessions with work whose next steps may still be open
_COUNT = {1: "one", 2: "two", 3: "three"}
_WHY = {"from Claude's last message": "what I said comes next", "in progress": "in progress"}


@dataclass(frozen=True)
class ResumePoint:
    """The checkpoint to resume from, what its session did after it, and what came since."""

    checkpoint: MemoryRecord | None
    then: MemoryRecord | None = None  # the same session's rolling checkpoint, newer and with work
    since: str = ""  # one line: what later sessions without work did
    failing: tuple[str, ...] = ()  # checks failing since an earlier session, not the lead's own
    earlier: tuple[MemoryRecord, ...] = ()  # older checkpoints with work, newest first
    later: tuple[MemoryRecord, ...] = ()  # newer checkpoints without work, oldest first


def carries_work(
    m: MemoryRecord, rolling: MemoryRecord | None = None, failing: frozenset[str] | None = None
) -> bool:
    """Whether a checkpoint carries work.

    Claude's own does, unless its session's rolling checkpoint (``rolling``) says the session
    did no work and it holds nothing to pick up (no next step, file, task, tension, evidence
    or remaining work): a closing ``/mama-save`` after a search is not where the work stopped.
    ``failing``: the checks failing before it; given, a session whose work was only checks
    and saved decisions carries work only when a check's result moved (:func:`moved`).
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


def moved(log: WorkLog, failing: frozenset[str]) -> bool:
    """Whether a session moved the open work: anything beyond running checks and saving
    decisions (editing, tasks, a next step said), or a check that failed where it had not
    been failing, or a failing check that passed. Rows from before ``worked`` was recorded:
    as their ``work`` says."""
    if log.worked is None or set(log.worked) - {"ran", "decisions"}:
        return True
    failed = {check for check, _ in log.failing}
    return bool(failed - failing or failing & set(log.passed))


def resume_point(store: Store, project: str) -> ResumePoint:
    """Where ``project``'s work stopped (see the module docstring)."""
    recent = store.memories.latest(project=project, type="checkpoint", limit=RECENT)
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
        if carries_work(m, rolling.get(m.session_id or ""), frozenset(failing)):
            working.append(m)
        log = WorkLog.of(m)
        if log is not None and log.worked is not None:
            failing = {k: v for k, v in failing.items() if k not in log.passed}
            failing |= dict(log.failing)
    lead = working[-1] if working else recent[0]
    then = None
    if lead.session_id:
        mates = [m for m in recent if m.session_id == lead.session_id and m.id != lead.id]
        written = next((m for m in [lead, *mates] if not m.rolling), None)
        auto = next((m for m in [lead, *mates] if m.rolling), None)
        if written is not None:  # Claude's own words tell the story best
            moved = _moved_at(auto) if auto is not None else 0
            if auto is not None and moved > written.updated_at and carries_work(auto):
                then = auto  # the work moved on after Claude wrote its checkpoint
            lead = written
    newer = [
        m
        for m in recent
        if m.updated_at > lead.updated_at
        and m.id != getattr(then, "id", None)
        and (not lead.session_id or m.session_id != lead.session_id)
    ]
    # One entry a later session: its rolling checkpoint tells what it did.
    later = {(m.session_id or m.id): m for m in newer[::-1] if not m.session_id or m.rolling}
    later |= {m.session_id: m for m in newer[::-1] if m.session_id and m.session_id not in later}
    since = sorted(later.values(), key=lambda m: m.updated_at)
    told = {lead.id, getattr(then, "id", None)}
    own = {
        check
        for cp in (lead, then, rolling.get(lead.session_id or ""))
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
        failing=tuple(text for check, text in failing.items() if check not in own),
        earlier=tuple(earlier[:RECENT_WORK]),
        later=tuple(since),
    )


def since_line(later: list[MemoryRecord]) -> str:
    """What later checkpoints without work did, in one line ("" when there were none)."""
    groups: dict[str, list[MemoryRecord]] = {}
    for m in later:
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
    if not log.worked or set(log.worked) - {"ran", "decisions"}:
        return ""
    did = []
    if "ran" in log.worked:
        checks = [check for check, _ in log.failing] + [*log.passed, *log.checks]
        ran = ", ".join(f"`{clip(c, 60)}`" for c in list(dict.fromkeys(checks))[:2]) or "checks"
        result = "passed" if log.passed else "its output showed no result"
        did.append(f"ran {ran}: " + ("still failing" if log.failing else result))
    if "decisions" in log.worked:
        n = len(log.decisions)
        did.append(f"saved {_COUNT.get(n, str(n))} decision{'s' if n != 1 else ''}")
    return " and ".join(did)


class _Said:
    """Remembers what the story already says, so that nothing is said twice."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []  # (normalised, as said)

    def fresh(self, items: list[str]) -> list[str]:
        kept = []
        for item in items:
            norm = _norm(item)
            if not norm or any(_same(norm, item, *s) for s in self.seen):
                continue
            self.seen.append((norm, str(item)))
            kept.append(item)
        return kept


def _same(a: str, raw_a: str, b: str, raw_b: str) -> bool:
    """Whether two items say the same thing: equal, or one holds the whole of the other
    ("STATS is not defined" and "STATS is not defined (dec_1)", in either order), or they
    are one item of open work (:func:`.words.same_item`)."""
    if a == b or (min(len(a), len(b)) >= 20 and (a in b or b in a)):
        return True
    return same_item(strip_cue(raw_a), strip_cue(raw_b))


def _norm(text: str) -> str:
    return " ".join(strip_cue(str(text)).lower().strip(" .").split())


def story(
    point: ResumePoint, decisions: list[DecisionView], carried: Sequence[OpenStep] = ()
) -> Story:
    """The cliffhanger's sections for ``point`` and ``decisions`` (current, with predecessors).

    Each decision is told with its line ("D1 …") and its own open ends (its unresolved items
    and HIGH next step, not said elsewhere). ``carried``: the next steps earlier sessions left
    open (:attr:`ResumePoint.earlier`), the first the next step when the checkpoint names none,
    the others told as remaining. Lists come longest first; the template cuts them to its limit.
    """
    said = _Said()
    cp = point.checkpoint
    c: dict[str, Any] = (cp.continuity or {}) if cp is not None else {}
    t: dict[str, Any] = (cp.tension or {}) if cp is not None else {}
    out = Story(cp=cp, auto=cp is not None and cp.rolling, since=point.since)
    if cp is not None:
        out.did = said.fresh([clip(_did(cp), 300)])[:1]
        out.date = day(cp.updated_at)
        out.stopped = said.fresh([clip(c.get("stopped_at", ""), 240)])
        out.now = said.fresh([clip(c.get("now", ""), 240)])
        out.to = said.fresh([clip(c.get("target", ""), 240)])
    # What a decision told beside it states is decided, not remaining (as search answers say).
    decided = [d.m for d in decisions]
    out.next = _next(c, decisions, said, decided)
    steps = [s for s in carried if s.told and not _stated(s.told, decided)]
    if out.next is None and steps:
        first = steps.pop(0)
        why = f"still open from {first.holder}" + (f" ({first.done} done)" if first.done else "")
        out.next = NextStep(strip_cue(first.told), first.priority or "MEDIUM", why)
        if not said.fresh([out.next.step]):
            out.next = None
    out.done = said.fresh([clip(x, 200) for x in _done(cp)][::-1])[::-1]
    tasks = [x for x in c.get("tasks") or [] if isinstance(x, dict) and x.get("status") != "done"]
    out.tasks = said.fresh([_task(x) for x in tasks])
    said.fresh([clip(x.get("task", ""), 200) for x in tasks])  # a task is not also "remains"
    # What remains is told as remaining, even when it is a gap ("no size bound yet").
    left = [str(x) for x in c.get("remains") or [] if not _stated(str(x), decided)]
    left += [strip_cue(s.told) for s in steps]
    out.remains = said.fresh([clip(x, 200) for x in left])
    unresolved = [str(x) for key in ("concerns", "risks", "trade_offs") for x in t.get(key) or []]
    unresolved += list(point.failing)
    unresolved += [_question(q) for q in t.get("questions") or [] if isinstance(q, dict)]
    out.unresolved = said.fresh([clip(x, 240) for x in unresolved])
    out.confirmed = said.fresh(
        [_pair("", x.get("claim"), "evidence", x.get("evidence")) for x in _dicts(c, "confirmed")]
        + [
            _pair("found: ", x.get("finding"), "evidence", x.get("evidence"))
            + (f"; impact: {clip(x['impact'], 160)}" if x.get("impact") else "")
            for x in _dicts(c, "discoveries")
        ]
    )
    out.skipped = said.fresh(
        [
            _pair("", x.get("item"), "reason", x.get("reason"))
            + (f"; risk: {clip(x['risk'], 160)}" if x.get("risk") else "")
            for x in _dicts(c, "skipped")
        ]
    )
    out.unknown = said.fresh(
        [
            _pair("", x.get("assumption"), "checked", x.get("check_when"))
            for x in _dicts(c, "unknowns")
        ]
    )
    if point.then is not None:
        files = point.then.continuity.get("open_files") or []
        out.then = clip(_did(point.then, latest=True), 200) + (
            f"; changed {', '.join(files[:4])}" if files else ""
        )
    out.decisions = [_decision(i, d, said) for i, d in enumerate(decisions, 1)]
    return out


def _did(cp: MemoryRecord, *, latest: bool = False) -> str:
    """What the checkpoint says was done: Claude's own summary, or a rolling one's requests and
    last words (:meth:`.worklog.WorkLog.did`; ``latest``: its latest request only)."""
    log = WorkLog.of(cp)
    return cp.content if log is None else log.did(latest=latest)


def _done(cp: MemoryRecord | None) -> list[str]:
    """What the checkpoint lists as done, the files a rolling one changed last."""
    if cp is None:
        return []
    log = WorkLog.of(cp)
    changed = log.changed_line() if log is not None else ""
    return [str(x) for x in (cp.continuity or {}).get("done") or []] + (
        [changed] if changed else []
    )


def _moved_at(m: MemoryRecord) -> int:
    """When a rolling checkpoint's work last moved on (its last update, for older rows)."""
    log = WorkLog.of(m)
    return (log.moved_at if log is not None else None) or m.updated_at


def _dicts(c: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [x for x in c.get(key) or [] if isinstance(x, dict)]


def _pair(lead: str, what: Any, label: str, detail: Any) -> str:
    text = lead + clip(what, 200)
    return text + (f" — {label}: {clip(detail, 200)}" if detail else "")


def _task(x: dict[str, Any]) -> str:
    status = str(x.get("status") or "in_progress").replace("_", " ")
    if x.get("blocker"):  # "(blocked: X)", or "(in progress; blocked: X)"
        status = (
            "" if status == "blocked" else f"{status}; "
        ) + f"blocked: {clip(x['blocker'], 120)}"
    return f"{clip(x.get('task', ''), 200)} ({status})"


def _question(q: dict[str, Any]) -> str:
    options = " / ".join(str(o) for o in q.get("options") or [])
    text = str(q.get("question", ""))
    text += f" — options: {options}" if options else ""
    return text + ("; a decision is needed" if q.get("decision_needed") else "")


def _stated(step: str, decided: list[MemoryRecord]) -> bool:
    """Whether one of the ``decided`` choices states ``step`` (:func:`.freshness.unstated`)."""
    return not unstated([OpenStep(step, "", "")], decided)


def _next(
    c: dict[str, Any], decisions: list[DecisionView], said: _Said, decided: list[MemoryRecord]
) -> NextStep | None:
    """The next step: the first action given, else the checkpoint's first next step a
    current decision does not state, else a current decision's HIGH next step."""
    first = c.get("first_action")
    step = None
    if isinstance(first, dict) and first.get("action"):
        files = tuple(str(f) for f in first.get("files") or [])
        why = str(first.get("why_first", ""))
        action = strip_cue(str(first["action"]))
        # Its own priority: the one the same step has among the next steps, else HIGH.
        same = [
            str(n.get("priority") or "")
            for n in c.get("next_steps") or []
            if isinstance(n, dict)
            and covers(str(n.get("step", "")), action)
            and covers(action, str(n.get("step", "")))
        ]
        step = NextStep(action, next(iter(same), "") or "HIGH", why, files)
    else:
        steps = [
            s
            for s in c.get("next_steps") or []
            if isinstance(s, dict) and s.get("step") and not _stated(str(s["step"]), decided)
        ]
        if steps:
            why = str(steps[0].get("context", ""))
            priority = str(steps[0].get("priority") or "MEDIUM")
            step = NextStep(strip_cue(str(steps[0]["step"])), priority, _WHY.get(why, why))
        for d in decisions if step is None else []:
            if d.high:
                step = NextStep(d.high[0], "HIGH", f"next step of {d.m.id}")
                break
    if step is None or not said.fresh([step.step]):
        return None
    return step


def _decision(i: int, d: DecisionView, said: _Said) -> DecisionView:
    """ "D1 id [topic]: choice > alternative (confidence) — why not the alternative"."""
    m = d.m
    line = f"D{i} {m.id}" + (f" [{m.topic}]" if m.topic else "") + f": {clip(m.content, 160)}"
    if m.outcome_status != "PENDING":
        line += f" ({m.outcome_status})"
    old = d.replaced[0] if d.replaced else None
    alternatives = [
        a
        for a in (m.reasoning or {}).get("alternatives_considered") or []
        if isinstance(a, dict) and a.get("option")
    ]
    reason = clip((m.reasoning or {}).get("primary", ""), 160)
    told = because(reason)  # the reason as it is when it says "because" itself
    why = f"chosen {told}" if told != reason else f"chosen: {reason}"
    if old is not None:
        line += f" > {clip(old.content, 100)} ({old.id})"
        failed = old.outcome_status not in ("PENDING", "SUPERSEDED")
        details = clip((old.outcome or {}).get("details", ""), 160)
        if failed:
            why = f"{old.outcome_status}: {details}; " * bool(details) + why
    elif alternatives:
        line += f" > {clip(alternatives[0]['option'], 100)}"
        if alternatives[0].get("rejected_because"):
            why = f"not it: {clip(alternatives[0]['rejected_because'], 160).rstrip('.')}; {why}"
    line += f" ({confidence(m.confidence)}) — {why}"
    if d.learned:
        line += f"; {d.learned}"
    if d.hub:
        line += f" [hub: {d.hub} memories rest on it]"
    open_ = said.fresh([clip(x, 160) for x in d.doubts])
    high = said.fresh(d.high)
    extra = "; ".join(open_[:2])
    if high:
        extra += (" · " if extra else "") + f"next (HIGH): {clip(high[0], 160)}"
    return replace(d, line=line, open=extra)
