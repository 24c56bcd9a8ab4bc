"""The story told from the resume point: where the work stopped, as it was left.

Shared by the session start (:mod:`.briefing`) and ``load_checkpoint`` (``/mama-resume``).

The checkpoint it is told from is the resume point (:mod:`.resume`).

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

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ...storage import MemoryRecord
from ...text import strip_cue
from ..render import because, clip, confidence, day
from .done import copied_from, copy_of
from .freshness import unstated
from .records import DecisionView, NextStep, OpenStep, Story
from .resume import ResumePoint
from .words import bag, covers, parts, same_item, step_object
from .worklog import WorkLog

_RAN = re.compile(r"^I had (?:just )?run (`[^`]+`)")  # "Where I stopped" on a command
_STATUS = re.compile(r"\s\((?:pending|in progress|blocked)(?:[;:][^)]*)?\)$")  # _task's
_UNRESOLVED = ("concerns", "risks", "trade_offs")  # a checkpoint's tension, told as unresolved
_WHY = {"from Claude's last message": "what I said comes next", "in progress": "in progress"}


class _Said:
    """Remembers what the story already says, so that nothing is said twice; items of open
    work (``fresh(…, work="step")`` or ``"problem"``) are also one when they are one item
    (:func:`.words.same_item`: in other words, when they are of a kind)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []  # (normalised, as said, its kind of work)

    def fresh(self, items: list[str], *, work: str = "") -> list[str]:
        kept = []
        for item in items:
            norm = _norm(item)
            if not norm or any(_same(norm, s) for s, _, _ in self.seen):
                continue
            raw = _STATUS.sub("", strip_cue(str(item)))  # a task by its words, not its status
            if work and any(
                kind and same_item(raw, r, alike=kind == work) for _, r, kind in self.seen
            ):
                continue
            self.seen.append((norm, raw, work))
            kept.append(item)
        return kept

    def continues(self, work: str, step: str) -> bool:
        """Whether a step told already carries on ``step`` of ``work`` (a decision with that
        next step): one of its parts says mostly that work's words and shares one of the
        step's ("finish the LRU switch" for "LRU eviction for TTLCache … Switch TTLCache to an
        OrderedDict")."""
        return any(
            kind == "step"
            and any(covers(work, part) and bag(part) & bag(step) for part in parts(raw))
            for _, raw, kind in self.seen
        )


def _same(a: str, b: str) -> bool:
    """Whether two items say the same thing: equal, or one holds the whole of the other
    ("STATS is not defined" and "STATS is not defined (dec_1)", in either order)."""
    return a == b or (min(len(a), len(b)) >= 20 and (a in b or b in a))


def _norm(text: str) -> str:
    return " ".join(strip_cue(str(text)).lower().strip(" .").split())


def story(
    point: ResumePoint, decisions: list[DecisionView], carried: Sequence[OpenStep] = ()
) -> Story:
    """The cliffhanger's sections for ``point`` and ``decisions`` (current, with predecessors).

    Each decision is told with its line ("D1 …") and its own open ends (its unresolved items
    and HIGH next step, not said elsewhere). ``carried``: the next steps earlier sessions left
    open (:attr:`.resume.ResumePoint.earlier`), the first the next step when the checkpoint
    names none, the others told as remaining. Lists come longest first; the template cuts them
    to its limit.
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
    steps = _one_thread([s for s in carried if s.told and not _stated(s.told, decided)], point)
    if out.next is None and steps:
        first = steps.pop(0)
        why = f"still open from {first.holder}" + (f" ({first.done} done)" if first.done else "")
        out.next = NextStep(strip_cue(first.told), first.priority or "MEDIUM", why)
        if not said.fresh([out.next.step], work="step"):
            out.next = None
    out.done = said.fresh([clip(x, 200) for x in _done(cp)][::-1])[::-1]
    tasks = [x for x in c.get("tasks") or [] if isinstance(x, dict) and x.get("status") != "done"]
    if out.next is not None:  # the task the next step carries on is told with it, not again
        going = next(
            (
                x
                for x in tasks
                if x.get("status") == "in_progress"
                and _carries_on(out.next.step, str(x.get("task", "")))
            ),
            None,
        )
        if going is not None:
            tasks.remove(going)
            task = clip(going.get("task", ""), 120)
            blocked = f"; blocked: {clip(going['blocker'], 120)}" if going.get("blocker") else ""
            out.next = replace(out.next, why=f"for the task in progress, “{task}”{blocked}")
            said.fresh([task], work="step")
    out.tasks = said.fresh([_task(x) for x in tasks], work="step")
    said.fresh([clip(x.get("task", ""), 200) for x in tasks], work="step")  # not also "remains"
    # What remains is told as remaining, even when it is a gap ("no size bound yet").
    left = [str(x) for x in c.get("remains") or [] if not _stated(str(x), decided)]
    left += [strip_cue(s.told) for s in steps]
    out.remains = said.fresh([clip(x, 200) for x in left], work="step")
    # What the same session found unresolved, beside the checkpoint Claude wrote, is open too.
    later = (point.mate.tension or {}) if point.mate is not None else {}
    unresolved = [
        str(x) for tension in (t, later) for key in _UNRESOLVED for x in tension.get(key) or []
    ]
    unresolved += list(point.failing)
    unresolved += [_question(q) for q in t.get("questions") or [] if isinstance(q, dict)]
    out.unresolved = said.fresh([clip(x, 240) for x in unresolved], work="problem")
    out.stopped = [_stopped_on_failure(x, out.unresolved) for x in out.stopped]
    # A check confirmed by the very run "Where I stopped" tells is not told again.
    ran = _RAN.match(out.stopped[0]) if out.stopped else None
    shown = [
        x
        for x in _dicts(c, "confirmed")
        if not (ran and str(x.get("evidence", "")).startswith(f"{ran.group(1)} exited 0"))
    ]
    out.confirmed = said.fresh(
        [_pair("", x.get("claim"), "evidence", x.get("evidence")) for x in shown]
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


def _one_thread(steps: list[OpenStep], point: ResumePoint) -> list[OpenStep]:
    """The steps earlier sessions left open, without a task that was in progress there when
    another step of the same checkpoint carries it on (the one the session said came next)."""
    running = {m.id: _in_progress(m) for m in point.earlier}
    return [
        s
        for s in steps
        if s.step not in running.get(s.holder, set())
        or not any(
            o is not s and o.holder == s.holder and _carries_on(o.told, s.step) for o in steps
        )
    ]


def _in_progress(m: MemoryRecord) -> set[str]:
    """The next steps a rolling checkpoint took from its session's tasks in progress."""
    steps = (m.continuity or {}).get("next_steps") or []
    return {
        str(n.get("step", ""))
        for n in steps
        if isinstance(n, dict) and n.get("context") == "in progress"
    }


