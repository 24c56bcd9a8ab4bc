"""How each memory's confidence moved, and why: the ladder's step and its repository.

A memory's ``confidence`` column holds where it stands; ``confidence_history`` holds every
move that brought it there (when, from, to, why, the memory whose outcome caused it, the
outcome's key), so a change is never a silent overwrite. ``cause`` names one recorded
outcome (``<memory id>@<recorded_at>``): a learn pass that finds a cause already in the table
has applied it before. Rows go with the memory they tell (``ON DELETE CASCADE``); the
trigger's id is kept as written, the ``why`` holds words MAMA wrote, never a memory's text.
Imports: standard library, apsw, leaves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, astuple, dataclass
from typing import Any

import apsw

from .repository import Repository
from .sql import select_in

LEARN_PASS = "learn_pass"  # meta key: when the last `mama learn` pass ran (ms)


def confidence_history(conn: apsw.Connection, _dim: int) -> None:
    """The ladder's step: ``confidence_history``, by memory and by cause."""
    conn.execute(
        """
        CREATE TABLE confidence_history (
            id INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL
                REFERENCES memories(id) ON DELETE CASCADE ON UPDATE CASCADE,
            at INTEGER NOT NULL,
            from_value REAL NOT NULL CHECK (from_value BETWEEN 0 AND 1),
            to_value REAL NOT NULL CHECK (to_value BETWEEN 0 AND 1),
            why TEXT NOT NULL CHECK (trim(why) <> ''),
            trigger_id TEXT NOT NULL,
            outcome TEXT NOT NULL CHECK (outcome IN ('SUCCESS','PARTIAL','FAILED','VERIFIED')),
            cause TEXT NOT NULL,
            hops INTEGER NOT NULL DEFAULT 0 CHECK (hops >= 0),
            UNIQUE (cause, memory_id)
        );
        CREATE INDEX confidence_history_by_memory ON confidence_history(memory_id, at);
        """
    )


@dataclass(frozen=True)
class ConfidenceChange:
    """One move of a memory's confidence: hops 0 is the judged memory itself."""

    memory_id: str
    at: int
    from_value: float
    to_value: float
    why: str
    trigger_id: str
    outcome: str  # the trigger's verdict: SUCCESS, PARTIAL, FAILED or VERIFIED
    cause: str
    hops: int = 0

    @property
    def delta(self) -> float:
        return self.to_value - self.from_value

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


_COLUMNS = "memory_id, at, from_value, to_value, why, trigger_id, outcome, cause, hops"


