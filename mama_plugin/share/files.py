"""One shared memory as one Markdown file: front matter, then its narrative layers as sections.

The layout is ``.mama/<kind>/<id>.md`` (``decisions/``, ``insights/``, ``checkpoints/``,
``context/``). The front matter holds what identifies and qualifies the memory (id, type,
topic, status, outcome, confidence, tags, links with their reasons, created and updated); the
body holds the content under a heading naming its type, then one section a non-empty layer
(Specifics, Evidence, Reasoning, Tension, Continuity, Outcome). A deletion is a *tombstone*:
the same path with ``deleted:`` in the front matter and no body. Rendering is a pure function
of the memory (no usage counters, no row version), so rendering twice gives the same bytes.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any

from ..intake import MAX_CHARS
from . import frontmatter as fm
from .frontmatter import ShareFormatError

FOLDER = ".mama"
KIND_DIRS = {
    "decision": "decisions",
    "insight": "insights",
    "checkpoint": "checkpoints",
    "context": "context",
}
TYPE_HEADINGS = {
    "decision": "Decision",
    "insight": "Insight",
    "checkpoint": "Checkpoint",
    "context": "Context",
}
# The narrative layers, in the order their sections appear.
LAYERS = (
    ("specifics", "Specifics", list),
    ("evidence", "Evidence", list),
    ("reasoning", "Reasoning", dict),
    ("tension", "Tension", dict),
    ("continuity", "Continuity", dict),
    ("outcome", "Outcome", dict),
)
STATUSES = ("current", "superseded")
OUTCOMES = ("PENDING", "SUCCESS", "PARTIAL", "FAILED", "SUPERSEDED")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")
_ISO = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.(\d{3})Z\Z")
_HEADING = re.compile(r"## (.+)\Z")
# git's merge markers: both ends (a line of ``=======`` alone is also a Markdown underline).
_CONFLICT_OPEN = re.compile(r"^<{7}(?: |$)", re.M)
_CONFLICT_CLOSE = re.compile(r"^>{7}(?: |$)", re.M)


@dataclass(frozen=True)
class SharedLink:
    """A link as a shared file states it: from the file's memory to ``to``, with its reason."""

    to: str
    relationship: str
    reason: str


@dataclass(frozen=True)
class SharedMemory:
    """A memory as read from (or about to be written to) a shared file."""

    id: str
    type: str
    topic: str = ""
    status: str = "current"
    outcome_status: str = "PENDING"
    confidence: float = 0.7
    tags: tuple[str, ...] = ()
    links: tuple[SharedLink, ...] = ()
    created_at: int = 0
    updated_at: int = 0
    content: str = ""
    layers: dict[str, Any] = field(default_factory=dict)
    deleted_at: int | None = None  # set for a tombstone

    @property
    def tombstone(self) -> bool:
        return self.deleted_at is not None


def path_of(memory_type: str, memory_id: str) -> PurePosixPath:
    """Where a memory's file sits, relative to the checkout root."""
    return PurePosixPath(FOLDER, KIND_DIRS[memory_type], f"{memory_id}.md")


