"""Whether later work shows a next step done: the evidence a later memory holds, rule by rule.

A next step (of a checkpoint or a decision) is done when a memory saved or updated after the
one that holds it shows it done. Each rule reads one kind of evidence of that later memory
(``python -m benchmarks answers`` measures every rule alone and together on labelled steps):

- ``said``: a ``done`` item (what a checkpoint says it did: a completed task, a saved
  ``what_was_done`` line) holds most of the step's stemmed words (:func:`covers`);
- ``tasks``: a task the later checkpoint marks done is the step (most of either's words);
- ``commands``: a step that runs something (``rerun smoke.sh``, "run the smoke test") and a
  check of that command or script the later checkpoint saw exit 0; a step that sets an
  environment variable ("provide PRICE_DB in the dev environment") and a check that passed
  with it set (``PRICE_DB=… python -m shop.app --check``);
- ``phrases``: the step's object (its words after the verb, at least two) all in a ``done``
  item or a passed check;
- ``files``: a step that names a file, and a later edit of that file;
- ``decisions``: a step that is a choice to make ("decide what the smoke test checks") and a
  later decision that holds most of its object's words;
- ``last``: a sentence of the later checkpoint's closing message that reports work (no
  failure, risk, question or next step in it) holds most of the step's words;
- ``asked``: a rolling checkpoint whose turns changed files or passed a check was asked for
  the step (its request holds most of the step's words), every word of the step's object is
  in that request or in what the turn did and reported ("add a size bound to the TTL cache"
  is not done by "Add a TTL cache"), and nothing it left in doubt (its concerns and risks)
  shares a word with the step; never one of the step holder's own session, whose requests may
  have come before the step (:func:`.freshness.open_steps`);
- ``meaning``: a ``done`` item close in meaning (cosine, with the embedder).

``refined`` (a later decision building on the step's holder holds most of the step's object,
its words after the verb), ``moot`` and ``moot_all`` are applied by
:func:`.freshness.open_steps` to the holder itself.

A step of several parts ("write the flag, then rerun smoke.sh") is done only when every part
is. The newest memory that speaks of a step decides: one that lists it as open again (as its
own next step or a pending task) keeps it open, whatever older memories (or its own other
layers) said.

Pure functions over records; standard library only (the session-start hook may use them).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from ..storage import MemoryRecord
from ..text import next_step, remains, split, stem, tension, words

RULES = ("said", "tasks", "commands", "phrases", "files", "decisions", "last", "asked", "meaning",
         "refined", "moot", "moot_all")  # fmt: skip
DEFAULT = (
    "said",
    "tasks",
    "commands",
    "phrases",
    "decisions",
    "asked",
    "refined",
    "moot",
)  # what benchmark `answers` kept (asked, refined: no line dropped wrongly on either set)
COVERAGE = 0.6  # share of a step's words a "done" text must hold to close it
MIN_SHARED = 2  # and at least this many of them
MEANING = 0.8  # cosine a "done" item must reach under the ``meaning`` rule

Similar = Callable[[str, Sequence[str]], float]  # best cosine of a text against others

_PARTS = re.compile(r",?\s*\bthen\b\s*|;\s+|,\s+and\s+(?=(?:re)?run\b)|\s+and\s+(?=(?:re)?run\b)",
                    re.I)  # fmt: skip
_SET = re.compile(r"^\s*(?:set|provide|export|configure)\b", re.I)
_VARIABLE = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b")  # an environment variable's name
_RUN = re.compile(r"^\s*(?:re-?run|run|rerun|execute)\b", re.I)
_VERB = re.compile(r"^\s*[A-Za-z]+\b")
_ARTICLE = re.compile(r"^\s*(?:the|a|an|this|that|its|our)\b", re.I)
_FILE = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:py|sh|md|js|ts|sql|toml|json|ya?ml|cfg|ini|txt)"
    r"|README|CHANGELOG|Makefile|Dockerfile)\b"
)
_TICKED = re.compile(r"`([^`]+)`")
_DECIDE = re.compile(r"^\s*(?:decide|choose|pick|settle|agree|determine)\b", re.I)
_EDIT = re.compile(r"^\s*(?:add|write|document|fix|change|update|implement|edit|create|remove|"
                   r"rename|move|refactor)\b", re.I)  # fmt: skip


@lru_cache(maxsize=4096)
def bag(text: str) -> frozenset[str]:
    """The stemmed content words steps and done items are compared by (cached: the same
    steps and done items are compared again and again)."""
    return frozenset(stem(w) for w in words(text))


def covers(done: str, step: str) -> bool:
    """Whether the ``done`` text holds most of ``step``'s words (stemmed): the step is done."""
    wanted = bag(step)
    shared = len(wanted & bag(done))
    return (
        bool(wanted)
        and shared >= min(MIN_SHARED, len(wanted))
        and (shared / len(wanted) >= COVERAGE)
    )


