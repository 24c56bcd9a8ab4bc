"""What happens to a link after it is made: used, down-voted, deleted, archived and restored.

A link's strength fades with time (``services/graph/decay.py``). Here are the writes that
move it: :meth:`LinkState.reinforce` records a use (both ends told in one answer), which
restarts its fading; :meth:`LinkState.down_vote` halves its stored confidence;
:meth:`LinkState.delete` removes it for good; :meth:`LinkState.archive` moves links the
periodic pass pruned into ``archived_links``, where they are listed and restored from —
pruning never loses a link. Archived links cascade with their memories (a forget leaves
none behind) and their texts are masked by ``mama redact`` like a live link's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import astuple, dataclass
from typing import Any

import apsw

from ..relationships import REPLACING
from .records import LINK_COLUMNS, LinkRecord
from .repository import Repository
from .sql import SELECT_LINK, now_ms, select_in

_BUMP = "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'links_version'"


def link_state(conn: apsw.Connection, _dim: int) -> None:
    """The schema step: ``memory_links.used_at`` and the ``archived_links`` table."""
    conn.execute(
        """
        ALTER TABLE memory_links ADD COLUMN used_at INTEGER;
        CREATE TABLE archived_links (
            id INTEGER PRIMARY KEY,
            from_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE ON UPDATE CASCADE,
            to_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE ON UPDATE CASCADE,
            relationship TEXT NOT NULL,
            reason TEXT NOT NULL,
            evidence TEXT NOT NULL DEFAULT '',
            context TEXT NOT NULL DEFAULT '',
            link_category TEXT NOT NULL,
            confidence REAL NOT NULL,
            created_by TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            used_at INTEGER,
            archived_at INTEGER NOT NULL,
            why TEXT NOT NULL
        );
        CREATE INDEX archived_links_by_source ON archived_links(from_id);
        CREATE INDEX archived_links_by_target ON archived_links(to_id);
        """
    )


@dataclass(frozen=True)
class ArchivedLink:
    """A link the periodic pass pruned: the link as it was, when and why it was archived."""

    link: LinkRecord
    archived_at: int
    why: str

    def as_dict(self) -> dict[str, object]:
        """Plain data (``--json``, a tool's structured answer)."""
        return {**self.link.as_dict(), "archived_at": self.archived_at, "why": self.why}


_COLUMNS = ", ".join(LINK_COLUMNS)


class LinkState(Repository):
    """Uses, votes, deletions and the archive of the store's links."""

    def get(self, link_id: int) -> LinkRecord:
        """The live link ``link_id``; NotFoundError when there is none."""
        row = self.one(
            f"{SELECT_LINK} WHERE id = ?",
            (link_id,),
            f"no link has id {link_id} (`mama links --relationship WORD` or the memory's "
            "links show their ids; `mama graph archived` lists pruned ones)",
        )
        return LinkRecord.from_row(row, personal=self.masks_personal)

    def reinforce(self, memory_ids: Iterable[str], at: int | None = None) -> int:
        """Record a use of every link between two of ``memory_ids``; how many were used.

        Bookkeeping like a memory's use count: ``links_version`` does not move, so a cached
        walk shows the regained strength when its minute is over.
        """
        ids = list(dict.fromkeys(memory_ids))
        if len(ids) < 2:
            return 0
        wanted = set(ids)
        rows = select_in(self.conn, "SELECT id, to_id FROM memory_links WHERE from_id IN ({})", ids)
        used = [int(r[0]) for r in rows if r[1] in wanted]
        if used:
            when = at if at is not None else now_ms()
            with self.transaction():
                self.conn.executemany(
                    "UPDATE memory_links SET used_at = ? WHERE id = ? AND coalesce(used_at, 0) < ?",
                    [(when, i, when) for i in used],
                )
        return len(used)

    def down_vote(self, link_id: int, factor: float) -> LinkRecord:
        """Multiply link ``link_id``'s stored confidence by ``factor``; the link after."""
        with self.transaction():
            self.get(link_id)
            self.conn.execute(
                "UPDATE memory_links SET confidence = confidence * ? WHERE id = ?",
                (factor, link_id),
            )
            self.conn.execute(_BUMP)  # cached walks read the old confidence
            return self.get(link_id)

    def delete(self, link_id: int) -> tuple[LinkRecord, bool]:
        """Remove link ``link_id`` for good; the link as it was, and whether its target is
        current again (it was replaced by this link alone: never left superseded by nothing).
        """
        with self.transaction():
            link = self.get(link_id)
            self.conn.execute("DELETE FROM memory_links WHERE id = ?", (link_id,))
            if link.relationship not in REPLACING or any(
                ln.relationship in REPLACING
                for ln in self._store.links.of(link.to_id, direction="in")
            ):
                return link, False
            self.conn.execute(
                "UPDATE memories SET status = 'current', version = version + 1, "
                "updated_at = ?, outcome_status = CASE outcome_status "
                "WHEN 'SUPERSEDED' THEN 'PENDING' ELSE outcome_status END "
                "WHERE id = ? AND status = 'superseded'",
                (now_ms(), link.to_id),
            )
            return link, bool(self.conn.changes())

    def archive(self, pruned: Iterable[tuple[LinkRecord, str]], at: int | None = None) -> int:
        """Move each (link, why) into ``archived_links``, in one transaction; how many moved."""
        when = at if at is not None else now_ms()
        moved = 0
        with self.transaction():
            for link, why in pruned:
                self.conn.execute(
                    f"INSERT OR REPLACE INTO archived_links({_COLUMNS}, archived_at, why) "
                    f"SELECT {_COLUMNS}, ?, ? FROM memory_links WHERE id = ?",
                    (when, why, link.id),
                )
                if self.conn.changes():
                    self.conn.execute("DELETE FROM memory_links WHERE id = ?", (link.id,))
                    moved += 1
        return moved

    def archived(self, project: str | None = None) -> list[ArchivedLink]:
        """The archived links (of ``project``'s memories when given), newest archived first."""
        where, params = "", ()
        if project is not None:
            where = " WHERE from_id IN (SELECT id FROM memories WHERE project = ?)"
            params = (project,)  # type: ignore[assignment]
        rows: list[Any] = self.conn.execute(
            f"SELECT {_COLUMNS}, archived_at, why FROM archived_links{where} "
            "ORDER BY archived_at DESC, id",
            params,
        ).fetchall()
        n = len(LINK_COLUMNS)
        return [
            ArchivedLink(
                LinkRecord.from_row(r[:n], personal=self.masks_personal), int(r[n]), str(r[n + 1])
            )
            for r in rows
        ]

    def restore(self, link_id: int, at: int | None = None) -> tuple[LinkRecord, bool]:
        """Put archived link ``link_id`` back, counted as used now so it does not fade at once.

        Returns the live link and whether it was restored (False: the same link had been made
        again meanwhile, and the archived copy is dropped). NotFoundError when none is archived.
        """
        when = at if at is not None else now_ms()
        with self.transaction():
            row = self.one(
                f"SELECT {_COLUMNS} FROM archived_links WHERE id = ?",
                (link_id,),
                f"no archived link has id {link_id} (`mama graph archived` lists them)",
            )
            old = LinkRecord.from_row(row, personal=False)
            self.conn.execute("DELETE FROM archived_links WHERE id = ?", (link_id,))
            again = self.conn.execute(
                f"{SELECT_LINK} WHERE from_id = ? AND to_id = ? AND relationship = ?",
                (old.from_id, old.to_id, old.relationship),
            ).fetchall()
            if again:
                return LinkRecord.from_row(again[0], personal=self.masks_personal), False
            taken = self.conn.execute(
                "SELECT 1 FROM memory_links WHERE id = ?", (link_id,)
            ).fetchall()
            new_id = None if taken else link_id  # keep its id unless another link has it
            values = (new_id, *astuple(old)[1:-1], when)  # the link's columns, used now
            self.conn.execute(
                f"INSERT INTO memory_links({_COLUMNS}) VALUES ({', '.join('?' * len(values))})",
                values,
            )
            restored = self.conn.last_insert_rowid()
            return self.get(int(restored)), True