def digest(text: str) -> str:
    """The content hash a file is known by (sha256 of its UTF-8 bytes, hex)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def iso(ms: int) -> str:
    """A time in milliseconds as UTC ISO 8601 with milliseconds (``2026-11-20T10:00:00.000Z``)."""
    stamp = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def from_iso(text: Any, what: str) -> int:
    """:func:`iso` read back; ShareFormatError names ``what`` for anything else."""
    match = _ISO.match(str(text))
    if not match:
        raise ShareFormatError(f"{what}: {text!r} is not a time like 2026-11-20T10:00:00.000Z")
    try:
        stamp = datetime.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        raise ShareFormatError(f"{what}: {text!r} is not a valid date and time") from None
    return int(stamp.timestamp()) * 1000 + int(match.group(2))


def pruned(value: Any) -> Any:
    """``value`` without empty strings, lists and mappings (what a file need not say)."""
    if isinstance(value, dict):
        kept = {k: pruned(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in ("", [], {}, None)}
    if isinstance(value, list | tuple):
        return [pruned(v) for v in value if pruned(v) not in ("", [], {}, None)]
    return value


def render(memory: SharedMemory) -> str:
    """The file text of ``memory`` (or of its tombstone)."""
    if memory.tombstone:
        grave = {"id": memory.id, "type": memory.type, "deleted": iso(memory.deleted_at or 0)}
        return (
            f"---\n{fm.dump(grave)}---\n\nForgotten on purpose: every clone that imports this "
            "file forgets the memory too.\n"
        )
    head: dict[str, Any] = {
        "id": memory.id,
        "type": memory.type,
        "topic": memory.topic,
        "status": memory.status,
        "outcome": memory.outcome_status,
        "confidence": float(memory.confidence),
        "tags": list(memory.tags),
        "links": [
            {"to": ln.to, "relationship": ln.relationship, "reason": ln.reason}
            for ln in sorted(memory.links, key=lambda ln: (ln.to, ln.relationship))
        ],
        "created": iso(memory.created_at),
        "updated": iso(memory.updated_at),
    }
    parts = [
        f"---\n{fm.dump(head)}---\n",
        f"## {TYPE_HEADINGS[memory.type]}\n\n{_escaped(memory.content)}",
    ]
    for name, heading, _kind in LAYERS:
        value = pruned(memory.layers.get(name))
        if value:
            parts.append(f"## {heading}\n\n{_block(value)}")
    return "\n".join(p if p.endswith("\n") else p + "\n" for p in parts)


def _block(value: Any) -> str:
    """A layer as a section body: a mapping's lines, or a list's items at the margin."""
    if isinstance(value, dict):
        return fm.dump(value)
    nested = fm.dump({"items": value}).splitlines()[1:]
    return "".join(line[fm.INDENT :] + "\n" for line in nested)


def _escaped(text: str) -> str:
    """Free text as a section body: a line that starts with ``#`` or ``\\`` gets a ``\\``."""
    lines = text.strip("\n").split("\n")
    return "".join(("\\" + ln if ln.startswith(("#", "\\")) else ln) + "\n" for ln in lines)


def _unescaped(lines: list[str]) -> str:
    return "\n".join(ln[1:] if ln.startswith("\\") else ln for ln in lines).strip("\n")


def parse(text: str, *, where: str) -> SharedMemory:
    """Read a shared file back; ShareFormatError (naming ``where`` and the line) otherwise."""
    try:
        return _parse(text)
    except ShareFormatError as exc:
        raise ShareFormatError(f"{where}: {exc}") from None