def parts(step: str) -> list[str]:
    """The parts of a step that does several things in turn ("X, then Y" → X, Y)."""
    found = [p.strip(" .,") for p in _PARTS.split(step)]
    return [p for p in found if len(bag(p)) >= 1] or [step]


@dataclass(frozen=True)
class Later:
    """What one later memory shows: work done, checks passed, files changed, work still open."""

    id: str
    done: list[str] = field(default_factory=list)
    tasks_done: list[str] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)  # commands and what they checked
    changed: list[str] = field(default_factory=list)
    decided: list[str] = field(default_factory=list)
    reported: list[str] = field(default_factory=list)  # work its closing message reports
    still_open: list[str] = field(default_factory=list)  # its own next steps, open tasks
    asked: list[str] = field(default_factory=list)  # what its turns were asked, when they worked
    session: str = ""  # the session it belongs to (its requests may predate what it follows)
    troubled: frozenset[str] = frozenset()  # the words of what went wrong or stays in doubt

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        """Every stemmed word of the texts the word rules compare a step with (a step that
        shares none of them can be shown done only by a command, a file or its meaning)."""
        texts = (*self.done, *self.tasks_done, *self.passed, *self.reported, *self.decided,
                 *self.still_open, *self.asked)  # fmt: skip
        return frozenset().union(*(bag(t) for t in texts))


def _text(item: Any, key: str) -> str:
    return str(item.get(key, "")) if isinstance(item, dict) else str(item)


def doubts(tension: dict[str, Any]) -> list[str]:
    """A memory's concerns and risks: what it left in doubt."""
    return [str(x) for key in ("concerns", "risks") for x in (tension or {}).get(key) or []]


def evidence(m: MemoryRecord) -> Later:
    """What ``m`` shows was done and what it still calls open."""
    c = m.continuity
    steps = [_text(s, "step") for s in c.get("next_steps") or []]
    if m.type == "decision":
        return Later(m.id, decided=[f"{m.topic.replace('_', ' ')}: {m.content}"], still_open=steps)
    tasks = [t for t in c.get("tasks") or [] if isinstance(t, dict)]
    passed = []
    for check in c.get("confirmed") or []:
        if isinstance(check, dict):
            passed += [_text(check, "claim"), *_TICKED.findall(_text(check, "evidence"))]
    changed = [str(e.get("source", "")) for e in m.evidence
               if isinstance(e, dict) and e.get("kind") == "file"]  # fmt: skip
    # The requests of a rolling checkpoint whose turns changed files or passed a check.
    worked = m.metadata.get("auto") and (changed or c.get("open_files") or passed)
    asked = [str(m.metadata.get(k) or "") for k in ("first_request", "request")] if worked else []
    return Later(
        m.id,
        done=[
            d
            for d in (str(x) for x in c.get("done") or [])
            if d.strip() and not d.startswith("Changed ")
        ],
        tasks_done=[_text(t, "task") for t in tasks if t.get("status") == "done"],
        passed=[p for p in passed if p.strip()],
        changed=[*changed, *(str(f) for f in c.get("open_files") or [])],
        reported=[
            x
            for x in split(str(m.metadata.get("last_message") or ""))
            if not (tension(x) or next_step(x) or remains(x) or x.endswith("?"))
        ],
        still_open=[*steps, *(_text(t, "task") for t in tasks if t.get("status") != "done")],
        asked=list(dict.fromkeys(a for a in asked if a.strip())),
        session=m.session_id or "",
        troubled=frozenset().union(*(bag(d) for d in doubts(m.tension))),
    )


def step_object(part: str) -> str:
    """The part without its verb and article: "Add a serve mode to app.py" → "serve mode to …"."""
    rest = _VERB.sub("", part, count=1)
    return _ARTICLE.sub("", rest, count=1)


