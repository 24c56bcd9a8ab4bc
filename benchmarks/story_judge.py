"""Judge one session start from its text alone: resume point, open items, decisions, tokens.

What the model reads is the only evidence: the text the SessionStart hook injects. It is read
in two parts, each found by the headings of the shipped templates (``templates/story.md.j2``):

- **where it resumes** (:data:`RESUME_PART`): the "What I did" line and the "After that, the
  same session" line, which name the work resumed from ("Where I stopped" names the last
  command, which many sessions share, so it is left out). The start resumes from session
  *k* when a mark of *k* (a phrase naming its work) matches that part better than any other
  session's marks do, at :data:`MATCH` of the mark's content words or more; it resumes from
  none when no mark matches.
- **the open work** (:data:`OPEN_WORK`): the items told under Remains, Tasks, Unresolved, a
  decision's "open:" and "Next step", one item per entry. An entry *tells* a labelled item
  when it matches one of the item's phrases (:func:`.coauthor.matches`: at least 60 % of the
  phrase's content words, by ``mama_plugin.text.words``, and every number it states).

An entry that matches several items tells the ones it matches best (the highest share), so a
failing test and the step that fixes it, which share words, are told apart. A decision is told
when any line matches its phrase; a trivial session is told when any line matches one of its
marks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from mama_plugin.text import estimate_tokens, words

from .coauthor import MATCH_SHARE, matches
from .story_labels import Item, Start

MATCH = MATCH_SHARE
_PRIORITY = re.compile(r"\s\((?:HIGH|MEDIUM|LOW)\)")


@dataclass(frozen=True)
class Heading:
    """Where the template tells open work: a line's lead, and how its entries are cut out."""

    name: str
    lead: str
    entries: Callable[[str, list[str]], list[str]]  # (rest of the line, the lines below)
    why: str


def _joined(rest: str, _below: list[str]) -> list[str]:
    return [x.strip() for x in rest.split("; ") if x.strip()]


def _bullets(_rest: str, below: list[str]) -> list[str]:
    out = []
    for line in below:
        if not line.startswith("- "):
            break
        out.append(line[2:].strip())
    return out


def _decision_open(rest: str, _below: list[str]) -> list[str]:
    parts = [p for chunk in rest.split(" · ") for p in chunk.split("; ")]
    return [p.removeprefix("next (HIGH): ").strip() for p in parts if p.strip()]


def _next_step(rest: str, _below: list[str]) -> list[str]:
    step = _PRIORITY.split(rest, maxsplit=1)[0]
    return [step.split(" — ", 1)[0].strip()]


OPEN_WORK: tuple[Heading, ...] = (
    Heading("remains", "Remains:", _joined, "what the checkpoint says is left, '; '-joined"),
    Heading("tasks", "Tasks:", _joined, "the tasks not done, '; '-joined, each with its status"),
    Heading("unresolved", "Unresolved:", _bullets, "failures, risks and gaps, one '- ' line each"),
    Heading(
        "decision open",
        "open:",
        _decision_open,
        "a decision's own open ends: its doubts, then 'next (HIGH): …'",
    ),
    Heading("next step", "Next step:", _next_step, "the step told first, before its priority"),
)
RESUME_PART = ("What I did", "After that, the same session:")


def open_entries(text: str) -> list[tuple[str, str]]:
    """Every open-work entry of a start: (heading name, entry)."""
    lines = [line.strip() for line in text.splitlines()]
    out = []
    for i, line in enumerate(lines):
        for h in OPEN_WORK:
            if line.startswith(h.lead):
                rest = line[len(h.lead) :].strip()
                out += [(h.name, e) for e in h.entries(rest, lines[i + 1 :])]
                break
    return out


def resume_part(text: str) -> str:
    """The lines that name the work the start resumes from (the part after the date and id)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(RESUME_PART):
            out.append(line.split("):", 1)[-1] if line.startswith("What I did") else line)
    return "\n".join(out)


def share(mark: str, text: str) -> float:
    """How much of ``mark``'s content words ``text`` holds (0 for a mark without any)."""
    wanted = words(mark)
    return len(wanted & words(text)) / len(wanted) if wanted else 0.0


@dataclass
class Judged:
    """One start judged against its labels."""

    tokens: int
    resume_right: bool
    resumed: str | None  # the session place the text resumes from, by its marks
    entries: list[tuple[str, str, list[str], list[str]]]  # heading, entry, open ids, closed ids
    found: list[str]  # labelled open items some entry tells
    twice: list[str]  # labelled items two or more entries tell
    closed_told: list[str]  # closed items told as open (by an entry that tells no open item)
    decisions: list[str]  # labelled current decisions the text tells
    trivial_told: bool
    wanted: Start = field(repr=False, default=Start(0, None, (), (), ()))

    @property
    def correct(self) -> int:
        """Entries that tell a labelled open item."""
        return sum(bool(opens) for _, _, opens, _ in self.entries)


def _told(entry: str, items: list[Item]) -> list[str]:
    """The items ``entry`` tells: of those it matches, the ones it matches best (a failing test
    and the step that fixes it share words; the entry tells the one it says more of)."""
    scores = {
        i.id: max((share(say, entry) for say in i.says if matches(entry, say)), default=0.0)
        for i in items
    }
    best = max(scores.values(), default=0.0)
    return [i for i, s in scores.items() if s and s == best]


def judge(
    text: str,
    wanted: Start,
    items: dict[str, Item],
    marks: dict[str, tuple[str, ...]],
    decisions: dict[str, str],
    trivial: Iterable[str],
) -> Judged:
    """Judge ``text`` (a start) against ``wanted``; ``marks``: each session place's marks so far,
    ``decisions``: each decision key's phrase, ``trivial``: the places of trivial sessions."""
    part = resume_part(text)
    scores = {place: max((share(m, part) for m in ms), default=0.0) for place, ms in marks.items()}
    best = max(scores.values(), default=0.0)
    leaders = [p for p, s in scores.items() if s == best]
    resumed = "+".join(leaders) if best >= MATCH else None  # "2+5": a tie names no one session
    right = best < MATCH if wanted.resume is None else resumed == wanted.resume
    entries = []
    counts: dict[str, int] = {}
    closed_told: list[str] = []
    labelled = [items[i] for i in (*wanted.open, *wanted.closed)]
    for heading, entry in open_entries(text):
        told_here = _told(entry, labelled)
        opens = [i for i in wanted.open if i in told_here]
        closes = [i for i in wanted.closed if i in told_here]
        for i in opens + closes:
            counts[i] = counts.get(i, 0) + 1
        if closes and not opens:
            closed_told += [i for i in closes if i not in closed_told]
        entries.append((heading, entry, opens, closes))
    found = [i for i in wanted.open if counts.get(i)]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    told = [d for d in wanted.decisions if any(matches(line, decisions[d]) for line in lines)]
    small = any(
        share(m, line) >= MATCH for p in trivial for m in marks.get(p, ()) for line in lines
    )
    return Judged(
        estimate_tokens(text),
        right,
        resumed,
        entries,
        found,
        [i for i, n in counts.items() if n > 1],
        closed_told,
        told,
        small,
        wanted,
    )
