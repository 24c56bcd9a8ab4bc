"""The store's link suggestions: proposed links and the verdicts they got.

A suggestion never becomes a link here: :mod:`mama_plugin.assist.suggest` accepts it by
writing the link through ``store.links.add`` and recording the verdict in one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import apsw

from ..privacy import redact_text
from .records import SUGGESTION_COLUMNS, SuggestionRecord
from .repository import Repository
from .sql import now_ms, select_in

SELECT_SUGGESTION = "SELECT " + ", ".join(SUGGESTION_COLUMNS) + " FROM link_suggestions"
STATUSES = ("pending", "accepted", "rejected", "no_link")


class Suggestions(Repository):
    """The link suggestions of one store: ``store.suggestions``."""

    def add(
        self,
        project: str,
        from_id: str,
        to_id: str,
        relationship: str,
        reason: str,
        *,
        judged_by: str,
        sources: Iterable[str] = (),
        score: float = 0.0,
        status: str = "pending",
    ) -> SuggestionRecord | None:
        """Record a judged pair; return it, or None when the pair was judged before.

        ``status`` is ``pending`` for a proposed link and ``no_link`` for a pair the judge
        turned down (kept so it is not judged again). The reason goes through the privacy
        filter like every other text the store writes.
        """
        reason = redact_text(reason.strip(), personal=self.masks_personal)[0]
        with self.transaction():
            # A concurrent judge may have recorded the pair since it was chosen as a
            # candidate; INSERT OR IGNORE on UNIQUE(from_id, to_id) settles it.
            self.conn.execute(
                "INSERT OR IGNORE INTO link_suggestions(project, from_id, to_id, relationship, "
                "reason, sources, score, judged_by, status, created_at) "
                "VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    project,
                    from_id,
                    to_id,
                    relationship,
                    reason,
                    json.dumps(list(sources)),
                    float(score),
                    judged_by,
                    status,
                    now_ms(),
                ),
            )
            if not self.conn.changes():
                return None
            return self.require(self.conn.last_insert_rowid())

    def require(self, suggestion_id: int) -> SuggestionRecord:
        """One suggestion by id; raises NotFoundError naming how to list them."""
        row = self.one(
            f"{SELECT_SUGGESTION} WHERE id = ?",
            (suggestion_id,),
            f"no link suggestion #{suggestion_id}; list the pending ones with suggest_links "
            "(or `mama links`)",
        )
        return SuggestionRecord.from_row(row, personal=self.masks_personal)

    def of_project(
        self,
        project: str,
        *,
        status: str | None = "pending",
        memory_id: str | None = None,
        limit: int = 50,
    ) -> list[SuggestionRecord]:
        """Suggestions of ``project`` (of one status, touching one memory), best first."""
        clauses, params = ["project = ?"], [project]
        if status is not None:
            clauses.append("status = ?")
            params.append(status)
        if memory_id is not None:
            clauses.append("(from_id = ? OR to_id = ?)")
            params += [memory_id, memory_id]
        rows = self.conn.execute(
            f"{SELECT_SUGGESTION} WHERE {' AND '.join(clauses)} "
            "ORDER BY score DESC, created_at DESC, id DESC LIMIT ?",
            (*params, limit),
        ).fetchall()
        return [SuggestionRecord.from_row(r, personal=self.masks_personal) for r in rows]

    def iter(self, *, project: str | None = None) -> list[SuggestionRecord]:
        """Every suggestion (of one project, or all), oldest first."""
        where, params = (" WHERE project = ?", (project,)) if project is not None else ("", ())
        rows = self.conn.execute(f"{SELECT_SUGGESTION}{where} ORDER BY id", params).fetchall()
        return [SuggestionRecord.from_row(r, personal=self.masks_personal) for r in rows]

    def restore(self, fields: dict[str, Any]) -> bool:
        """Write a suggestion from an export as it was, verdict included; False if the pair
        was judged already. An accepted one points at its link again when the link is here.

        Raises ValueError naming the field to fix for a row the table refuses.
        """
        columns = (
            "project",
            "from_id",
            "to_id",
            "relationship",
            "reason",
            "sources",
            "score",
            "judged_by",
            "status",
            "created_at",
            "decided_at",
            "decided_by",
        )
        missing = [c for c in (*columns[:4], "judged_by", "created_at") if c not in fields]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        values = {c: fields.get(c) for c in columns}
        sources = values["sources"] or []
        if not isinstance(sources, list) or not all(isinstance(x, str) for x in sources):
            raise ValueError("sources must be a list of rule names")
        if not isinstance(values["created_at"], int):
            raise ValueError("created_at must be a timestamp in milliseconds")
        values["sources"] = json.dumps(sources)
        try:
            values["score"] = float(values["score"] or 0)
        except (TypeError, ValueError):
            raise ValueError(f"score must be a number, not {values['score']!r}") from None
        values["status"] = values["status"] or "pending"
        values["decided_by"] = values["decided_by"] or ""
        values["reason"] = redact_text(str(values["reason"] or ""), personal=self.masks_personal)[0]
        judged = self.conn.execute(
            "SELECT 1 FROM link_suggestions WHERE from_id = ? AND to_id = ?",
            (values["from_id"], values["to_id"]),
        ).fetchall()
        if judged:
            return False
        try:  # not OR IGNORE: that would pass over a CHECK violation in silence
            self.conn.execute(
                f"INSERT INTO link_suggestions({', '.join(columns)}) "
                f"VALUES ({', '.join('?' * len(columns))})",
                tuple(values.values()),
            )
        except apsw.ConstraintError as exc:
            raise ValueError(
                f"refused by the table ({exc}): both memories must be in the export or the "
                f"store, status one of {', '.join(STATUSES)}, judged_by llm or rules"
            ) from exc
        if values["status"] == "accepted":
            self.conn.execute(
                "UPDATE link_suggestions SET link_id = (SELECT id FROM memory_links "
                "WHERE from_id = ? AND to_id = ? AND relationship = ? ORDER BY id DESC LIMIT 1) "
                "WHERE id = ?",
                (
                    values["from_id"],
                    values["to_id"],
                    values["relationship"],
                    self.conn.last_insert_rowid(),
                ),
            )
        return True

    def judged_pairs(self, from_ids: Iterable[str]) -> set[tuple[str, str]]:
        """Pairs already judged (any verdict) starting or ending at ``from_ids``."""
        ids = list(from_ids)
        rows = select_in(
            self.conn, "SELECT from_id, to_id FROM link_suggestions WHERE from_id IN ({})", ids
        ) + select_in(
            self.conn, "SELECT from_id, to_id FROM link_suggestions WHERE to_id IN ({})", ids
        )
        return {(str(a), str(b)) for a, b in rows}

    def decide(
        self, suggestion_id: int, status: str, *, decided_by: str, link_id: int | None = None
    ) -> SuggestionRecord:
        """Record a verdict on a pending suggestion and return it.

        Raises NotFoundError for an unknown id; a suggestion already decided is returned
        unchanged (a verdict is given once).
        """
        if status not in ("accepted", "rejected"):
            raise ValueError(f"a verdict is accepted or rejected, not {status!r}")
        with self.transaction():
            current = self.require(suggestion_id)
            if current.status != "pending":
                return current
            self.conn.execute(
                "UPDATE link_suggestions SET status = ?, decided_at = ?, decided_by = ?, "
                "link_id = ? WHERE id = ?",
                (status, now_ms(), decided_by, link_id, suggestion_id),
            )
            return self.require(suggestion_id)

    def any_pending(self, project: str) -> bool:
        """Whether a suggestion of ``project`` waits for a verdict (one index probe)."""
        found = self.conn.execute(
            "SELECT EXISTS(SELECT 1 FROM link_suggestions "
            "WHERE project = ? AND status = 'pending')",
            (project,),
        ).fetchone()
        return bool(found and found[0])

    def counts(self, project: str) -> dict[str, int]:
        """How many suggestions of ``project`` have each status (every status present)."""
        rows = self.conn.execute(
            "SELECT status, count(*) FROM link_suggestions WHERE project = ? GROUP BY status",
            (project,),
        ).fetchall()
        return {s: 0 for s in STATUSES} | {str(s): int(str(n)) for s, n in rows}