def _runs(part: str, passed: list[str]) -> bool:
    if _SET.match(part):  # "set PRICE_DB …": a check that passed with PRICE_DB=… given
        names = _VARIABLE.findall(part)
        return bool(names) and all(any(f"{n}=" in p for p in passed) for n in names)
    if not _RUN.match(part):
        return False
    targets = [*_FILE.findall(part), *_TICKED.findall(part)]
    if targets:
        return any(t in p for t in targets for p in passed)
    wanted = bag(step_object(part))
    return bool(wanted) and any(wanted <= bag(p) for p in passed)


def _edits(part: str, changed: list[str]) -> bool:
    if not _EDIT.match(part):
        return False
    targets = _FILE.findall(part)
    return bool(targets) and all(any(t in path for path in changed) for t in targets)


# A done item that denies what it names ("Did not add the expiry test yet") shows nothing
# done: its words cover the step all the same, and the step would leave "Remains" unfinished.
_DENIED = re.compile(
    r"\b(?:not|never|no longer|cannot|unable to|failed to|yet to|still to)\b|n't\b", re.I
)


def affirmed(texts: Iterable[str]) -> list[str]:
    """``texts`` without those that deny something (see ``_DENIED``)."""
    return [t for t in texts if not _DENIED.search(t)]


def _phrase(part: str, texts: list[str]) -> bool:
    wanted = bag(step_object(part))
    return len(wanted) >= MIN_SHARED and any(wanted <= bag(t) for t in texts)


def shows_done(
    part: str, later: Later, rules: Iterable[str] = DEFAULT, similar: Similar | None = None
) -> str:
    """The first rule by which ``later`` shows ``part`` done ("" when none does)."""
    for rule in rules:
        if (
            (rule == "said" and any(covers(d, part) for d in affirmed(later.done)))
            or (rule == "tasks" and any(covers(t, part) or covers(part, t)
                                        for t in later.tasks_done))
            or (rule == "commands" and _runs(part, later.passed))
            or (rule == "phrases" and _phrase(part, [*affirmed(later.done), *later.passed]))
            or (rule == "last" and any(covers(x, part) for x in affirmed(later.reported)))
            or (rule == "files" and _edits(part, later.changed))
            or (rule == "asked" and _asked(part, later))
            or (rule == "decisions" and _DECIDE.match(part) is not None
                and any(covers(d, step_object(part)) for d in later.decided))
            or (rule == "meaning" and similar is not None and affirmed(later.done)
                and similar(part, affirmed(later.done)) >= MEANING)
        ):  # fmt: skip
            return rule
    return ""


def _asked(part: str, later: Later) -> bool:
    """A request of ``later`` holds most of the step, what the step names is all in that
    request or in what the turn did and reported, and nothing it left in doubt touches it."""
    if not later.asked or not bag(part).isdisjoint(later.troubled):
        return False
    texts = (*later.done, *later.tasks_done, *later.passed, *later.changed, *later.reported)
    did = frozenset().union(*(bag(t) for t in texts))
    named = bag(step_object(part))
    return any(covers(a, part) and named <= bag(a) | did for a in later.asked)


def _lists_open(part: str, later: Later) -> bool:
    return any(covers(s, part) and covers(part, s) for s in later.still_open)


def judged_parts(
    step: str,
    later: Sequence[Later],
    rules: Iterable[str] = DEFAULT,
    similar: Similar | None = None,
) -> list[tuple[str, str]]:
    """Each part of ``step`` with the rule that shows it done by ``later`` ("" if open).

    ``later`` is oldest first; each part is judged by the newest memory that speaks of it: a
    memory that lists the part as open again keeps it open unless a newer one shows it done.
    """
    rules = tuple(rules)
    # Every rule but these needs a word of the part in the memory's texts, and so does
    # listing it open (:func:`covers`; a part's object is a suffix of it, its words a subset).
    wordless = tuple(r for r in rules if r in ("commands", "files", "meaning"))
    out = []
    for part in parts(step):
        wanted = bag(part)
        state = ""
        for memory in later:
            if wanted.isdisjoint(memory.vocabulary):
                state = shows_done(part, memory, wordless, similar) or state
            elif _lists_open(part, memory):
                state = ""
            else:
                state = shows_done(part, memory, rules, similar) or state
        out.append((part, state))
    return out


def done_by(
    step: str,
    later: Sequence[Later],
    rules: Iterable[str] = DEFAULT,
    similar: Similar | None = None,
) -> str:
    """Which rule shows ``step`` done by ``later`` (oldest first): every part must be shown
    done (:func:`judged_parts`); "" while any part is open."""
    judged = judged_parts(step, later, rules, similar)
    return judged[0][1] if all(rule for _, rule in judged) else ""
