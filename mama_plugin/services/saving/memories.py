"""Saving memories: validate the narrative, check every referenced id, write in one transaction.

This is the one write path every surface uses (MCP tools, CLI, demo, importer of new data):
invalid input raises :class:`~mama_plugin.errors.ValidationError` and writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel

from ...errors import ValidationError
from ...plain import picked
from ...schema import (
    CheckpointInput,
    ContextInput,
    DecisionInput,
    InsightInput,
    LinkInput,
    OutcomeInput,
    parse,
)
from ...storage import LinkRecord, MemoryRecord, NewMemory, Redactions, Store
from ...storage.link_tags import LinkTags
from ..evolution import current_of
from ..learning.judging import judge
from ..learning.living import note
from ..learning.verify import record as record_files
from .contradiction import Question, clip, standing, told
from .duplicates import Near

M = TypeVar("M", bound=BaseModel)


@dataclass
class SaveResult:
    """What a save wrote: the memory, its links, what it superseded, what was redacted; and
    what it may contradict or repeat (:mod:`.checks`)."""

    memory: MemoryRecord
    links: list[LinkRecord] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    redactions: Redactions = field(default_factory=Redactions)
    questions: list[Question] = field(default_factory=list)  # standing decisions of its topic
    duplicate: Near | None = None  # the existing memory it says again

    def summary(self) -> str:
        """One compact paragraph a person or a model reads once."""
        m = self.memory
        lines = [f"Saved {m.type} {m.id}" + (f" on '{m.topic}'" if m.topic else "") + "."]
        # How to correct or remove it, in a few tokens: the version is what an update needs.
        lines.append(f"(v{m.version}; update_memory/forget_memory fix or remove it.)")
        if self.superseded:
            lines.append(
                "Superseded: " + ", ".join(self.superseded) + " (kept, marked superseded)."
            )
        if self.links:
            lines.append(
                "Links: " + "; ".join(f"{ln.relationship} → {ln.to_id}" for ln in self.links) + "."
            )
        if self.redactions.total:
            kinds = ", ".join(f"{k} ×{n}" for k, n in sorted(self.redactions.counts.items()))
            lines.append(f"Masked {self.redactions.total} secret(s) before saving: {kinds}.")
        if self.questions:
            lines.append(told(self.questions, m.topic))
        if self.duplicate is not None:
            d = self.duplicate
            lines.append(
                f"Looks like {d.memory.id} (cosine {d.cosine:.2f}, '{clip(d.memory.content)}'): "
                f"if it says the same, update_memory {d.memory.id} and forget_memory {m.id}."
            )
        return " ".join(lines)


def _coerce(model: type[M], data: M | dict[str, Any]) -> M:
    return data if isinstance(data, model) else parse(model, data)


def save_decision(
    store: Store,
    project: str,
    data: DecisionInput | dict[str, Any],
    *,
    created_at: int | None = None,
) -> SaveResult:
    """Save a decision with its narrative; ``supersedes`` marks the old decision superseded."""
    d = _coerce(DecisionInput, data)
    if d.draft:
        raise ValidationError(
            [
                "draft=true saves nothing: ask the drafter (the save_decision "
                "tool with draft=true) and save its reviewed proposal"
            ]
        )
    links = _labelled("links", d.links)
    if d.supersedes:
        supersede = LinkInput(
            to_id=d.supersedes, relationship="supersedes", reason=d.reasoning.primary
        )
        links.insert(0, ("supersedes", supersede))
    links += _related(store, project, d, {link.to_id for _, link in links})
    links += _implements(d.implements, f"carries out: {d.decision[:300]}")
    return _save(
        store,
        links,
        dict(
            type="decision",
            project=project,
            topic=d.topic,
            content=d.decision,
            reasoning=d.reasoning.model_dump(),
            specifics=list(d.specifics),
            evidence=[e.model_dump(exclude_none=True) for e in d.evidence],
            tension=d.tension.model_dump(),
            continuity={"next_steps": [s.model_dump() for s in d.next_steps]},
            confidence=d.confidence,
            tags=list(d.tags),
            session_id=d.session_id,
        ),
        supersedes=d.supersedes,
        created_at=created_at,
    )


def save_checkpoint(
    store: Store,
    project: str,
    data: CheckpointInput | dict[str, Any],
    *,
    created_at: int | None = None,
) -> SaveResult:
    """Save where the session stopped: done, remaining, next steps, open files."""
    c = _coerce(CheckpointInput, data)
    links = _labelled("links", c.links) + _implements(
        c.implements, f"work on it: {c.summary[:300]}"
    )
    return _save(
        store,
        links,
        dict(
            type="checkpoint",
            project=project,
            topic=c.topic,
            content=c.summary,
            tension=c.tension.model_dump() | _given(questions=c.open_questions),
            continuity={
                "done": list(c.what_was_done),
                "remains": list(c.what_remains),
                "next_steps": [s.model_dump() for s in c.next_steps],
                "open_files": list(c.open_files),
            }
            | _given(
                **picked(c, "stopped_at", "now=current_state", "target=target_state", "tasks"),
                **picked(c, "discoveries", "confirmed", "skipped", "unknowns", "first_action"),
            ),
            tags=list(c.tags),
            session_id=c.session_id,
        ),
        created_at=created_at,
    )


def _given(**fields: Any) -> dict[str, Any]:
    """The cliffhanger's fields of a checkpoint that were given (older rows lack them all)."""

    def dump(value: Any) -> Any:
        return value.model_dump() if isinstance(value, BaseModel) else value

    return {
        key: [dump(v) for v in value] if isinstance(value, list) else dump(value)
        for key, value in fields.items()
        if value
    }


