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

import base64
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from ..errors import LegacyImportError, ValidationError
from ..privacy import redact_tree
from ..relationships import REPLACING, normalise
from .store import Store

KNOWN = ("decisions", "decision_edges", "checkpoints", "sessions")
_BOOKKEEPING = {"schema_version": "MAMA v1.0 migration bookkeeping"}
_DERIVED = {"embeddings": "stored embeddings: MAMA re-embeds every memory with its own model"}
# Columns carried over one to one; every other non-null column lands in metadata.legacy.
_DECISION_DIRECT = {"id", "topic", "decision", "reasoning", "confidence", "created_at",
                    "updated_at", "session_id", "usage_count"}  # fmt: skip
NO_REASONING = "(no reasoning was recorded in MAMA v1.0)"


@dataclass
class LegacyResult:
    """Per-table counts: rows in the source and where each one went."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    def tally(self, table: str, outcome: str, n: int = 1) -> None:
        """Count ``n`` rows of ``table`` as ``outcome`` (source, imported, archived, …)."""
        self.counts.setdefault(table, Counter())[outcome] += n


def ms(value: Any) -> int | None:
    """A v1.0 timestamp in milliseconds; values too small to be milliseconds are seconds."""
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number * 1000) if number < 1e11 else int(number)


def import_v1(store: Store, source: Path, project: str, import_id: int) -> LegacyResult:
    """Copy every row of the v1.0 database at ``source`` into ``store`` (inside its transaction)."""
    try:
        src = apsw.Connection(
            f"file:{source}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
        )
        tables = _tables(src)
    except apsw.Error as exc:
        raise LegacyImportError(f"cannot read {source} as an SQLite database: {exc}") from exc
    if "decisions" not in tables:
        src.close()
        raise LegacyImportError(
            f"{source} has no 'decisions' table: it is not a MAMA v1.0 database"
        )
    result = LegacyResult()
    try:
        _read(src, "BEGIN")  # one consistent snapshot of the source
        decisions = _rows(src, "decisions")
        _import_decisions(store, decisions, project, result)
        _import_links(store, src, tables, decisions, import_id, result)
        if "checkpoints" in tables:
            _import_checkpoints(store, _rows(src, "checkpoints"), project, result)
        if "sessions" in tables:
            _import_sessions(store, _rows(src, "sessions"), project, import_id, result)
        _archive_unknown(store, src, tables, import_id, result)
    finally:
        src.close()
    ids = [str(r["id"]) for r in decisions]
    missing = set(ids) - store.existing_ids(ids)
    if missing:
        raise LegacyImportError(f"{len(missing)} decision(s) did not arrive: {sorted(missing)[:5]}")
    return result


def _tables(src: apsw.Connection) -> dict[str, str]:
    rows = src.execute(
        "SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table'"
    ).fetchall()
    return {str(name): str(sql) for name, sql in rows}


def _read(src: apsw.Connection, sql: str) -> list[tuple[Any, ...]]:
    """Run a query on the source; a damaged source becomes an error that names it."""
    try:
        return list(src.execute(sql).fetchall())
    except apsw.Error as exc:
        raise LegacyImportError(
            f"cannot read {src.filename} ({exc}); nothing was imported"
        ) from exc


def _rows(src: apsw.Connection, table: str) -> list[dict[str, Any]]:
    # Name the columns up front: apsw cannot describe a statement that has run to completion.
    quoted = table.replace('"', '""')
    names = [str(r[1]) for r in _read(src, f'PRAGMA table_info("{quoted}")')]
    if not names:
        return []
    columns = ", ".join('"' + n.replace('"', '""') + '"' for n in names)
    rows = _read(src, f'SELECT {columns} FROM "{quoted}"')
    return [dict(zip(names, row, strict=True)) for row in rows]


def _loads(value: Any) -> Any:
    """Parse a JSON column, keeping plain text as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _as_list(value: Any) -> list[Any]:
    parsed = _loads(value)
    if parsed is None or parsed == "":
        return []
    return parsed if isinstance(parsed, list) else [parsed]


def _text(item: Any) -> str:
    return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"base64": base64.b64encode(value).decode("ascii")}
    return _loads(value)


def _confidence(value: Any, default: float = 0.5) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    if number > 1.0 and number <= 100.0:
        number /= 100.0  # a percentage
    return min(1.0, max(0.0, number))


