"""Read an original MAMA (JavaScript) database and write its rows as MAMA memories and links.

The v1.0 schema: ``decisions`` (topic, decision, reasoning text, outcome SUCCESS/FAILED/PARTIAL,
failure_reason, limitation, supersedes / superseded_by / refined_from, times in milliseconds —
or seconds where an old default filled them), ``decision_edges``, ``checkpoints`` and
``sessions``; later versions add columns (evidence, alternatives, risks, trust_context, kind,
status …) and tables. Unknown columns are kept in ``metadata.legacy``; unknown tables are kept
row by row in ``legacy_rows``; virtual tables, their shadow tables and stored embeddings are
skipped because MAMA rebuilds them. Nothing here commits: the caller owns the transaction.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw

from ..errors import LegacyImportError, ValidationError
from ..privacy import redact_tree
from ..relationships import REPLACING, normalise
from ..storage import NewMemory, Store
from ..storage.archive import keep_row
from . import v1_source as old
from .result import LegacyResult

KNOWN = ("decisions", "decision_edges", "checkpoints", "sessions")
_BOOKKEEPING = {"schema_version": "MAMA v1.0 migration bookkeeping"}
_DERIVED = {"embeddings": "stored embeddings: MAMA re-embeds every memory with its own model"}
# Columns carried over one to one; every other non-null column lands in metadata.legacy.
_DECISION_DIRECT = {
    "id",
    "topic",
    "decision",
    "reasoning",
    "confidence",
    "created_at",
    "updated_at",
    "session_id",
    "usage_count",
}
NO_REASONING = "(no reasoning was recorded in MAMA v1.0)"


def import_v1(store: Store, source: Path, project: str, import_id: int) -> LegacyResult:
    """Copy every row of the v1.0 database at ``source`` into ``store`` (inside its transaction)."""
    src, tables = old.open_source(source)
    if "decisions" not in tables:
        src.close()
        raise LegacyImportError(
            f"{source} has no 'decisions' table: it is not a MAMA v1.0 database"
        )
    result = LegacyResult()
    try:
        old.read(src, "BEGIN")  # one consistent snapshot of the source
        decisions = old.rows(src, "decisions")
        _import_memories(store, "decisions", decisions, "", project, result, _decision)
        _import_links(store, src, tables, decisions, import_id, result)
        if "checkpoints" in tables:
            rows = old.rows(src, "checkpoints")
            _import_memories(store, "checkpoints", rows, "chk_v1_", project, result, _checkpoint)
        if "sessions" in tables:
            _import_sessions(store, old.rows(src, "sessions"), project, import_id, result)
        _archive_unknown(store, src, tables, import_id, result)
    finally:
        src.close()
    ids = [str(r["id"]) for r in decisions]
    missing = set(ids) - store.memories.existing_ids(ids)
    if missing:
        raise LegacyImportError(f"{len(missing)} decision(s) did not arrive: {sorted(missing)[:5]}")
    return result


def _import_memories(
    store: Store,
    table: str,
    rows: list[dict[str, Any]],
    id_prefix: str,
    project: str,
    result: LegacyResult,
    memory_of: Callable[[dict[str, Any], str, str], NewMemory],
) -> None:
    """Insert each row of ``table`` as the memory ``memory_of`` makes of it, its id the row's
    after ``id_prefix``; a row whose id the store holds already (an import run again) is only
    counted."""
    present = store.memories.existing_ids(f"{id_prefix}{r['id']}" for r in rows)
    for row in rows:
        result.tally(table, "source")
        memory_id = f"{id_prefix}{row['id']}"
        if memory_id in present:
            result.tally(table, "already_present")
            continue
        store.memories.insert(memory_of(row, memory_id, project))
        result.tally(table, "imported")


def _decision(row: dict[str, Any], memory_id: str, project: str) -> NewMemory:
    """A v1.0 decision as a memory; the columns it has no field for kept in ``legacy``."""
    outcome: dict[str, Any] = {}
    if str(row.get("outcome") or "").upper() in {"SUCCESS", "FAILED", "PARTIAL"}:
        details = [str(row["failure_reason"])] if row.get("failure_reason") else []
        if row.get("limitation"):
            details.append(f"Limitation: {row['limitation']}")
        outcome = {"status": str(row["outcome"]).upper(), "details": "\n".join(details)}
    legacy = {
        k: old.jsonable(v) for k, v in row.items() if k not in _DECISION_DIRECT and v is not None
    }
    created = old.ms(row.get("created_at")) or 0
    return NewMemory(
        id=memory_id,
        type="decision",
        project=project,
        topic=str(row.get("topic") or ""),
        content=str(row.get("decision") or ""),
        reasoning={
            "primary": str(row.get("reasoning") or "").strip() or NO_REASONING,
            "secondary": [],
            "alternatives_considered": [
                {"option": old.as_text(a), "rejected_because": ""}
                for a in old.as_list(row.get("alternatives"))
            ],
        },
        evidence=[
            {"source": old.as_text(e), "detail": ""} for e in old.as_list(row.get("evidence"))
        ],
        tension={
            "concerns": [],
            "trade_offs": [],
            "risks": [old.as_text(r) for r in old.as_list(row.get("risks"))],
        },
        outcome=outcome,
        confidence=old.confidence(row.get("confidence")),
        # Marked superseded only once the link to its successor exists (see _import_links):
        # a superseded decision is never shown without what replaced it.
        status="current",
        session_id=str(row.get("session_id") or ""),
        metadata={"imported_from": "mama-v1", "legacy": legacy},
        times_used=int(row.get("usage_count") or 0),
        created_at=created,
        updated_at=old.ms(row.get("updated_at")) or created,
    )


def _import_links(
    store: Store,
    src: apsw.Connection,
    tables: dict[str, str],
    decisions: list[dict[str, Any]],
    import_id: int,
    result: LegacyResult,
) -> None:
    """Edges plus the supersedes / superseded_by / refined_from columns, deduplicated.

    A fact stated both as a column and as an edge becomes one link carrying the edge's reason.
    Supersessions are replayed as history: the superseded row keeps its times and version.
    """
    wanted: dict[tuple[str, str, str], dict[str, Any]] = {}

    def want(frm: Any, to: Any, rel: str, at: Any) -> None:
        if frm and to:
            wanted.setdefault((str(frm), str(to), rel), {"at": at})

    for row in decisions:
        want(row["id"], row.get("supersedes"), "supersedes", row.get("created_at"))
        want(row.get("superseded_by"), row["id"], "supersedes", row.get("updated_at"))
        for parent in old.as_list(row.get("refined_from")):
            want(row["id"], parent, "refines", row.get("created_at"))
    if "decision_edges" in tables:
        for edge in old.rows(src, "decision_edges"):
            result.tally("decision_edges", "source")
            if edge.get("approved_by_user") == 0:
                # Proposed by a model and never approved: a suggestion, not a fact.
                _archive(
                    store,
                    import_id,
                    "decision_edges (never approved)",
                    edge,
                    result,
                    kind="archived_unapproved",
                )
                continue
            try:
                rel = normalise(str(edge.get("relationship") or ""))
            except ValueError:
                _archive(store, import_id, "decision_edges (no usable relationship)", edge, result)
                continue
            key = (str(edge["from_id"]), str(edge["to_id"]), rel)
            if "edge" in wanted.get(key, {}):
                result.tally("decision_edges", "already_present")  # same edge, other spelling
                continue
            wanted[key] = {"edge": edge, "at": edge.get("created_at")}
    for (frm, to, rel), extra in wanted.items():
        edge = extra.get("edge") or {}
        table = "decision_edges" if edge else "decision_columns"
        if not edge:
            result.tally(table, "source")
        if store.links.exists(frm, to, rel):
            result.tally(table, "already_present")
            continue
        reason = str(edge.get("reason") or "").strip() or (
            f"imported from MAMA v1.0, which recorded that {frm} {rel} {to} without a reason"
        )
        creator = edge.get("created_by")
        try:
            store.links.add(
                frm,
                to,
                rel,
                reason,
                evidence=old.as_text(edge["evidence"]) if edge.get("evidence") else "",
                confidence=old.confidence(edge.get("weight"), 1.0),
                created_by=str(creator) if creator in {"user", "llm"} else "system",
                created_at=old.ms(extra.get("at")),
                mark_target=False,
            )
        except ValidationError as exc:
            # A dangling id or a supersede cycle: keep the row, do not invent a link.
            row = edge or {"from_id": frm, "to_id": to, "relationship": rel}
            label = f"{table} (not linkable: {exc})"
            _archive(store, import_id, label, row, result, table, kind="archived_unlinkable")
            continue
        if rel in REPLACING:
            store.links.restore_superseded(to)
        result.tally(table, "imported")


def _checkpoint(row: dict[str, Any], memory_id: str, project: str) -> NewMemory:
    """A v1.0 checkpoint as a memory; every column kept in ``legacy`` too."""
    return NewMemory(
        id=memory_id,
        type="checkpoint",
        project=project,
        topic="checkpoint",
        content=str(row.get("summary") or "") or "(empty checkpoint summary in MAMA v1.0)",
        continuity={
            "done": [],
            "remains": [],
            "next_steps": old.steps(row.get("next_steps")),
            "open_files": [old.as_text(f) for f in old.as_list(row.get("open_files"))],
        },
        metadata={
            "imported_from": "mama-v1",
            "legacy": {k: old.jsonable(v) for k, v in row.items() if v is not None},
        },
        created_at=old.ms(row.get("timestamp")) or 0,
    )


def _import_sessions(
    store: Store, rows: list[dict[str, Any]], project: str, import_id: int, result: LegacyResult
) -> None:
    """Sessions with a rolling summary become context; bare bookkeeping rows are archived."""
    for row in rows:
        result.tally("sessions", "source")
        summary = str(row.get("rolling_summary") or "").strip()
        if not summary:
            _archive(store, import_id, "sessions", row, result)
            continue
        memory_id = f"ctx_v1_session_{row['id']}"
        if store.memories.get(memory_id) is not None:
            result.tally("sessions", "already_present")
            continue
        store.memories.insert(
            NewMemory(
                type="context",
                project=project,
                id=memory_id,
                session_id=str(row["id"]),
                topic="session",
                content=summary,
                metadata={
                    "imported_from": "mama-v1",
                    "legacy": {k: old.jsonable(v) for k, v in row.items() if v is not None},
                },
                created_at=old.ms(row.get("started_at")) or old.ms(row.get("last_active_at")) or 0,
            )
        )
        result.tally("sessions", "imported")


def _archive_unknown(
    store: Store, src: apsw.Connection, tables: dict[str, str], import_id: int, result: LegacyResult
) -> None:
    virtual = [n for n, sql in tables.items() if sql.upper().startswith("CREATE VIRTUAL TABLE")]
    for name in sorted(tables):
        if name in KNOWN:
            continue
        if name.startswith("sqlite_"):
            result.skipped[name] = "SQLite internal table"
        elif name in _BOOKKEEPING or name in _DERIVED:
            result.skipped[name] = {**_BOOKKEEPING, **_DERIVED}[name]
        elif name in virtual:
            result.skipped[name] = (
                "virtual table (full-text or vector index): MAMA rebuilds its own"
            )
        elif any(name.startswith(v + "_") for v in virtual):
            result.skipped[name] = "shadow table of a virtual table"
        else:
            rows = old.rows(src, name)
            result.tally(name, "source", len(rows))
            for row in rows:
                _archive(store, import_id, name, row, result)


def _archive(
    store: Store,
    import_id: int,
    label: str,
    row: dict[str, Any],
    result: LegacyResult,
    table: str | None = None,
    kind: str = "archived",
) -> None:
    """Keep a source row that has no memory or link form; the same row is kept only once."""
    table = table or label.split(" (")[0]
    clean, _ = redact_tree(
        {k: old.jsonable(v) for k, v in row.items()}, personal=store.memories.masks_personal
    )
    text = json.dumps(clean, ensure_ascii=False, sort_keys=True)
    result.tally(table, kind if keep_row(store, import_id, label, text) else "already_present")
