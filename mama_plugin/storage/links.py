"""The store's links: writing them with their rules, reading them by memory or in bulk."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import ValidationError
from ..privacy import redact_text, redact_tree
from ..relationships import REPLACING, category_of, normalise
from .records import LinkRecord, Redactions
from .repository import Repository
from .sql import SELECT_LINK, now_ms


class Links(Repository):
    """The links of one store: ``store.links``."""

    def add(
        self,
        from_id: str,
        to_id: str,
        relationship: str,
        reason: str,
        *,
        evidence: str = "",
        context: str = "",
        confidence: float = 1.0,
        created_by: str = "user",
        created_at: int | None = None,
        used_at: int | None = None,
        mark_target: bool = True,
    ) -> tuple[LinkRecord, Redactions]:
        """Link two memories with a reason; a replacing link marks its target superseded.

        Stating an existing link again returns it unchanged. ``used_at`` carries a dumped
        link's last use over (``services/graph/decay.py``: its strength fades from then).
        ``mark_target=False`` leaves the target's status alone (restoring a dump whose
        statuses are already right). Raises
        ValidationError for an empty reason, an unknown id, a self-link or a supersede cycle.
        """
        try:
            word = normalise(relationship)
        except ValueError as exc:
            raise ValidationError([str(exc)]) from None
        if redact_text(word)[1]:
            raise ValidationError(["relationship looks like a secret — use a verb such as refines"])
        if from_id == to_id:
            raise ValidationError([f"a memory cannot link to itself ({from_id})"])
        if not 0.0 <= confidence <= 1.0:
            raise ValidationError([f"confidence must be between 0 and 1 (got {confidence!r})"])
        text, found = redact_tree(
            {"reason": (reason or "").strip(), "evidence": evidence, "context": context},
            personal=self.masks_personal,
        )
        # Checked after redaction: a reason that was all <private> leaves nothing to store.
        if not text["reason"].strip():
            raise ValidationError(["every link needs a reason — say in one sentence why"])
        created = created_at if created_at is not None else now_ms()
        with self.transaction():
            known = self._store.memories.existing_ids([from_id, to_id])
            missing = [i for i in (from_id, to_id) if i not in known]
            if missing:
                end = "from_id" if missing[0] == from_id else "to_id"
                raise ValidationError(
                    [f"unknown {end} {missing[0]!r}: no memory has that id — search for it first"]
                )
            if word in REPLACING and self._replaces(to_id, from_id):
                raise ValidationError(
                    [
                        f"{to_id} already (transitively) {word} {from_id}: "
                        "this link would make a cycle"
                    ]
                )
            existing = self.conn.execute(
                f"{SELECT_LINK} WHERE from_id = ? AND to_id = ? AND relationship = ?",
                (from_id, to_id, word),
            ).fetchall()
            if existing:
                return LinkRecord.from_row(existing[0], personal=self.masks_personal), Redactions()
            category = self._category(word)
            self.conn.execute(
                "INSERT INTO memory_links(from_id, to_id, relationship, reason, evidence, context, "
                "link_category, confidence, created_by, created_at, used_at) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    from_id,
                    to_id,
                    word,
                    text["reason"],
                    text["evidence"],
                    text["context"],
                    category,
                    confidence,
                    created_by,
                    created,
                    used_at,
                ),
            )
            link_id = self.conn.last_insert_rowid()
            self.conn.execute(
                "INSERT INTO relationship_usage(relationship, link_category, uses, first_used, "
                "last_used) VALUES (?, ?, 1, ?, ?) ON CONFLICT(relationship) DO UPDATE SET "
                "uses = uses + 1, last_used = max(last_used, excluded.last_used)",
                (word, category, created, created),
            )
            if word in REPLACING and mark_target:
                self._mark_superseded(to_id)
            row = self.conn.execute(f"{SELECT_LINK} WHERE id = ?", (link_id,)).fetchall()[0]
        redactions = Redactions()
        redactions.add(dict(found))
        return LinkRecord.from_row(row, personal=self.masks_personal), redactions

    def _category(self, word: str) -> str:
        """The category recorded for ``word`` by meaning (``mama graph tidy``), else derived."""
        rows = self.conn.execute(
            "SELECT category FROM relationship_words WHERE relationship = ?", (word,)
        ).fetchall()
        return str(rows[0][0]) if rows else category_of(word)

    def _replaces(self, start: str, target: str) -> bool:
        """True if ``start`` reaches ``target`` by following replacing links forward."""
        marks = ",".join("?" * len(REPLACING))
        rows = self.conn.execute(
            f"""WITH RECURSIVE chain(id) AS (
                    SELECT ? UNION
                    SELECT l.to_id FROM memory_links l JOIN chain ON l.from_id = chain.id
                    WHERE l.relationship IN ({marks}))
                SELECT 1 FROM chain WHERE id = ? LIMIT 1""",
            (start, *sorted(REPLACING), target),
        ).fetchall()
        return bool(rows)

    def _mark_superseded(self, memory_id: str) -> None:
        self.conn.execute(
            "UPDATE memories SET status = 'superseded', version = version + 1, updated_at = ?, "
            "outcome_status = CASE outcome_status WHEN 'PENDING' THEN 'SUPERSEDED' "
            "ELSE outcome_status END WHERE id = ?",
            (now_ms(), memory_id),
        )

    def restore_superseded(self, memory_id: str) -> None:
        """Mark a memory superseded as history already had it: times and version unchanged.

        For importers replaying a past supersession; live writes go through :meth:`add`.
        """
        self.conn.execute(
            "UPDATE memories SET status = 'superseded', "
            "outcome_status = CASE outcome_status WHEN 'PENDING' THEN 'SUPERSEDED' "
            "ELSE outcome_status END WHERE id = ?",
            (memory_id,),
        )

    def exists(self, from_id: str, to_id: str, relationship: str) -> bool:
        """True if this exact link (relationship spelled canonically) is stored."""
        rows = self.conn.execute(
            "SELECT 1 FROM memory_links WHERE from_id = ? AND to_id = ? AND relationship = ?",
            (from_id, to_id, relationship),
        ).fetchall()
        return bool(rows)

    def of(
        self, memory_id: str, *, direction: str = "both", categories: Iterable[str] | None = None
    ) -> list[LinkRecord]:
        """Links touching a memory: ``out`` (from it), ``in`` (to it) or ``both``; oldest first."""
        where = {"out": "from_id = :id", "in": "to_id = :id"}.get(
            direction, "(from_id = :id OR to_id = :id)"
        )
        params: dict[str, Any] = {"id": memory_id}
        if categories is not None:
            cats = list(categories)
            where += " AND link_category IN (" + ",".join(f":c{i}" for i in range(len(cats))) + ")"
            params.update({f"c{i}": c for i, c in enumerate(cats)})
        rows = self.conn.execute(f"{SELECT_LINK} WHERE {where} ORDER BY created_at, id", params)
        return [LinkRecord.from_row(r, personal=self.masks_personal) for r in rows.fetchall()]

    def newest(
        self, where: str, params: list[object], *, project: str | None, limit: int
    ) -> list[LinkRecord]:
        """Links matching ``where`` (leaving ``project``'s memories when given), newest first."""
        if project is not None:
            where += " AND from_id IN (SELECT id FROM memories WHERE project = ?)"
            params = [*params, project]
        rows = self.conn.execute(
            f"{SELECT_LINK} WHERE {where} ORDER BY created_at DESC, id DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [LinkRecord.from_row(r, personal=self.masks_personal) for r in rows]

    def among(self, memory_ids: Iterable[str], *, direction: str) -> list[LinkRecord]:
        """Every link leaving (``out``) or entering (``in``) any of ``memory_ids``."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return []
        column = "from_id" if direction == "out" else "to_id"
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(f"{SELECT_LINK} WHERE {column} IN ({marks})", ids)
        return [LinkRecord.from_row(r, personal=self.masks_personal) for r in rows.fetchall()]

    def of_project(self, project: str) -> list[LinkRecord]:
        """Every link leaving a memory of ``project``, oldest first."""
        rows = self.conn.execute(
            f"{SELECT_LINK} WHERE from_id IN (SELECT id FROM memories WHERE project = ?) "
            "ORDER BY id",
            (project,),
        )
        return [LinkRecord.from_row(r, personal=self.masks_personal) for r in rows.fetchall()]

    def iter(self) -> Iterator[LinkRecord]:
        """Every link, oldest first."""
        for row in self.conn.execute(f"{SELECT_LINK} ORDER BY id").fetchall():
            yield LinkRecord.from_row(row, personal=self.masks_personal)

    def usage(self) -> list[tuple[str, str, int]]:
        """(relationship, category, uses), most used first: candidates for promotion."""
        rows = self.conn.execute(
            "SELECT relationship, link_category, uses FROM relationship_usage "
            "ORDER BY uses DESC, relationship"
        )
        return [tuple(r) for r in rows.fetchall()]  # type: ignore[misc]