def save_insight(
    store: Store,
    project: str,
    data: InsightInput | dict[str, Any],
    *,
    created_at: int | None = None,
) -> SaveResult:
    """Save a quick lesson."""
    return _save_plain(store, "insight", project, _coerce(InsightInput, data), created_at)


def save_context(
    store: Store,
    project: str,
    data: ContextInput | dict[str, Any],
    *,
    created_at: int | None = None,
) -> SaveResult:
    """Save background a later session needs (``created_at``: when it happened, if not now)."""
    return _save_plain(store, "context", project, _coerce(ContextInput, data), created_at)


def _save_plain(
    store: Store, kind: str, project: str, m: InsightInput | ContextInput, created_at: int | None
) -> SaveResult:
    return _save(
        store, _labelled("links", m.links), _plain(kind, project, m), created_at=created_at
    )


def record_outcome(store: Store, data: OutcomeInput | dict[str, Any]) -> MemoryRecord:
    """Record what happened to a memory: SUCCESS, PARTIAL or FAILED (VERIFIED: checked against
    the code, its outcome unchanged); the verdict moves confidences and notes what builds on
    it (:func:`~.judging.judge`). Returns the memory as judged."""
    return judge(store, _coerce(OutcomeInput, data)).memory


def _plain(kind: str, project: str, m: InsightInput | ContextInput) -> dict[str, Any]:
    return dict(
        type=kind,
        project=project,
        topic=m.topic,
        content=m.content,
        evidence=[e.model_dump(exclude_none=True) for e in m.evidence],
        confidence=m.confidence,
        tags=list(m.tags),
        session_id=m.session_id,
    )


def _labelled(field: str, links: Sequence[LinkInput]) -> list[tuple[str, LinkInput]]:
    """Each link with the input field it came from, for error messages."""
    return [(f"{field}[{i}]", link) for i, link in enumerate(links)]


def _related(
    store: Store, project: str, d: DecisionInput, named: set[str]
) -> list[tuple[str, LinkInput]]:
    """``relation`` supersedes or refines: a link to each standing decision of the topic the
    save does not name already (read before the save's transaction: a decision saved in
    between is asked about by the next save instead)."""
    if d.relation not in ("supersedes", "refines"):
        return []
    return [
        ("relation", LinkInput(to_id=old.id, relationship=d.relation, reason=d.reasoning.primary))
        for old in standing(store, project, d.topic, skip=named)
    ]


def _implements(ids: Sequence[str], reason: str) -> list[tuple[str, LinkInput]]:
    return [
        (f"implements[{i}]", LinkInput(to_id=memory_id, relationship="implements", reason=reason))
        for i, memory_id in enumerate(ids)
    ]


def _save(
    store: Store,
    links: list[tuple[str, LinkInput]],
    fields: dict[str, Any],
    *,
    supersedes: str | None = None,
    created_at: int | None = None,
) -> SaveResult:
    with store.transaction():
        _check_references(store, links, supersedes)
        memory, redactions = store.memories.insert(NewMemory(**fields, created_at=created_at))
        written: list[LinkRecord] = []
        for _, link in links:
            record, found = store.links.add(
                memory.id,
                link.to_id,
                link.relationship,
                link.reason,
                evidence=link.evidence,
                context=link.context,
                confidence=link.confidence,
            )
            if link.tags:
                LinkTags(store).add(record.id, link.tags)
            written.append(record)
            redactions.add(found.counts)
        # The memories it links to gain a dated note (and it one for each it builds on that
        # FAILED): in the save's transaction, so both are written or neither.
        note(store, written)
    superseded = [ln.to_id for ln in written if ln.relationship == "supersedes"]
    saved = store.memories.require(memory.id)
    record_files(store, saved)  # the files it cites, as they are now (outside its transaction)
    return SaveResult(saved, written, superseded, redactions)


def _check_references(
    store: Store, links: list[tuple[str, LinkInput]], supersedes: str | None
) -> None:
    """Name every unknown id at once, before anything is written."""
    known = store.memories.existing_ids(link.to_id for _, link in links)
    problems = [
        f"{where}{'' if where == 'supersedes' else '.to_id'}: unknown id {link.to_id!r} — "
        "no memory has that id"
        for where, link in links
        if link.to_id not in known
    ]
    if supersedes and supersedes in known:
        old = store.memories.require(supersedes)
        if old.type != "decision":
            problems.append(f"supersedes must name a decision; {supersedes} is a {old.type}")
        elif old.status == "superseded":
            # Two successors of one decision would leave two "current" answers.
            head = current_of(store, old.id)
            problems.append(
                f"supersedes: {supersedes} was already replaced by {head.id} "
                f"('{head.content[:80]}'); supersede {head.id} instead"
            )
    if problems:
        raise ValidationError(problems)