def _parse(text: str) -> SharedMemory:
    if len(text) > MAX_CHARS:
        raise ShareFormatError(
            f"{len(text):,} characters; a shared memory holds at most {MAX_CHARS:,} (the "
            "largest a save accepts is far smaller)"
        )
    if _CONFLICT_OPEN.search(text) and _CONFLICT_CLOSE.search(text):
        raise ShareFormatError(
            "it holds git merge conflict markers (<<<<<<< … >>>>>>>): resolve the merge first"
        )
    lines = text.replace("\r\n", "\n").split("\n")
    if not lines or lines[0] != "---" or "---" not in lines[1:]:
        raise ShareFormatError("line 1: a shared file starts with front matter between --- lines")
    end = lines.index("---", 1)
    head = fm.load("\n".join(lines[1:end]), first_line=2)
    memory_id = _text(head, "id")
    if not _ID.match(memory_id):
        raise ShareFormatError(f"id {memory_id!r} is not a memory id")
    memory_type = _text(head, "type")
    if memory_type not in KIND_DIRS:
        raise ShareFormatError(f"type must be one of {', '.join(KIND_DIRS)} (got {memory_type!r})")
    if "deleted" in head:
        return SharedMemory(memory_id, memory_type, deleted_at=from_iso(head["deleted"], "deleted"))
    unknown = set(head) - {
        "id",
        "type",
        "topic",
        "status",
        "outcome",
        "confidence",
        "tags",
        "links",
        "created",
        "updated",
    }
    if unknown:
        raise ShareFormatError(f"unknown front matter key(s): {', '.join(sorted(unknown))}")
    status = _text(head, "status")
    if status not in STATUSES:
        raise ShareFormatError(f"status must be current or superseded (got {status!r})")
    outcome = _text(head, "outcome")
    if outcome not in OUTCOMES:
        raise ShareFormatError(f"outcome must be one of {', '.join(OUTCOMES)} (got {outcome!r})")
    confidence = head.get("confidence")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0 <= confidence <= 1
    ):
        raise ShareFormatError(f"confidence must be a number from 0 to 1 (got {confidence!r})")
    tags = head.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise ShareFormatError("tags must be a list of words")
    content, layers = _sections(lines[end + 1 :], end + 2, TYPE_HEADINGS[memory_type])
    primary = layers.get("reasoning", {}).get("primary")
    if memory_type == "decision" and not (isinstance(primary, str) and primary.strip()):
        raise ShareFormatError("a decision needs `primary:` (why) in its ## Reasoning section")
    return SharedMemory(
        id=memory_id,
        type=memory_type,
        topic=_text(head, "topic", required=False),
        status=status,
        outcome_status=outcome,
        confidence=float(confidence),
        tags=tuple(tags),
        links=_links(head.get("links", [])),
        # A date in the future is read as now: a file cannot sort itself first.
        created_at=min(from_iso(head.get("created"), "created"), now_ms()),
        updated_at=min(from_iso(head.get("updated"), "updated"), now_ms()),
        content=content,
        layers=layers,
    )


def _text(head: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = head.get(key, None if required else "")
    if not isinstance(value, str) or (required and not value):
        raise ShareFormatError(f"front matter needs {key}: as text")
    return value


def _links(raw: Any) -> tuple[SharedLink, ...]:
    if not isinstance(raw, list):
        raise ShareFormatError("links must be a list of {to, relationship, reason}")
    found = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or set(item) != {"to", "relationship", "reason"}:
            raise ShareFormatError(f"links[{index}] must have exactly to, relationship and reason")
        if not all(isinstance(v, str) and v.strip() for v in item.values()):
            raise ShareFormatError(f"links[{index}]: to, relationship and reason must be text")
        found.append(SharedLink(item["to"], item["relationship"], item["reason"]))
    return tuple(found)


def _sections(lines: list[str], first: int, content_heading: str) -> tuple[str, dict[str, Any]]:
    """The content and the layers of a file's body (the lines after the front matter)."""
    known = {heading: (name, kind) for name, heading, kind in LAYERS}
    found: dict[str, tuple[int, list[str]]] = {}
    current: str | None = None
    for number, line in enumerate(lines, start=first):
        match = _HEADING.match(line)
        if match:
            current = match.group(1).strip()
            if current != content_heading and current not in known:
                raise ShareFormatError(f"line {number}: unknown section ## {current}")
            if current in found:
                raise ShareFormatError(f"line {number}: section ## {current} is given twice")
            found[current] = (number + 1, [])
        elif current is not None:
            found[current][1].append(line)
        elif line.strip():
            raise ShareFormatError(f"line {number}: text before the first ## section")
    if content_heading not in found:
        raise ShareFormatError(f"the file needs a ## {content_heading} section")
    content = _unescaped(found.pop(content_heading)[1])
    layers: dict[str, Any] = {}
    for heading, (start, body) in found.items():
        name, kind = known[heading]
        if not any(ln.strip() for ln in body):
            layers[name] = kind()  # a section left empty: nothing to say
            continue
        if kind is list:
            block = "".join(" " * fm.INDENT + ln + "\n" for ln in body)
            value = fm.load("items:\n" + block, first_line=start - 1).get("items", [])
        else:
            value = fm.load("\n".join(body), first_line=start)
        if not isinstance(value, kind):
            raise ShareFormatError(f"line {start}: ## {heading} must hold a {kind.__name__}")
        layers[name] = value
    return content, layers


def now_ms() -> int:
    """Milliseconds since the epoch (a tombstone's time)."""
    return int(time.time() * 1000)
