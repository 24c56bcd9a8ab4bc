"""How one architecture decision record is read: its sections, status, links and text.

The parsing half of :mod:`.adr_records` (which reads the mirrors and writes the JSON): a record
is a markdown file whose name carries its number; its sections are found by their headings;
texts keep their wording (markdown links reduced to their text, whitespace collapsed, each cut
at a sentence end within :data:`MAX_CHARS`). Standard library only.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

MAX_CHARS = 1500
"""Longest context or decision kept, so the file stays small enough to review (~1.5 MB)."""

MIN_CHARS = 20
"""Shortest section that still says something ("Adopt Batch Verification." is 25)."""

REPEATED = 3
"""In this many records word for word, a paragraph is a template's guidance, not a record's."""

BOILERPLATE_CHARS = 60
"""Shorter paragraphs are never dropped as guidance: "Accepted" repeats, and is a record's."""

PLACEHOLDERS = ("todo", "tbd", "n/a", "to be decided", "to be determined")
"""What an unwritten section starts with instead of text."""


CONTEXT_HEADINGS = (
    "context",
    "context and problem statement",
    "context and motivation",
    "background and context",
    "background context",
    "problem statement",
    "problem",
    "motivation",
    "background",
)
DECISION_HEADINGS = ("decision", "decisions", "decision outcome", "proposal")
"""Tried in order: "Proposal" counts only in a record with no Decision section."""
STATUS_HEADINGS = ("status", "statuses")

STATUS_WORDS = (
    ("superseded", "superseded"),
    ("deprecated", "deprecated"),
    ("rejected", "rejected"),
    ("declined", "rejected"),
    ("abandoned", "abandoned"),
    ("withdrawn", "abandoned"),
    ("reverted", "reverted"),
    ("implemented", "implemented"),
    ("accepted", "accepted"),
    ("approved", "accepted"),
    ("proposed", "proposed"),
    ("pending", "proposed"),
    ("in review", "proposed"),
    ("draft", "draft"),
    ("incomplete", "draft"),
)
"""(word a status says, status recorded). Most specific first: a superseded record often
still says "Accepted" (with its date) beside "Superseded by"."""

_RECORD_NAME = re.compile(r"^(?:adr[-_ ]?)?0*(\d+)[-_. ]", re.IGNORECASE)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ADR_MENTION = re.compile(r"\bADR[-_ #]?0*(\d+)\b", re.IGNORECASE)
_REFERENCE = re.compile(r"^\s*\[([^\]]+)\]:\s+\S+.*$", re.MULTILINE)
_MD_TARGET = re.compile(r"\]\(([^)\s]+\.md)(?:#[^)]*)?\)")
_SUPERSEDED = re.compile(r"supersed\w*(?:\s+by)?", re.IGNORECASE)


@dataclass
class Record:
    """One parsed record: the fields written to JSON."""

    id: str
    file: str
    title: str
    status: str
    superseded_by: list[str]
    links: list[str]
    context: str
    decision: str
    decision_heading: str


def record_number(file: str) -> int | None:
    """The number a record's file name starts with (``adr-012-x.md``, ``0012-x.md``), or None."""
    match = _RECORD_NAME.match(Path(file).name)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class Index:
    """The ids of a folder's records, by number and by file name, to resolve what cites them.

    An id is ``adr-`` and the number in three digits at least, whatever the repository's own
    padding (``adr-012``). Two files can carry one number (written in parallel, both merged):
    then each id adds its file's slug (``adr-009-java-11-migration``), and "ADR-9" names both.
    """

    by_number: dict[int, list[str]]
    by_name: dict[str, str]

    @classmethod
    def of(cls, files: list[str]) -> Index:
        """The index of ``files``, every one of them a numbered record file."""
        numbers = {file: record_number(file) or 0 for file in files}
        shared = Counter(numbers.values())
        by_number: dict[int, list[str]] = {}
        by_name: dict[str, str] = {}
        for file, number in numbers.items():
            own = f"adr-{number:03d}"
            if shared[number] > 1:
                own += "-" + _RECORD_NAME.sub("", Path(file).name).removesuffix(".md").lower()
            by_number.setdefault(number, []).append(own)
            by_name[Path(file).name] = own
        return cls(by_number, by_name)

    def named(self, markdown: str) -> list[str]:
        """Ids of the records ``markdown`` names as ``ADR-N`` or links as relative ``.md`` files.

        A link with a scheme (``https://…/adr-038-….md``) points into another repository, so
        it is left out; a bare "ADR-38" cannot be told apart and counts.
        """
        found = [
            one for n in _ADR_MENTION.findall(markdown) for one in self.by_number.get(int(n), [])
        ]
        for target in _MD_TARGET.findall(markdown):
            if "://" not in target and Path(target).name in self.by_name:
                found.append(self.by_name[Path(target).name])
        return sorted(set(found))


