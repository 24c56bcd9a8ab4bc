"""Rows as the store hands them back: plain dataclasses, no pydantic (hooks read these).

Every text a row holds passes the privacy filter again as it is decoded: a memory, link or
suggestion written before a rule of the filter existed is read masked, whatever surface
reads it (search, session start, export). ``personal=False`` keeps personal data.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, NamedTuple

from ..privacy import redact_text, redact_tree

MEMORY_COLUMNS = (
    "seq", "id", "type", "project", "topic", "content", "specifics", "evidence", "reasoning",
    "tension", "continuity", "outcome_status", "outcome", "confidence", "tags", "status",
    "session_id", "metadata", "times_used", "last_used", "created_at", "updated_at", "version",
)  # fmt: skip
JSON_COLUMNS = frozenset(
    {"specifics", "evidence", "reasoning", "tension", "continuity", "outcome", "tags", "metadata"}
)
# The columns that hold what was said (everything but ids, numbers and bookkeeping).
TEXT_FIELDS = (
    "topic", "content", "specifics", "evidence", "reasoning", "tension", "continuity",
    "outcome", "tags", "metadata",
)  # fmt: skip
_TEXT_AT = tuple(MEMORY_COLUMNS.index(name) for name in TEXT_FIELDS)
# Digests of memory and link rows whose texts the privacy filter found clean (16 bytes each).
CLEAN_KEPT = 100_000
_CLEAN: set[bytes] = set()
LINK_COLUMNS = (
    "id", "from_id", "to_id", "relationship", "reason", "evidence", "context", "link_category",
    "confidence", "created_by", "created_at", "used_at",
)  # fmt: skip


@dataclass(frozen=True)
class NewMemory:
    """A memory to write (``store.memories.insert``): the caller's fields, before redaction.

    ``id``, ``created_at`` and ``updated_at`` default to a fresh id and now; the bookkeeping
    fields (``version``, ``times_used``, ``last_used``) are set only by importers and restores.
    """

    type: str
    project: str
    content: str
    topic: str = ""
    specifics: Iterable[Any] = ()
    evidence: Iterable[Any] = ()
    reasoning: dict[str, Any] | None = None
    tension: dict[str, Any] | None = None
    continuity: dict[str, Any] | None = None
    outcome: dict[str, Any] | None = None
    confidence: float = 0.7
    tags: Iterable[str] = ()
    status: str = "current"
    session_id: str = ""
    metadata: dict[str, Any] | None = None
    id: str | None = None
    created_at: int | None = None
    updated_at: int | None = None
    version: int = 1
    times_used: int = 0
    last_used: int | None = None


@dataclass(frozen=True)
class MemoryRecord:
    """One stored memory with its narrative layers decoded from JSON."""

    seq: int
    id: str
    type: str
    project: str
    topic: str
    content: str
    specifics: list[Any]
    evidence: list[Any]
    reasoning: dict[str, Any]
    tension: dict[str, Any]
    continuity: dict[str, Any]
    outcome_status: str
    outcome: dict[str, Any]
    confidence: float
    tags: list[str]
    status: str
    session_id: str
    metadata: dict[str, Any]
    times_used: int
    last_used: int | None
    created_at: int
    updated_at: int
    version: int

    @classmethod
    def from_row(cls, row: tuple[Any, ...], *, personal: bool = True) -> MemoryRecord:
        """Build a record from a ``SELECT`` of :data:`MEMORY_COLUMNS`, in that order, masked."""
        values = {
            name: json.loads(value) if name in JSON_COLUMNS else value
            for name, value in zip(MEMORY_COLUMNS, row, strict=True)
        }
        values.update(
            _masked_once(
                {k: values[k] for k in TEXT_FIELDS},
                ("memory", personal, *(row[i] for i in _TEXT_AT)),
            )
        )
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        """Every column, JSON layers as Python objects (the export format's memory entry)."""
        return asdict(self)

    def fields(self, *names: str) -> dict[str, Any]:
        """The named fields, in the order named: the one way a tool's answer or a report
        shows a memory in brief (``m.fields("id", "type", "topic", "content")``)."""
        return {name: getattr(self, name) for name in names}

    @property
    def rolling(self) -> bool:
        """True for the rolling checkpoint the Stop hook writes (``metadata.auto``; what else
        it records is ``services.story.worklog.WorkLog``'s)."""
        return self.type == "checkpoint" and bool(self.metadata.get("auto"))


@dataclass(frozen=True)
class LinkRecord:
    """One stored link: ``from_id`` --relationship--> ``to_id``, with its reason."""

    id: int
    from_id: str
    to_id: str
    relationship: str
    reason: str
    evidence: str
    context: str
    link_category: str
    confidence: float
    created_by: str
    created_at: int
    used_at: int | None = None  # last time both its ends were told in one answer

    @classmethod
    def from_row(cls, row: tuple[Any, ...], *, personal: bool = True) -> LinkRecord:
        """Build a record from a ``SELECT`` of :data:`LINK_COLUMNS`, in that order, masked."""
        record = cls(*row)
        texts = _masked_once(
            {"reason": record.reason, "evidence": record.evidence, "context": record.context},
            ("link", personal, record.reason, record.evidence, record.context),
        )
        return replace(record, **texts) if texts else record

    def as_dict(self) -> dict[str, Any]:
        """Every column (the export format's link entry)."""
        return asdict(self)


SUGGESTION_COLUMNS = (
    "id", "project", "from_id", "to_id", "relationship", "reason", "sources", "score",
    "judged_by", "status", "created_at", "decided_at", "decided_by", "link_id",
)  # fmt: skip


@dataclass(frozen=True)
class SuggestionRecord:
    """A proposed link waiting for a verdict (or the verdict it got), never a link itself."""

    id: int
    project: str
    from_id: str
    to_id: str
    relationship: str
    reason: str
    sources: list[str]
    score: float
    judged_by: str  # 'llm' (the local model) or 'rules' (no model: a rule's own reason)
    status: str  # pending | accepted | rejected | no_link
    created_at: int
    decided_at: int | None
    decided_by: str
    link_id: int | None

    @classmethod
    def from_row(cls, row: tuple[Any, ...], *, personal: bool = True) -> SuggestionRecord:
        """Build a record from a ``SELECT`` of :data:`SUGGESTION_COLUMNS`, in that order, masked."""
        values = list(row)
        values[6] = json.loads(values[6])
        values[5] = redact_text(str(values[5] or ""), personal=personal)[0]
        return cls(*values)

    def as_dict(self) -> dict[str, Any]:
        """Every column."""
        return asdict(self)


class RankFields(NamedTuple):
    """The columns ranking reads, loaded for hundreds of candidates at once."""

    seq: int
    confidence: float
    outcome_status: str
    status: str
    created_at: int
    times_used: int
    type: str = ""
    last_used: int | None = None
    project: str = ""
    session_id: str = ""


@dataclass
class Redactions:
    """What the privacy filter removed from one write, by kind."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, more: dict[str, int]) -> None:
        """Add counts from another redaction pass."""
        for kind, n in more.items():
            self.counts[kind] = self.counts.get(kind, 0) + n

    @property
    def total(self) -> int:
        """How many spans were dropped or masked."""
        return sum(self.counts.values())


def _masked_once(fields: dict[str, Any], raw: tuple[Any, ...]) -> dict[str, Any]:
    """:func:`masked` of a row's ``fields``; ``raw`` is ("memory" or "link", personal, the
    row's stored texts). The filter is a pure function of the texts: a row it found clean is
    not checked again (every search reads the same memories and links again and again)."""
    digest = hashlib.blake2b(repr(raw).encode(), digest_size=16).digest()
    if digest in _CLEAN:
        return {}
    found = masked(fields, personal=bool(raw[1]))
    if not found:
        if len(_CLEAN) >= CLEAN_KEPT:
            _CLEAN.clear()
        _CLEAN.add(digest)
    return found


def masked(fields: dict[str, Any], *, personal: bool = True) -> dict[str, Any]:
    """``fields`` through the privacy filter; ``{}`` when it finds nothing (the common case).

    The strings are checked together first, so a clean row costs one pass of the filter.
    """
    strings: list[str] = []

    def collect(item: Any) -> None:
        if isinstance(item, str):
            strings.append(item)
        elif isinstance(item, dict):
            for value in item.values():
                collect(value)
        elif isinstance(item, list | tuple):
            for value in item:
                collect(value)

    collect(fields)
    if not redact_text("\n".join(strings), personal=personal)[1]:
        return {}
    clean: dict[str, Any] = redact_tree(fields, personal=personal)[0]
    return clean
