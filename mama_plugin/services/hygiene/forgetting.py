"""Forgetting, correcting and redacting memories, and leaving nothing of the old text behind.

Each of :func:`forget`, :func:`edit` and :func:`redact` runs under the backups' lock
(``storage/backup_erasure.py``): the change in one transaction of the store, with the rows
derived from the old text dropped in it (the view vectors keyed by it, the cached
session-start texts, the vectors of every memory whose narrative told it, queued to be
embedded again); then the file compacted (the full-text index merged, the file rebuilt, its
write-ahead log truncated: ``Erasure.compact``); then the same change applied to every backup,
and the pages ``mama view`` wrote (``$MAMA_HOME/views``) that hold the memory deleted — every
page after a redaction, which may sit in any of them escaped.

What a forget does to links: every link to or from the memory and every link suggestion
naming it go with it (the schema cascades); a decision it had replaced is current again
unless something else replaced it; the outcome events recorded on it (insights that quote
it, linked ``outcome_of``) are forgotten with it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config import Config
from ...errors import ConflictError, EditConflict
from ...home import VIEWS
from ...relationships import REPLACING
from ...schema import UpdateInput
from ...storage import LinkRecord, MemoryRecord, Store
from ...storage.backup_erasure import BackupsChanged, backups_held, change_backups
from ..search.views import VIEW_CHARS
from ..warm import warm

OUTCOME_EVENT = "outcome_of"  # services/saving/outcomes.py links each event to its memory so
QUOTED_CHARS = 80  # a cached text holding this much of a memory's content quotes it


@dataclass
class Cleared:
    """What was done so that nothing of the old text stays: re-embedding, the log, backups."""

    requeued: int = 0  # memories whose vector was dropped, waiting to be embedded again
    log_emptied: bool = True
    backups: BackupsChanged = field(default_factory=BackupsChanged)
    pages: list[Path] = field(default_factory=list)  # `mama view` pages deleted

    def summary(self) -> str:
        parts = [self.backups.summary()]
        if self.pages:
            parts.append(
                f"{len(self.pages)} page(s) of `mama view` deleted (they held the old text; "
                "`mama view` writes them again)"
            )
        if self.requeued:
            parts.append(f"{self.requeued} memory(ies) wait to be embedded again")
        if not self.log_emptied:
            parts.append(
                "the write-ahead log still holds old pages while another process reads: it "
                "is emptied at the next checkpoint"
            )
        return "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "requeued": self.requeued,
            "log_emptied": self.log_emptied,
            "backups_rewritten": [str(p) for p in self.backups.rewritten],
            "backups_deleted": [str(p) for p, _ in self.backups.deleted],
            "pages_deleted": [str(p) for p in self.pages],
        }


@dataclass
class Forgotten:
    """What a forget removed: the memory, its outcome events, links and suggestions."""

    memory: MemoryRecord
    events: list[str]
    links: list[LinkRecord]
    suggestions: int
    restored: list[str]  # decisions it had replaced, current again
    cleared: Cleared

    def summary(self) -> str:
        m = self.memory
        text = f"Forgot {m.type} {m.id}" + (f" on '{m.topic}'" if m.topic else "") + "."
        if self.events:
            text += f" Its outcome events went with it: {', '.join(self.events)}."
        text += f" Links removed: {len(self.links)}; link suggestions removed: {self.suggestions}."
        if self.restored:
            text += f" Current again (it had replaced them): {', '.join(self.restored)}."
        return text + f" {self.cleared.summary()}."

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.memory.id,
            "events": self.events,
            "links_removed": [
                {"from_id": ln.from_id, "to_id": ln.to_id, "relationship": ln.relationship}
                for ln in self.links
            ],
            "suggestions_removed": self.suggestions,
            "current_again": self.restored,
            **self.cleared.as_dict(),
        }


@dataclass
class Edited:
    """A memory as an edit left it, with the version it had."""

    memory: MemoryRecord
    before: int
    masked: int
    cleared: Cleared

    def summary(self) -> str:
        m = self.memory
        text = f"Updated {m.type} {m.id}: version {self.before} → {m.version}."
        if self.masked:
            text += f" Masked {self.masked} secret(s)."
        return text + f" {self.cleared.summary()}."


@dataclass
class Redacted:
    """Where a redaction masked the string: rows by table, memories changed."""

    rows: dict[str, int]
    memories: list[str]
    cleared: Cleared

    def summary(self) -> str:
        if not self.rows:
            return f"Nothing stored holds that string. {self.cleared.summary()}."
        where = ", ".join(f"{table} ×{n}" for table, n in sorted(self.rows.items()))
        return f"Masked in {where}. {self.cleared.summary()}."


def forget(store: Store, config: Config, memory_id: str) -> Forgotten:
    """Delete a memory for good (see the module's docstring for its links); NotFoundError
    for an unknown id, nothing changed."""
    with backups_held(store.path):
        with store.transaction():
            memory = store.memories.require(memory_id)
            ids = _with_events(store, memory_id)
            events = ids[1:]
            links = list({ln.id: ln for i in ids for ln in store.links.of(i)}.values())
            replaced = [
                ln.to_id for ln in links if ln.from_id == memory_id and ln.relationship in REPLACING
            ]
            suggestions = store.erasure.suggestions_of(ids)
            gone = store.memories.get_many(ids).values()
            told = store.erasure.chain(ids)
            for i in ids:
                store.memories.delete(i)
            store.erasure.drop_texts(_quotes(store, gone))
            remaining = store.erasure.existing(told)
            store.erasure.drop_vectors(remaining)
            restored = [
                r.id for r in store.memories.get_many(replaced).values() if r.status == "current"
            ]
        cleared = _clear(store, config, lambda copy: _forget_in(copy, ids), len(remaining), ids)
    return Forgotten(memory, events, links, suggestions, restored, cleared)


def edit(store: Store, config: Config, args: UpdateInput) -> Edited:
    """Change narrative fields of a memory read at ``args.expected_version``.

    Raises EditConflict (nothing written) when the stored version is another, NotFoundError
    for an unknown id, ValidationError when the result breaks the schema (a decision
    without a reason).
    """
    changes = args.changes()
    with backups_held(store.path):
        with store.transaction():
            before = store.memories.require(args.memory_id)
            try:
                updated, found = store.memories.update(
                    args.memory_id, expected_version=args.expected_version, **changes
                )
            except ConflictError:
                raise _conflict(store, args, changes) from None
            old = _quotes(store, [before], keep=[updated])
            store.erasure.drop_texts(old)
            told = store.erasure.chain([updated.id]) if old else []
            store.erasure.drop_vectors(told)
        cleared = _clear(
            store,
            config,
            lambda copy: _edit_in(copy, args.memory_id, changes),
            len(told),
            [args.memory_id],
        )
    return Edited(updated, before.version, found.total, cleared)


def redact(store: Store, config: Config, pattern: str) -> Redacted:
    """Mask ``pattern`` (literal, any case) wherever the store holds it, and in the backups.

    Raises ValidationError for a pattern of fewer than three characters.
    """
    with backups_held(store.path):
        masked = store.erasure.mask(pattern)
        ids = [m.id for m in store.memories.get_by_seq(masked.memories).values()]
        # A page escapes what it quotes (HTML, JSON): any masked row may sit in any page.
        every = [""] if masked.rows else []
        cleared = _clear(
            store, config, lambda copy: bool(copy.erasure.mask(pattern).total), len(ids), every
        )
    return Redacted(masked.rows, ids, cleared)


def _with_events(store: Store, memory_id: str) -> list[str]:
    """The memory and the outcome events recorded on it (they quote it)."""
    events = [
        ln.from_id
        for ln in store.links.of(memory_id, direction="in")
        if ln.relationship == OUTCOME_EVENT
    ]
    return [memory_id, *dict.fromkeys(events)]


def _quotes(
    store: Store, memories: Iterable[MemoryRecord], keep: Iterable[MemoryRecord] = ()
) -> list[str]:
    """Texts of ``memories`` that cached rows may quote (their views and the start of their
    content), less those ``keep`` still holds."""
    kept = [f"{m.topic.replace('_', ' ')}\n{m.content}".lower() for m in keep]
    out: list[str] = []
    for m in memories:
        for text in (m.topic.replace("_", " ").strip(), m.content.strip()[:QUOTED_CHARS]):
            if text and not any(text.lower() in k for k in kept):
                out.append(text)
        out.append(m.content.strip()[:VIEW_CHARS])
    return [t for t in dict.fromkeys(out) if t and not any(t.lower() in k for k in kept)]


def _conflict(store: Store, args: UpdateInput, changes: dict[str, Any]) -> EditConflict:
    now = store.memories.require(args.memory_id)
    stored = {k: getattr(now, k) for k in changes}
    return EditConflict(args.memory_id, args.expected_version, now.version, stored, changes)


def _clear(store: Store, config: Config, change: Any, requeued: int, held: list[str]) -> Cleared:
    """After the change: the file compacted, the process's cached views dropped (they hold
    the old text and would be stored again), the same change applied to every backup, and
    the pages `mama view` wrote into ``$MAMA_HOME/views`` that hold any of ``held`` (memory
    ids; ``""`` matches every page) deleted. A page written elsewhere (``--out``) is the
    user's file: not found, not touched."""
    warm(store).views.clear()
    emptied = store.erasure.compact()
    backups = change_backups(store.path, config, change)
    return Cleared(requeued, emptied, backups, _delete_pages(config.home / VIEWS, held))