# --- cleaning text ------------------------------------------------------------------------


def plain(markdown: str) -> str:
    """The text as written, minus markup that is not wording; whitespace collapsed to spaces.

    Drops HTML comments, images, link reference definitions, blockquote marks and layout
    tags; reduces ``[text](url)``, ``[text][ref]`` and a defined ``[ref]`` to ``text``,
    headings to their words and HTML entities to their characters. Code and emphasis stay:
    they are part of what the authors wrote.
    """
    text = re.sub(r"<!--.*?-->", " ", markdown, flags=re.DOTALL)
    labels = {label.lower() for label in _REFERENCE.findall(text)}
    text = _REFERENCE.sub(" ", text)
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"\[([^\]]+)\]\[[^\]]*\]", r"\1", text)
    text = re.sub(r"\[([^\]]+)\](?![(\[])", lambda m: _shortcut(m, labels), text)
    text = re.sub(r"^#{1,6}\s+", "", text, flags=re.MULTILINE)
    text = re.sub(r"^\s*>\s?", "", text, flags=re.MULTILINE)
    text = re.sub(r"</?(?:br|p|div|span|details|summary)\b[^>]*>", " ", text)
    return " ".join(html.unescape(text).split())


def _shortcut(match: re.Match[str], labels: set[str]) -> str:
    """A ``[label]`` link's text when ``label`` is defined; any other brackets stay as written."""
    return match.group(1) if match.group(1).lower() in labels else match.group(0)


def cut(text: str, limit: int = MAX_CHARS) -> str:
    """``text`` up to ``limit`` characters, cut after the last sentence that fits.

    Falls back to the last word boundary (with an ellipsis) when no sentence ends in the
    second half of the allowance, so a long list without full stops still keeps its start.
    """
    if len(text) <= limit:
        return text
    head = text[:limit]
    ends = [m.end() for m in re.finditer(r"[.!?:][)\"']?(?=\s)", head)]
    if ends and ends[-1] >= limit // 2:
        return head[: ends[-1]]
    return head.rsplit(" ", 1)[0] + " …"


def paragraphs(markdown: str) -> list[str]:
    """The blocks of ``markdown`` that blank lines separate."""
    return [block for block in re.split(r"\n\s*\n", markdown) if block.strip()]


def without_boilerplate(markdown: str, boilerplate: set[str]) -> str:
    """``markdown`` minus the paragraphs copied unchanged from the repository's template.

    Authors who leave a section unwritten often leave the template's guidance in it ("This
    section contains all the context one needs…"): that is nobody's record of a decision.
    """
    kept = [block for block in paragraphs(markdown) if plain(block) not in boilerplate]
    return "\n\n".join(kept)


def heading_name(heading: str) -> str:
    """A heading reduced to its words for matching: ``"1. Context:"`` → ``"context"``."""
    words = re.sub(r"[^a-z ]+", " ", heading.lower())
    return " ".join(words.split())


# --- parsing one record -------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    """A heading and the markdown under it, up to the next heading of its level or above."""

    level: int
    name: str
    body: str


def sections(markdown: str) -> tuple[str, list[Section]]:
    """The first level-1 heading's text, and every section (nested ones included)."""
    lines = markdown.splitlines()
    headings: list[tuple[int, int, str]] = []
    fenced = False
    for index, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        match = None if fenced else _HEADING.match(line)
        if match:
            headings.append((index, len(match.group(1)), match.group(2)))
    title = next((text for _, level, text in headings if level == 1), "")
    found = []
    for position, (index, level, text) in enumerate(headings):
        end = len(lines)
        for later_index, later_level, _ in headings[position + 1 :]:
            if later_level <= level:
                end = later_index
                break
        found.append(Section(level, heading_name(text), "\n".join(lines[index + 1 : end])))
    return title, found


