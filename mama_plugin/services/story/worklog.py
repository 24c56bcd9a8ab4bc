"""What a session's rolling checkpoint records beside its narrative layers, declared once.

The Stop hook's checkpoint (:mod:`.autosave`) keeps, in the memory's ``metadata``, what the
session asked and did: a :class:`WorkLog`. It is written from this one type
(:meth:`WorkLog.metadata`) and read from a memory once (:meth:`WorkLog.of`); no other module
reads those keys, and nothing is parsed back out of the prose the checkpoint shows (its
"Working on: … — last: …" line and its "Changed …" item are composed from these fields).

Standard library only (the session-start hook may use it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...storage import MemoryRecord
from ...text import split
from ..render import clip

MAX_TEXT = 400  # a request or a sentence, as the checkpoint keeps it
LEGACY_CHANGED = "Changed "  # how rows written before ``changed`` was recorded told it


@dataclass(frozen=True)
class WorkLog:
    """A rolling checkpoint's record of its session (``metadata`` of the memory).

    ``work`` is None for rows written before it was recorded (what they hold tells then).
    ``changed`` holds (path as cited, action) for every file the session changed; None for
    rows written before it was recorded, whose ``done`` list tells them as a "Changed …" item.
    """

    request: str = ""  # the latest request
    first_request: str = ""  # the session's first request that did work
    work_requests: int = 0  # how many requests did work
    last_message: str = ""  # Claude's last message (clipped)
    decisions: tuple[str, ...] = ()  # the session's decisions, oldest first
    tool_calls: int = 0
    work: bool | None = None
    activity: str = ""  # what a session without work did ("searched memory")
    moved_at: int | None = None  # when the work last moved on
    changed: tuple[tuple[str, str], ...] | None = None
    # What made it work ("changed", "ran", "tasks", "decisions", "said"); None for older rows.
    worked: tuple[str, ...] | None = None
    failing: tuple[tuple[str, str], ...] = ()  # (check, how it failed) still failing at its end
    passed: tuple[str, ...] = ()  # the checks that passed (and did not fail after)
    checks: tuple[str, ...] = ()  # the checks it ran whose output showed no result

    @classmethod
    def of(cls, m: MemoryRecord) -> WorkLog | None:
        """The record of ``m``, a rolling checkpoint; None for any other memory."""
        return cls.read(m.metadata) if m.rolling else None

    @classmethod
    def read(cls, meta: dict[str, Any]) -> WorkLog:
        """The record a rolling checkpoint's ``metadata`` holds (odd values read as none)."""
        count = meta.get("work_requests")
        moved = meta.get("moved_at")
        changed = meta.get("changed")
        decisions = meta.get("decisions")
        calls = meta.get("tool_calls")
        worked = meta.get("worked")
        failing = meta.get("failing")
        passed = meta.get("passed")
        checks = meta.get("checks")
        return cls(
            request=str(meta.get("request") or ""),
            first_request=str(meta.get("first_request") or ""),
            work_requests=count if isinstance(count, int) and count > 0 else 0,
            last_message=str(meta.get("last_message") or ""),
            decisions=tuple(str(i) for i in decisions) if isinstance(decisions, list) else (),
            tool_calls=calls if isinstance(calls, int) else 0,
            work=bool(meta["work"]) if "work" in meta else None,
            activity=str(meta.get("activity") or ""),
            moved_at=moved if isinstance(moved, int) else None,
            changed=None
            if not isinstance(changed, list)
            else tuple(
                (str(c[0]), str(c[1]))
                for c in changed
                if isinstance(c, list | tuple) and len(c) == 2
            ),
            worked=tuple(str(w) for w in worked) if isinstance(worked, list) else None,
            failing=tuple(
                (str(f[0]), str(f[1]))
                for f in failing
                if isinstance(f, list | tuple) and len(f) == 2
            )
            if isinstance(failing, list)
            else (),
            passed=tuple(str(p) for p in passed) if isinstance(passed, list) else (),
            checks=tuple(str(c) for c in checks) if isinstance(checks, list) else (),
        )

    def metadata(self) -> dict[str, Any]:
        """The memory's ``metadata`` for this record (``moved_at`` only once it is known)."""
        out: dict[str, Any] = {
            "auto": True,
            "request": self.request,
            "first_request": self.first_request,
            "work_requests": self.work_requests,
            "last_message": self.last_message,
            "decisions": list(self.decisions),
            "tool_calls": self.tool_calls,
            "work": bool(self.work),
            "activity": self.activity,
        }
        if self.changed is not None:  # a row from before it was recorded keeps its "Changed …"
            out["changed"] = [list(c) for c in self.changed]
        if self.moved_at is not None:
            out["moved_at"] = self.moved_at
        if self.worked is not None:
            out["worked"] = list(self.worked)
            out["failing"] = [list(f) for f in self.failing]
            out["passed"] = list(self.passed)
            out["checks"] = list(self.checks)
        return out

    @property
    def trivial(self) -> bool:
        """A session that did no work, used no memory tool and saved nothing ("hello"): it
        leaves no lasting memory (``mama gc`` drops its checkpoint, the story never tells it)."""
        return self.work is False and self.activity == "changed nothing" and not self.decisions

    @staticmethod
    def trivial_of(m: MemoryRecord) -> bool:
        """Whether ``m`` is the rolling checkpoint of a trivial session (:attr:`trivial`)."""
        log = WorkLog.of(m)
        return log is not None and log.trivial

    @property
    def started(self) -> str:
        """The first request that did work (the latest when the session has no count yet)."""
        return self.first_request or self.request

    def requests_line(self) -> str:
        """The first request and the latest ("A; then B", "A; then (2 more) D"), or the one."""
        first, latest, count = self.started, self.request, max(self.work_requests, 1)
        if count <= 1 or not latest or latest == first:
            return latest or first
        between = count - 2
        return f"{first}; then {f'({between} more) ' if between else ''}{latest}"

    def last_said(self) -> str:
        """The first sentence of Claude's last message, as the checkpoint's line tells it."""
        sentences = split(self.last_message)
        return clip(sentences[0], MAX_TEXT) if sentences else ""

    def summary(self) -> str:
        """The checkpoint's line: "Working on: <requests> — last: <first sentence>"."""
        line = self.requests_line()
        text = f"Working on: {line}" if line else "Session in progress"
        last = self.last_said()
        return text + (f" — last: {last}" if last else "")

    def did(self, *, latest: bool = False) -> str:
        """What the session did, as the story tells it ("<requests> — <first sentence>";
        ``latest``: only the latest request, not the work it began with)."""
        line = self.request if latest and self.request else self.requests_line()
        last = self.last_said()
        if not line:
            return "Session in progress" + (f" — last: {last}" if last else "")
        return line + (f" — {last}" if last else "")

    def changed_line(self) -> str:
        """ "Changed a.py (edited), b.py (created)" ("" when nothing changed)."""
        files = ", ".join(f"{path} ({action})" for path, action in self.changed or ())
        return f"{LEGACY_CHANGED}{files}" if files else ""

    @staticmethod
    def done_items(m: MemoryRecord) -> list[str]:
        """What ``m`` says it did (its ``done`` list), without the files it changed: those are
        evidence of their own. Rows written before ``changed`` was recorded told them as one
        "Changed …" item, left out here."""
        done = [str(x) for x in (m.continuity or {}).get("done") or []]
        log = WorkLog.of(m)
        if log is None or log.changed is not None:
            return done
        return [d for d in done if not d.startswith(LEGACY_CHANGED)]
