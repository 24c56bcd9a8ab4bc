"""The labelled sequences of ``python -m benchmarks story``: loaded, checked, each start's labels.

``benchmarks/data/story_sequences.json`` labels every *session* once (its ``about`` and the
data README say how): the work it did (``changes``: it changed files), the items it leaves
open (``opens``) and those it closes (``closes``), the decisions it saves (``decides``,
``supersedes``), whether it is ``trivial``, and ``marks``: phrases that name its work. A
sequence lists sessions (a ``forget`` step between them deletes what a session saved). The
labels of each start follow from them, the same rule for every start (:func:`starts`):

- **resume**: the last session that did substantive work — it changed files, or its checks,
  tasks or saved decisions moved the open items (opened one not open yet, or closed one that
  was open); a session that only *said* an item (``said``: a prose answer, a look at the code)
  moves the items but is no work. Before any substantive work, the last session that opened
  an item; before that, None;
- **open**: the items opened and not closed since; **closed**: those closed (they must not
  be told as open); **decisions**: the decisions saved, not superseded, not forgotten.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mama_plugin.errors import MamaError

from .checkout import DATA, FIXTURES
from .coauthor import load_labels

SEQUENCES = DATA / "story_sequences.json"
RECORDED = DATA / "story_transcripts"  # this benchmark's own recordings (story_record.py)


@dataclass(frozen=True)
class Item:
    """An open item: its id and the phrases that say it (a line that matches one tells it)."""

    id: str
    says: tuple[str, ...]


@dataclass(frozen=True)
class Session:
    """One labelled session: its transcript (or its first ``turns`` turns) and what it did."""

    id: str
    project: str
    transcript: Path
    turns: int | None
    marks: tuple[str, ...]
    changes: bool = False
    said: bool = False  # its items were only said (prose, a look): they move, it is no work
    trivial: bool = False
    opens: tuple[str, ...] = ()
    closes: tuple[str, ...] = ()
    decides: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    actions: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Start:
    """What the start after one step of a sequence should tell."""

    step: int  # 1-based
    resume: str | None  # the session (its place in the sequence, "3") to resume from
    open: tuple[str, ...]
    closed: tuple[str, ...]
    decisions: tuple[str, ...]


@dataclass(frozen=True)
class Sequence:
    """A labelled sequence of one project: its steps (session ids, or ("forget", place))."""

    name: str
    project: str
    cases: tuple[str, ...]
    steps: tuple[tuple[str, str], ...]  # ("session", id) or ("forget", place of the session)

    def places(self) -> dict[str, str]:
        """The place in the sequence ("1", "2", …) of each session step, by step index."""
        out, n = {}, 0
        for i, (kind, _) in enumerate(self.steps):
            if kind == "session":
                n += 1
                out[str(i)] = str(n)
        return out


@dataclass(frozen=True)
class Labels:
    """The whole labelled set."""

    about: str
    items: dict[str, dict[str, Item]]  # project → id → item
    decisions: dict[str, dict[str, str]]  # project → key → the phrase that says it
    sessions: dict[str, Session]
    sequences: list[Sequence]


def load(
    path: Path = SEQUENCES, *, scripted: dict[str, dict[int, list[Any]]] | None = None
) -> Labels:
    """The labelled set; MamaError names what is wrong (an unknown id, a missing transcript).

    ``scripted``: the saves of ``answers_story.json`` by session name (:func:`.answers.load_story`),
    for the sessions whose ``actions`` say ``"answers_story"``.
    """
    data = load_labels(path, "story")
    items = {
        p: {i: Item(i, tuple(says)) for i, says in spec["items"].items()}
        for p, spec in data["projects"].items()
    }
    decisions = {p: dict(spec.get("decisions") or {}) for p, spec in data["projects"].items()}
    sessions = {}
    for sid, s in data["sessions"].items():
        actions = s.get("actions") or {}
        if actions == "answers_story":
            found = (scripted or {}).get(s["transcript"], {})
            actions = {str(t): a for t, a in found.items() if t <= (s.get("turns") or 99)}
        sessions[sid] = Session(
            sid,
            s["project"],
            transcript_path(s["transcript"]),
            s.get("turns"),
            tuple(s["marks"]),
            bool(s.get("changes")),
            bool(s.get("said")),
            bool(s.get("trivial")),
            tuple(s.get("opens") or ()),
            tuple(s.get("closes") or ()),
            tuple(s.get("decides") or ()),
            tuple(s.get("supersedes") or ()),
            actions,
        )
    sequences = [_sequence(q, sessions) for q in data["sequences"]]
    labels = Labels(data["about"], items, decisions, sessions, sequences)
    _check(labels)
    return labels


def transcript_path(name: str) -> Path:
    """A transcript by name: this benchmark's recordings first, then the test fixtures."""
    for folder in (RECORDED, FIXTURES):
        if (folder / f"{name}.jsonl").is_file():
            return folder / f"{name}.jsonl"
    raise MamaError(f"no transcript {name}.jsonl in {RECORDED} or {FIXTURES}")