def _import_decisions(
    store: Store, rows: list[dict[str, Any]], project: str, result: LegacyResult
) -> None:
    present = store.existing_ids(str(r["id"]) for r in rows)
    for row in rows:
        result.tally("decisions", "source")
        memory_id = str(row["id"])
        if memory_id in present:
            result.tally("decisions", "already_present")
            continue
        outcome: dict[str, Any] = {}
        if str(row.get("outcome") or "").upper() in {"SUCCESS", "FAILED", "PARTIAL"}:
            details = [str(row["failure_reason"])] if row.get("failure_reason") else []
            if row.get("limitation"):
                details.append(f"Limitation: {row['limitation']}")
            outcome = {"status": str(row["outcome"]).upper(), "details": "\n".join(details)}
        legacy = {
            k: _jsonable(v) for k, v in row.items() if k not in _DECISION_DIRECT and v is not None
        }
        created = ms(row.get("created_at")) or 0
        store.insert_memory(
            id=memory_id,
            type="decision",
            project=project,
            topic=str(row.get("topic") or ""),
            content=str(row.get("decision") or ""),
            reasoning={
                "primary": str(row.get("reasoning") or "").strip() or NO_REASONING,
                "secondary": [],
                "alternatives_considered": [
                    {"option": _text(a), "rejected_because": ""}
                    for a in _as_list(row.get("alternatives"))
                ],
            },
            evidence=[{"source": _text(e), "detail": ""} for e in _as_list(row.get("evidence"))],
            tension={
                "concerns": [],
                "trade_offs": [],
                "risks": [_text(r) for r in _as_list(row.get("risks"))],
            },
            outcome=outcome,
            confidence=_confidence(row.get("confidence")),
            # Marked superseded only once the link to its successor exists (see _import_links):
            # a superseded decision is never shown without what replaced it.
            status="current",
            session_id=str(row.get("session_id") or ""),
            metadata={"imported_from": "mama-v1", "legacy": legacy},
            times_used=int(row.get("usage_count") or 0),
            created_at=created,
            updated_at=ms(row.get("updated_at")) or created,
        )
        result.tally("decisions", "imported")


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
        for parent in _as_list(row.get("refined_from")):
            want(row["id"], parent, "refines", row.get("created_at"))
    if "decision_edges" in tables:
        for edge in _rows(src, "decision_edges"):
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
        if store.link_exists(frm, to, rel):
            result.tally(table, "already_present")
            continue
        reason = str(edge.get("reason") or "").strip() or (
            f"imported from MAMA v1.0, which recorded that {frm} {rel} {to} without a reason"
        )
        creator = edge.get("created_by")
        try:
            store.add_link(
                frm,
                to,
                rel,
                reason,
                evidence=_text(edge["evidence"]) if edge.get("evidence") else "",
                confidence=_confidence(edge.get("weight"), 1.0),
                created_by=str(creator) if creator in {"user", "llm"} else "system",
                created_at=ms(extra.get("at")),
                mark_target=False,
            )
        except ValidationError as exc:
            # A dangling id or a supersede cycle: keep the row, do not invent a link.
            row = edge or {"from_id": frm, "to_id": to, "relationship": rel}
            label = f"{table} (not linkable: {exc})"
            _archive(store, import_id, label, row, result, table, kind="archived_unlinkable")
            continue
        if rel in REPLACING:
            store.restore_superseded(to)
        result.tally(table, "imported")


def _steps(text: Any) -> list[dict[str, str]]:
    lines = [
        re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", ln).strip() for ln in str(text or "").splitlines()
    ]
    return [{"step": ln, "priority": "MEDIUM", "context": ""} for ln in lines if ln]


def _import_checkpoints(
    store: Store, rows: list[dict[str, Any]], project: str, result: LegacyResult
) -> None:
    present = store.existing_ids(f"chk_v1_{r['id']}" for r in rows)
    for row in rows:
        result.tally("checkpoints", "source")
        memory_id = f"chk_v1_{row['id']}"
        if memory_id in present:
            result.tally("checkpoints", "already_present")
            continue
        legacy = {k: _jsonable(v) for k, v in row.items() if v is not None}
        created = ms(row.get("timestamp")) or 0
        store.insert_memory(
            id=memory_id,
            type="checkpoint",
            project=project,
            topic="checkpoint",
            content=str(row.get("summary") or "") or "(empty checkpoint summary in MAMA v1.0)",
            continuity={
                "done": [],
                "remains": [],
                "next_steps": _steps(row.get("next_steps")),
                "open_files": [_text(f) for f in _as_list(row.get("open_files"))],
            },
            metadata={"imported_from": "mama-v1", "legacy": legacy},
            created_at=created,
        )
        result.tally("checkpoints", "imported")


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
        if store.get(memory_id) is not None:
            result.tally("sessions", "already_present")
            continue
        store.insert_memory(
            id=memory_id,
            type="context",
            project=project,
            topic="session",
            content=summary,
            session_id=str(row["id"]),
            metadata={
                "imported_from": "mama-v1",
                "legacy": {k: _jsonable(v) for k, v in row.items() if v is not None},
            },
            created_at=ms(row.get("started_at")) or ms(row.get("last_active_at")) or 0,
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
            rows = _rows(src, name)
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
    clean, _ = redact_tree({k: _jsonable(v) for k, v in row.items()})
    text = json.dumps(clean, ensure_ascii=False, sort_keys=True)
    seen = store.conn.execute(
        "SELECT 1 FROM legacy_rows WHERE source_table = ? AND row = ? LIMIT 1", (label, text)
    ).fetchall()
    if seen:
        result.tally(table, "already_present")
        return
    store.conn.execute(
        "INSERT INTO legacy_rows(import_id, source_table, row) VALUES (?, ?, ?)",
        (import_id, label, text),
    )
    result.tally(table, kind)
