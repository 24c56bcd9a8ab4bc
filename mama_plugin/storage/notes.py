"""Dated notes a memory gains after it was saved: the ladder's step and its repository.

A memory's text is never rewritten when the graph grows around it; instead it gains a row
here: "a later memory links to this" (``kind`` ``link``, with the link's relationship) or
"the memory this builds on was judged" (``kind`` ``outcome``, with the verdict). A row holds
ids, a relationship word, a verdict and a time, never memory text: the words a note is told
with (the trigger's type and topic) are read from the trigger when it is told, so an edit or
a redaction of the trigger leaves nothing stale here. Rows go with either memory
(``ON DELETE CASCADE`` on both ends); ``cause`` is the note's key per memory, so writing a
note twice writes it once. Imports: standard library, apsw, leaves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, astuple, dataclass
from typing import Any

import apsw

from .repository import Repository
from .sql import select_in

EVOLVE_PASS = "evolve_pass"  # meta key: when the last `mama evolve` pass ran (ms)
EVOLVE_MARKS = "evolve_marks"  # meta key: "<memory seq>:<link id>", the last rows it saw
KINDS = ("link", "outcome")


def memory_notes(conn: apsw.Connection, _dim: int) -> None:
    """The ladder's step: ``memory_notes``, by memory and by the memory that caused them."""
    conn.execute(
        """
        CREATE TABLE memory_notes (
            id INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL
                REFERENCES memories(id) ON DELETE CASCADE ON UPDATE CASCADE,
            trigger_id TEXT NOT NULL
                REFERENCES memories(id) ON DELETE CASCADE ON UPDATE CASCADE,
            at INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('link', 'outcome')),
            relationship TEXT NOT NULL DEFAULT '',
            outcome TEXT NOT NULL DEFAULT '',
            cause TEXT NOT NULL CHECK (cause <> ''),
            CHECK (memory_id <> trigger_id),
            CHECK (kind <> 'link' OR relationship <> ''),
            CHECK (kind <> 'outcome' OR outcome IN ('SUCCESS', 'PARTIAL', 'FAILED')),
            UNIQUE (memory_id, cause)
        );
        CREATE INDEX memory_notes_by_memory ON memory_notes(memory_id, at);
        CREATE INDEX memory_notes_by_trigger ON memory_notes(trigger_id);
        """
    )


@dataclass(frozen=True)
class Note:
    """One note on ``memory_id``, caused by ``trigger_id`` at ``at``.

    ``link``: the trigger links to the memory with ``relationship``; ``outcome``: the memory
    the trigger is, and which this one builds on, was judged ``outcome``.
    """

    memory_id: str
    trigger_id: str
    at: int
    kind: str
    relationship: str
    outcome: str
    cause: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


_COLUMNS = "memory_id, trigger_id, at, kind, relationship, outcome, cause"
# A link note is told while its link stands (a link removed since takes its note's words
# with it; the row stays, and says it again if the link comes back).
_STANDING = (
    "(n.kind <> 'link' OR EXISTS (SELECT 1 FROM memory_links l WHERE l.from_id = n.trigger_id "
    "AND l.to_id = n.memory_id AND l.relationship = n.relationship))"
)