def find_section(found: list[Section], names: tuple[str, ...]) -> Section | None:
    """The shallowest section headed by the first of ``names`` that any section has."""
    for name in names:
        matching = [section for section in found if section.name == name]
        if matching:
            return min(matching, key=lambda section: section.level)
    return None


def unwritten(text: str) -> bool:
    """True when a section is too short to say anything, or only says it is still to come."""
    return len(text) < MIN_CHARS or text.lower().startswith(PLACEHOLDERS)


def clean_title(title: str) -> str:
    """The title without the record's number: ``"ADR 012: Logging"`` → ``"Logging"``."""
    text = plain(title)
    text = re.sub(r"^architecture decision record\s*[:\-–—]\s*", "", text, flags=re.IGNORECASE)
    text = re.sub(r"^(?:ADR[-_ ]?)?\d+\s*[:.\-–—]?\s*", "", text, flags=re.IGNORECASE)
    text = re.sub(r"^ADR\s*:\s*", "", text, flags=re.IGNORECASE)
    return text.strip()


def status_text(markdown: str, found: list[Section]) -> str:
    """The record's status as written: its Status section, else a ``Status:`` line.

    Quoted lines (a template's guidance) and a template's unfilled choice
    (``{Deprecated|Proposed|Accepted}``) are dropped: they name every status and state none.
    """
    section = find_section(found, STATUS_HEADINGS)
    if section is not None:
        text = re.sub(r"^\s*>.*$", " ", section.body, flags=re.MULTILINE)
    else:
        line = re.search(r"^\W*status\W*[:\-]\s*(.+)$", markdown, re.IGNORECASE | re.MULTILINE)
        text = line.group(1) if line else ""
    return re.sub(r"\{[^{}]*\|[^{}]*\}", " ", text)


def status_word(text: str) -> str:
    """The status of the first of :data:`STATUS_WORDS` the text names, else ``"unknown"``."""
    lowered = text.lower()
    return next((status for word, status in STATUS_WORDS if word in lowered), "unknown")


def superseded_by(status: str, index: Index) -> list[str]:
    """The records a status names after "superseded" ("by" or not; empty when it names none)."""
    match = _SUPERSEDED.search(status)
    return index.named(status[match.end() :]) if match else []


def parse(file: str, markdown: str, index: Index, boilerplate: set[str]) -> Record | str:
    """One record parsed from its markdown, or the reason it is skipped.

    ``index`` resolves the records it names (names of no record of the folder are dropped);
    ``boilerplate`` holds the template's paragraphs, which are not part of any record.
    """
    if is_template(file):
        return "a template, not a record"
    title, found = sections(markdown)
    context = find_section(found, CONTEXT_HEADINGS)
    decision = find_section(found, DECISION_HEADINGS)
    if context is None or decision is None:
        missing = [name for name, got in (("context", context), ("decision", decision)) if not got]
        return "no " + " or ".join(missing) + " section"
    context_text = plain(without_boilerplate(context.body, boilerplate))
    decision_text = plain(without_boilerplate(decision.body, boilerplate))
    if unwritten(context_text) or unwritten(decision_text):
        return "context or decision not written (empty, TODO, N/A)"
    own = index.by_name[Path(file).name]
    status = status_text(markdown, found)
    return Record(
        id=own,
        file=file,
        title=clean_title(title),
        status=status_word(status),
        superseded_by=[one for one in superseded_by(status, index) if one != own],
        links=[one for one in index.named(markdown) if one != own],
        context=cut(context_text),
        decision=cut(decision_text),
        decision_heading=decision.name,
    )


# --- what a folder shares


def is_template(file: str) -> bool:
    """True for a template file: ``adr-template.md``, ``adr.template.md``, ``0000-template.md``."""
    return Path(file).stem.lower().endswith("template")


def boilerplate_paragraphs(texts: dict[str, str]) -> set[str]:
    """Sentences of guidance: paragraphs of the folder's templates or of many of its records.

    A record may keep the guidance of an older template than the folder has now, so a
    paragraph found word for word in :data:`REPEATED` records or more counts as template too.
    """
    found: set[str] = set()
    counts: Counter[str] = Counter()
    for file, markdown in texts.items():
        blocks = {plain(block) for block in paragraphs(markdown)}
        if is_template(file):
            found |= blocks
        elif record_number(file) is not None:
            counts.update(blocks)
    found |= {block for block, count in counts.items() if count >= REPEATED}
    return {block for block in found if len(block) >= BOILERPLATE_CHARS}