def _sequence(q: dict[str, Any], sessions: dict[str, Session]) -> Sequence:
    steps: list[tuple[str, str]] = []
    for step in q["steps"]:
        if isinstance(step, dict):  # {"forget": place}: what that session saved is forgotten
            steps.append(("forget", str(step["forget"])))
        elif step in sessions:
            steps.append(("session", step))
        else:
            raise MamaError(f"story sequence {q['name']}: no session {step!r}")
    projects = {sessions[s].project for k, s in steps if k == "session"}
    if len(projects) != 1:
        raise MamaError(f"story sequence {q['name']}: sessions of {sorted(projects)}, not one")
    return Sequence(q["name"], projects.pop(), tuple(q.get("cases") or ()), tuple(steps))


def _check(labels: Labels) -> None:
    """Every id a session names is known; every sequence has 3 to 8 sessions."""
    for s in labels.sessions.values():
        known = labels.items.get(s.project, {})
        unknown = [i for i in (*s.opens, *s.closes) if i not in known]
        unknown += [d for d in (*s.decides, *s.supersedes) if d not in labels.decisions[s.project]]
        if unknown:
            raise MamaError(f"story session {s.id}: unknown ids {unknown}")
    for q in labels.sequences:
        n = sum(kind == "session" for kind, _ in q.steps)
        if not 3 <= n <= 8:
            raise MamaError(f"story sequence {q.name}: {n} sessions, not 3 to 8")


def starts(labels: Labels, q: Sequence) -> list[Start]:
    """The labels of the start after each step of ``q`` (see the module docstring)."""
    out = []
    open_: list[str] = []
    closed: list[str] = []
    current: list[str] = []
    saved: dict[str, list[str]] = {}  # place → the decisions that session saved
    resume: str | None = None
    opener: str | None = None  # the last session that opened an item
    places = q.places()
    for i, (kind, ref) in enumerate(q.steps):
        if kind == "forget":
            gone = saved.pop(ref, [])
            current = [d for d in current if d not in gone]
        else:
            s = labels.sessions[ref]
            opened = any(x not in open_ for x in s.opens)
            moved = opened or any(x in open_ for x in s.closes)
            if s.changes or (moved and not s.said):
                resume = places[str(i)]
            elif opened:
                opener = places[str(i)]
            open_ = [x for x in open_ if x not in s.closes]
            open_ += [x for x in s.opens if x not in open_]
            closed = [x for x in closed if x not in s.opens]
            closed += [x for x in s.closes if x not in closed and x not in open_]
            current = [d for d in current if d not in s.supersedes]
            current += [d for d in s.decides if d not in current]
            saved[places[str(i)]] = list(s.decides)
        out.append(Start(i + 1, resume or opener, tuple(open_), tuple(closed), tuple(current)))
    return out