class Notes(Repository):
    """The notes memories gained since they were saved: ``store.notes``."""

    def add(self, notes: Sequence[Note]) -> list[Note]:
        """Write each note not written before (same memory and cause); return those written.

        A note whose memory or trigger is not stored is skipped, not an error: one of them
        may have been forgotten between the read that found it and this write.
        """
        written: list[Note] = []
        with self.transaction():
            for note in notes:
                self.conn.execute(
                    f"INSERT OR IGNORE INTO memory_notes({_COLUMNS}) "
                    "SELECT ?, ?, ?, ?, ?, ?, ? WHERE "
                    "(SELECT count(*) FROM memories WHERE id IN (?, ?)) = 2",
                    (*astuple(note), note.memory_id, note.trigger_id),
                )
                if self.conn.changes():
                    written.append(note)
        return written

    def of_many(
        self, memory_ids: Iterable[str], *, latest: int | None = None
    ) -> dict[str, list[Note]]:
        """The told notes of ``memory_ids`` by memory, oldest first (its ``latest`` newest
        only, when given)."""
        sql = f"SELECT {_COLUMNS}, id FROM memory_notes n WHERE memory_id IN ({{}}) AND {_STANDING}"
        rows = sorted(select_in(self.conn, sql, memory_ids), key=lambda r: (r[2], r[7]))
        out: dict[str, list[Note]] = {}
        for row in rows:
            out.setdefault(str(row[0]), []).append(_note(row))
        if latest is not None:
            out = {k: v[-latest:] if latest > 0 else [] for k, v in out.items()}
        return out

    def of(self, memory_id: str) -> list[Note]:
        """Every told note of ``memory_id``, oldest first."""
        return self.of_many([memory_id]).get(memory_id, [])

    def all_of(self, memory_ids: Iterable[str]) -> list[Note]:
        """Every note (told or not) of ``memory_ids`` whose trigger is among them too: an
        export's rows, oldest first."""
        ids = set(memory_ids)
        sql = f"SELECT {_COLUMNS}, id FROM memory_notes WHERE memory_id IN ({{}})"
        rows = sorted(select_in(self.conn, sql, ids), key=lambda r: (r[2], r[7]))
        return [_note(r) for r in rows if str(r[1]) in ids]

    def count(self) -> int:
        """How many notes are stored."""
        row = self.conn.execute("SELECT count(*) FROM memory_notes").fetchone()
        return int(row[0]) if row else 0

    def touched_since(self, since: int | None) -> list[str]:
        """Ids of what an evolve pass looks at: the memories written or changed since the
        pass that ran at ``since`` and both ends of the links written since (every memory
        when None). "Since" is by row for what was written (an import keeps its rows' old
        times) and by time for what changed."""
        if since is None:
            rows = self.conn.execute("SELECT id FROM memories").fetchall()
            return sorted(str(r[0]) for r in rows)
        seq, link = self._marks()
        rows = self.conn.execute(
            "SELECT id FROM memories WHERE seq > ?1 OR updated_at >= ?2 "
            "UNION SELECT from_id FROM memory_links WHERE id > ?3 "
            "UNION SELECT to_id FROM memory_links WHERE id > ?3",
            (seq, since, link),
        ).fetchall()
        return sorted(str(r[0]) for r in rows)

    def _marks(self) -> tuple[int, int]:
        """The last memory row and link row the last pass saw."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (EVOLVE_MARKS,)).fetchone()
        seq, _, link = str(row[0] if row else "0:0").partition(":")
        return int(seq or 0), int(link or 0)

    def last_pass(self) -> int | None:
        """When the last evolve pass ran (ms), or None before the first."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (EVOLVE_PASS,)).fetchone()
        return int(row[0]) if row else None

    def mark_pass(self, at: int) -> None:
        """Record that an evolve pass ran at ``at``, and the last rows it saw."""
        with self.transaction():
            seq = self.conn.execute("SELECT coalesce(max(seq), 0) FROM memories").fetchone()
            link = self.conn.execute("SELECT coalesce(max(id), 0) FROM memory_links").fetchone()
            marks = f"{int(seq[0]) if seq else 0}:{int(link[0]) if link else 0}"
            self.conn.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [(EVOLVE_PASS, str(at)), (EVOLVE_MARKS, marks)],
            )


def _note(row: Any) -> Note:
    m, t, at, kind, rel, outcome, cause = row[:7]
    return Note(str(m), str(t), int(at), str(kind), str(rel), str(outcome), str(cause))


def note_from_dict(row: dict[str, Any]) -> Note:
    """An export's row back (raises KeyError, TypeError or ValueError for a bad one)."""
    note = Note(
        str(row["memory_id"]),
        str(row["trigger_id"]),
        int(row["at"]),
        str(row["kind"]),
        str(row.get("relationship") or ""),
        str(row.get("outcome") or ""),
        str(row["cause"]),
    )
    if note.kind not in KINDS:
        raise ValueError(f"unknown note kind {note.kind!r}")
    if note.kind == "link" and not note.relationship:
        raise ValueError("a link note names its relationship")
    if note.kind == "outcome" and note.outcome not in ("SUCCESS", "PARTIAL", "FAILED"):
        raise ValueError(f"unknown outcome {note.outcome!r}")
    if not note.cause or note.memory_id == note.trigger_id:
        raise ValueError("'cause' is empty or the note is caused by its own memory")
    return note