class ConfidenceHistory(Repository):
    """The confidence history of the store's memories: ``store.confidence``."""

    def apply(self, changes: Sequence[ConfidenceChange]) -> None:
        """Write each change's row and set its memory's confidence to its ``to_value``.

        One transaction; the row version of a memory does not move (confidence learned from
        outcomes is bookkeeping, like usage: an edit in flight is not refused because of it).
        """
        with self.transaction():
            self.conn.executemany(
                f"INSERT INTO confidence_history({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [astuple(c) for c in changes],
            )
            self.conn.executemany(
                "UPDATE memories SET confidence = ? WHERE id = ? AND confidence <> ?",
                [(c.to_value, c.memory_id, c.to_value) for c in changes],
            )
            if any(c.delta for c in changes):
                # A cached session start tells the confidence it was rendered with; the
                # store's fingerprint does not see this column (it is not an edit).
                self.conn.execute("DELETE FROM meta WHERE key LIKE 'brief:%'")

    def restore(self, change: ConfidenceChange) -> bool:
        """Write one row back as it was recorded (an export's), leaving the memory's confidence
        as it is (the export carried it); False when the memory is not stored or already
        holds that outcome's move."""
        with self.transaction():
            self.conn.execute(
                f"INSERT OR IGNORE INTO confidence_history({_COLUMNS}) "
                "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS "
                "(SELECT 1 FROM memories WHERE id = ?)",
                (*astuple(change), change.memory_id),
            )
            return bool(self.conn.changes())

    def of_many(self, memory_ids: Iterable[str]) -> list[ConfidenceChange]:
        """The changes of ``memory_ids``, oldest first (one outcome's moves in the order they
        were written: the memory it names, then the ones resting on it)."""
        sql = f"SELECT id, {_COLUMNS} FROM confidence_history WHERE memory_id IN ({{}})"
        rows = sorted(select_in(self.conn, sql, memory_ids), key=lambda r: (r[2], r[0]))
        return [_change(r[1:]) for r in rows]

    def of(self, memory_id: str) -> list[ConfidenceChange]:
        """The memory's changes, oldest first."""
        rows: list[Any] = self.conn.execute(
            f"SELECT {_COLUMNS} FROM confidence_history WHERE memory_id = ? ORDER BY at, id",
            (memory_id,),
        ).fetchall()
        return [_change(r) for r in rows]

    def applied(self, causes: Iterable[str]) -> set[str]:
        """Which of ``causes`` have been applied already."""
        sql = "SELECT DISTINCT cause FROM confidence_history WHERE cause IN ({})"
        return {str(r[0]) for r in select_in(self.conn, sql, causes)}

    def last_judged(self, memory_ids: Iterable[str]) -> dict[str, int]:
        """When each memory was last judged or verified itself (hops 0), by id."""
        sql = (
            "SELECT memory_id, max(at) FROM confidence_history "
            "WHERE hops = 0 AND memory_id IN ({}) GROUP BY memory_id"
        )
        return {str(i): int(at) for i, at in select_in(self.conn, sql, memory_ids)}

    def judged_since(self, since: int | None) -> list[str]:
        """Ids of the memories with a verdict (SUCCESS, PARTIAL, FAILED) changed at or after
        ``since`` (every one when None), in the order they changed."""
        rows = self.conn.execute(
            "SELECT id FROM memories WHERE outcome_status IN ('SUCCESS','PARTIAL','FAILED') "
            "AND updated_at >= ? ORDER BY updated_at, seq",
            (since if since is not None else 0,),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def count(self, *, project: str | None = None) -> int:
        """How many changes are recorded (of ``project``'s memories, when given)."""
        if project is None:
            row = self.conn.execute("SELECT count(*) FROM confidence_history").fetchone()
        else:
            row = self.conn.execute(
                "SELECT count(*) FROM confidence_history h JOIN memories m ON m.id = h.memory_id "
                "WHERE m.project = ?",
                (project,),
            ).fetchone()
        return int(row[0]) if row else 0

    def last_pass(self) -> int | None:
        """When the last learn pass ran (ms), or None before the first."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (LEARN_PASS,)).fetchone()
        return int(row[0]) if row else None

    def mark_pass(self, at: int) -> None:
        """Record that a learn pass ran at ``at``."""
        with self.transaction():
            self.conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (LEARN_PASS, str(at)),
            )


def _change(row: Any) -> ConfidenceChange:
    m, at, a, b, w, t, o, c, h = row
    return ConfidenceChange(
        str(m), int(at), float(a), float(b), str(w), str(t), str(o), str(c), int(h)
    )


def change_from_dict(row: dict[str, Any]) -> ConfidenceChange:
    """An export's row back (raises KeyError, TypeError or ValueError for a bad one)."""
    change = ConfidenceChange(
        str(row["memory_id"]),
        int(row["at"]),
        float(row["from_value"]),
        float(row["to_value"]),
        str(row["why"]),
        str(row["trigger_id"]),
        str(row["outcome"]),
        str(row["cause"]),
        int(row.get("hops") or 0),
    )
    if not (0 <= change.from_value <= 1 and 0 <= change.to_value <= 1):
        raise ValueError("a confidence is outside 0..1")
    if change.outcome not in ("SUCCESS", "PARTIAL", "FAILED", "VERIFIED"):
        raise ValueError(f"unknown outcome {change.outcome!r}")
    if not change.why.strip() or change.hops < 0:
        raise ValueError("'why' is empty or 'hops' is negative")
    return change
