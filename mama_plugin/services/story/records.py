"""The story's typed records, declared once: what the services hand the templates.

:class:`OpenStep` is a next step no later work shows done (:func:`.freshness.open_steps`);
:class:`DecisionView` a current decision as the story tells it (:func:`.briefing.
current_decisions`); :class:`NextStep` the one step to take first; :class:`Story` the
cliffhanger's sections (:func:`.cliffhanger.story`, :func:`.briefing.gather`), which the
session start and ``load_checkpoint`` render. Templates receive these records (a
:class:`Story` as its fields, :meth:`Story.context`); JSON answers their ``as_dict``.
Standard library only (the session-start hook may use them).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from ...storage import MemoryRecord, SuggestionRecord


def mark(memory_id: str, status: str, current_id: str) -> str:
    """A memory's status as a result list tells it: "current", "superseded → dec_…"."""
    return status if current_id == memory_id else f"superseded → {current_id}"


@dataclass(frozen=True)
class OpenStep:
    """A next step of a memory (``holder``) that no later memory shows done.

    A step shown done in part has ``left`` (the parts still open) and ``done`` (the parts
    done since).
    """

    step: str
    priority: str
    holder: str
    left: str = ""
    done: str = ""

    @property
    def told(self) -> str:
        """What is still to do: the parts left, or the whole step."""
        return self.left or self.step

    def as_dict(self) -> dict[str, Any]:
        """JSON form (search answers' ``status.next_steps``)."""
        out: dict[str, Any] = {"step": self.step, "priority": self.priority, "from": self.holder}
        if self.left:
            out |= {"left": self.left, "done": self.done}
        return out


@dataclass
class DecisionView:
    """A current decision as the story tells it: what it replaced, what later work left open
    of it (``high``: its HIGH next steps' open parts; ``doubts``: its unsettled concerns and
    risks), and once told, its line ("D1 …") and its own open ends not said elsewhere; its
    verify line when a file it cites changed since it was decided; what another memory's
    outcome did to its confidence; whether many memories rest on it."""

    m: MemoryRecord
    replaced: list[MemoryRecord] = field(default_factory=list)
    high: list[str] = field(default_factory=list)
    doubts: list[str] = field(default_factory=list)
    line: str = ""
    brief: str = ""  # the line without why it was chosen (what the one it replaced met kept)
    open: str = ""
    verify: str = ""  # "verify: <path> changed since this was decided …" (.checked)
    learned: str = ""  # "confidence was 0.7 before dec_… FAILED": another outcome's move (.trust)
    hub: int = 0  # how many memories reference it, when it is a hub (.trust)


@dataclass(frozen=True)
class NextStep:
    """The step to take first, and why it comes first."""

    step: str
    priority: str
    why: str = ""
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Proposed:
    """A link suggestion waiting for a verdict, with the memories at its two ends."""

    s: SuggestionRecord
    a: MemoryRecord
    b: MemoryRecord


@dataclass
class Story:
    """The cliffhanger's sections: where the work stopped, as it was left, and what comes next.

    Each list is longest first (the template cuts it to its limit); every item is said once.
    ``waiting`` and ``proposed`` are the session start's (decisions past their follow-up age
    without an outcome; links waiting for a verdict), with how many there are in all.
    """

    cp: MemoryRecord | None = None
    auto: bool = False  # ``cp`` is a rolling checkpoint
    since: str = ""  # what later sessions without work did
    did: list[str] = field(default_factory=list)
    date: str = ""
    stopped: list[str] = field(default_factory=list)
    now: list[str] = field(default_factory=list)
    to: list[str] = field(default_factory=list)
    next: NextStep | None = None
    done: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    remains: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    confirmed: list[str] = field(default_factory=list)
    # Confirmed items whose file changed since: "was confirmed; <path> changed since: …".
    unconfirmed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    then: str = ""  # what the same session did after ``cp``
    decisions: list[DecisionView] = field(default_factory=list)
    waiting: list[MemoryRecord] = field(default_factory=list)
    waiting_total: int = 0
    followup_days: int = 0
    proposed: list[Proposed] = field(default_factory=list)
    proposed_total: int = 0
    # The project's current decisions by topic (topic, how many), the most decided first: what
    # exists, said once, so that Claude searches when a prompt touches one of them.
    topics: list[tuple[str, int]] = field(default_factory=list)
    # The user's own memories every project inherits (the global scope, services/saving/scopes.py).
    everywhere: list[MemoryRecord] = field(default_factory=list)
    verify: str = ""  # the checkpoint's verify line when a file it cites changed (.checked)
    checked_later: bool = False  # a change git was not asked about yet: not cached as final

    def context(self) -> dict[str, Any]:
        """The template's context: one name a section."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class TopicRow:
    """One memory of a topic as ``search_by_topic`` lists it, with what stands in its place
    (``collapsed``: the checkpoints of its session folded into it)."""

    id: str
    type: str
    content: str
    status: str
    current_id: str
    outcome: str
    failure_reason: str
    reason: str
    created_at: int
    collapsed: tuple[str, ...] = ()
    # A memory of another topic, reached by an evolution link: the memory it was reached
    # from, the link's word, and which way the link runs — "out": from this memory to
    # linked_from; "in": from linked_from to this one ("" for the topic's own memories).
    linked_from: str = ""
    relationship: str = ""
    direction: str = ""

    @property
    def via(self) -> str:
        """How a linked row was reached, as its line tells it ("supersedes d1", "d5 supersedes
        it"); "" for the topic's own memories."""
        if not self.linked_from:
            return ""
        if self.direction == "out":
            return f"{self.relationship} {self.linked_from}"
        return f"{self.linked_from} {self.relationship} it"

    @property
    def mark(self) -> str:
        """Its status, or what superseded it (:func:`mark`)."""
        return mark(self.id, self.status, self.current_id)

    def as_dict(self) -> dict[str, Any]:
        """JSON form (the tool's ``chain``): ``collapsed`` only when something was folded,
        ``linked_from``, ``relationship`` and ``direction`` only for a memory of another
        topic."""
        optional = ("collapsed", "linked_from", "relationship", "direction")
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in optional}
        if self.linked_from:
            out |= {
                "linked_from": self.linked_from,
                "relationship": self.relationship,
                "direction": self.direction,
            }
        return out | ({"collapsed": list(self.collapsed)} if self.collapsed else {})