def _carries_on(step: str, task: str) -> bool:
    """Whether ``step`` carries on ``task`` (one in progress): some part of it acts on what the
    task names ("write the --serve flag …" in "Add a serve mode to shop/app.py"), a word of
    their objects in common."""
    named = bag(step_object(task))
    return any(bag(step_object(part)) & named for part in parts(step))


_STOPPED_ON = re.compile(r"^I had (just )?run (`[^`]+`) \((run |rerun |re-run )?([^)]+)\): (.*)$")


def _stopped_on_failure(stopped: str, unresolved: list[str]) -> str:
    """Where the work stopped on a command whose failure Unresolved tells in full: by what it
    was for, not the command again ("I had just run the new stats test: it failed (exit 1) —
    see Unresolved"; "… the command for “startup check”: …" when it was not said as a run)."""
    found = _STOPPED_ON.match(stopped)
    if found is None:
        return stopped
    just, command, verb, purpose, rest = found.groups()
    if not any(
        x.startswith((f"{command} failed", f"{command} was interrupted")) for x in unresolved
    ):
        return stopped
    what = purpose if verb else f"the command for “{purpose}”"
    return f"I had {just or ''}run {what}: {rest} — see Unresolved"


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
            if isinstance(s, dict)
            and s.get("step")
            and not _stated(str(s["step"]), decided)
            and not _done_since(s, decisions)
        ]
        if steps:
            why = str(steps[0].get("context", ""))
            priority = str(steps[0].get("priority") or "MEDIUM")
            step = NextStep(strip_cue(str(steps[0]["step"])), priority, _WHY.get(why, why))
        for d in decisions if step is None else []:
            if d.high:
                step = NextStep(d.high[0], "HIGH", copy_of(d.m.id))
                break
    if step is None or not said.fresh([step.step], work="step"):
        return None
    return step


def _done_since(step: dict[str, Any], decisions: list[DecisionView]) -> bool:
    """Whether a decision's next step the checkpoint carries ("next step of dec_…") is done by
    now: the decision is told, and its open HIGH steps (``high``) no longer hold it."""
    holder = copied_from(step)
    told = next((d for d in decisions if d.m.id == holder), None)
    text = strip_cue(str(step.get("step", "")))
    return told is not None and not any(covers(h, text) for h in told.high)


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
    what_failed = ""  # what happened to the decision it replaced: kept by the brief line too
    if old is not None:
        line += f" > {clip(old.content, 100)} ({old.id})"
        failed = old.outcome_status not in ("PENDING", "SUPERSEDED")
        details = clip((old.outcome or {}).get("details", ""), 160)
        if failed and details:
            what_failed = f"{old.outcome_status}: {details}"
            why = f"{what_failed}; {why}"
    elif alternatives:
        line += f" > {clip(alternatives[0]['option'], 100)}"
        if alternatives[0].get("rejected_because"):
            why = f"not it: {clip(alternatives[0]['rejected_because'], 160).rstrip('.')}; {why}"
    line += f" ({confidence(m.confidence)})"
    brief = line + f" — {what_failed}" * bool(what_failed)
    line += f" — {why}"
    if d.learned:
        line += f"; {d.learned}"
    if d.hub:
        line += f" [hub: {d.hub} memories rest on it]"
    open_ = said.fresh([clip(x, 160) for x in d.doubts], work="problem")
    high = said.fresh([h for h in d.high if not said.continues(f"{m.content} {h}", h)], work="step")
    extra = "; ".join(open_[:2])
    if high:
        extra += (" · " if extra else "") + f"next (HIGH): {clip(high[0], 160)}"
    return replace(d, line=line, brief=brief, open=extra)