def _delete_pages(folder: Path, held: list[str]) -> list[Path]:
    """Delete the ``.html`` pages in ``folder`` holding any string of ``held``; say which."""
    deleted: list[Path] = []
    for page in sorted(folder.glob("*.html")) if held and folder.is_dir() else ():
        try:
            text = page.read_text("utf-8", errors="replace")
            if any(h in text for h in held):
                page.unlink()
                deleted.append(page)
        except OSError:
            continue  # gone meanwhile, or unreadable: left as it is
    return deleted


def _forget_in(copy: Store, ids: list[str]) -> bool:
    present = [i for i in ids if copy.memories.get(i) is not None]
    if not present:
        return False
    with copy.transaction():
        gone = copy.memories.get_many(present).values()
        told = copy.erasure.chain(present)
        for i in present:
            copy.memories.delete(i)
        copy.erasure.drop_texts(_quotes(copy, gone))
        copy.erasure.drop_vectors(copy.erasure.existing(told))
    return True


def _edit_in(copy: Store, memory_id: str, changes: dict[str, Any]) -> bool:
    before = copy.memories.get(memory_id)
    if before is None:
        return False
    with copy.transaction():
        updated, _ = copy.memories.update(memory_id, **changes)
        copy.erasure.drop_texts(_quotes(copy, [before], keep=[updated]))
        copy.erasure.drop_vectors(copy.erasure.chain([memory_id]))
    return True
