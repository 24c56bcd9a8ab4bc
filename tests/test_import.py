"""`mama import`: a MAMA v1.0 database or a MAMA export arrives whole, or not at all.

Every test builds its own v1.0 database with the real v1.0 schema (tests/v1_fixture.py) and
imports it into a fresh store through the package's own code: ``import_file``,
``rollback_last_import``, ``export_data`` and the ``mama`` command line.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
from v1_fixture import (
    D_CACHE,
    D_GHOST,
    D_JWT,
    D_LINT,
    D_POSTGRES,
    D_SESSIONS,
    D_TTL,
    EMBEDDING_BLOB,
    FTS_SHADOW_TABLES,
    JWT_FAILURE,
    JWT_LIMITATION,
    SECRET,
    SECRET_2,
    SESSION_BARE,
    SESSION_EMPTY_SUMMARY,
    SESSION_WITH_SUMMARY,
    SUPERSEDE_REASON,
    TRUST_CONTEXT,
    V1Database,
    build_sqlite_without_decisions,
    build_v1_db,
    corrupt_table,
)

from mama_plugin.assist import suggest
from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.errors import LegacyImportError
from mama_plugin.services.evolution import current_of
from mama_plugin.storage import NewMemory, Store
from mama_plugin.transfer.dump import export_data
from mama_plugin.transfer.imports import ImportReport, import_file, rollback_last_import
from mama_plugin.transfer.v1 import NO_REASONING

STORY_IDS = [D_JWT, D_SESSIONS, D_TTL, D_POSTGRES, D_CACHE, D_LINT]
SKIPPED = {"embeddings", "decisions_fts", "schema_version", *FTS_SHADOW_TABLES}
# Where each table of the story goes (the report's counts, "source" included).
STORY_COUNTS = {
    "decisions": {"source": 6, "imported": 6},
    "decision_edges": {
        "source": 4,
        "imported": 2,
        "archived_unapproved": 1,
        "archived_unlinkable": 1,
    },
    "decision_columns": {"source": 2, "imported": 2},  # the two refined_from parents
    "checkpoints": {"source": 3, "imported": 3},
    "sessions": {"source": 3, "imported": 1, "archived": 2},
    "error_patterns": {"source": 2, "archived": 2},
}


# -- helpers ---------------------------------------------------------------------------------


@pytest.fixture
def v1(tmp_path: Path) -> V1Database:
    return build_v1_db(tmp_path / "mama-memory.db")


@pytest.fixture
def imported(store: Store, v1: V1Database, project: str) -> ImportReport:
    return import_file(store, v1.path, project=project)


def _ms(value: int) -> int:
    """What a v1 timestamp means in milliseconds (v1 wrote seconds where an old default ran)."""
    return value * 1000 if value < 10**11 else value


def _legacy_rows(store: Store) -> list[tuple[str, dict[str, Any]]]:
    rows = store.conn.execute("SELECT source_table, row FROM legacy_rows ORDER BY id").fetchall()
    return [(table, json.loads(row)) for table, row in rows]


def _snapshot(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every row MAMA keeps, table by table (to prove a failed import wrote nothing)."""
    tables = ("memories", "memory_links", "legacy_rows", "imports", "relationship_usage")
    snap = {t: store.conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in tables}
    snap["memories_fts"] = store.conn.execute(
        "SELECT rowid, topic, content, reasoning FROM memories_fts ORDER BY rowid"
    ).fetchall()
    return snap


def _all_text(store: Store) -> str:
    """Every value of every ordinary table of the store, as one string."""
    names = [
        n for (n,) in store.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        ).fetchall()
    ]  # fmt: skip
    parts = []
    for name in names:
        for row in store.conn.execute(f'SELECT * FROM "{name}"').fetchall():
            parts.append(repr(row))
    return "\n".join(parts)


def _without_exported_at(dump: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in dump.items() if k != "exported_at"}


def _decision(store: Store, project: str, content: str = "Keep a CHANGELOG") -> str:
    record, _ = store.memories.insert(NewMemory(
        type="decision", project=project, topic="docs", content=content,
        reasoning={"primary": "users read it before upgrading"},
    ))  # fmt: skip
    return record.id


# -- decisions -------------------------------------------------------------------------------


def test_every_decision_arrives_with_its_id(
    store: Store, v1: V1Database, imported: ImportReport, project: str
) -> None:
    assert imported.format == "mama-v1"
    for row in v1.decisions:
        memory = store.memories.require(row["id"])
        assert (memory.type, memory.project, memory.topic, memory.content) == (
            "decision",
            project,
            row["topic"],
            row["decision"],
        )
        assert memory.confidence == pytest.approx(row["confidence"])
        assert memory.metadata["imported_from"] == "mama-v1"
    assert store.memories.counts()["by_type"] == {"checkpoint": 3, "context": 1, "decision": 6}


def test_reasoning_becomes_primary_and_a_missing_one_gets_the_placeholder(
    store: Store, imported: ImportReport
) -> None:
    jwt = store.memories.require(D_JWT)
    assert (
        jwt.reasoning["primary"]
        == "Stateless verification scales horizontally without a session store"
    )
    assert store.memories.require(D_POSTGRES).reasoning["primary"] == NO_REASONING  # NULL
    assert store.memories.require(D_CACHE).reasoning["primary"] == NO_REASONING  # blanks only
    assert NO_REASONING.strip()


def test_outcomes_keep_failure_reason_and_limitation(store: Store, imported: ImportReport) -> None:
    jwt = store.memories.require(D_JWT)
    assert jwt.outcome_status == "FAILED"  # the supersede did not overwrite the real outcome
    assert JWT_FAILURE in jwt.outcome["details"]
    assert JWT_LIMITATION in jwt.outcome["details"]
    assert jwt.metadata["legacy"]["limitation"] == JWT_LIMITATION
    assert jwt.metadata["legacy"]["failure_reason"] == JWT_FAILURE
    assert store.memories.require(D_SESSIONS).outcome_status == "SUCCESS"
    ttl = store.memories.require(D_TTL)
    assert ttl.outcome_status == "PARTIAL"
    assert "Mobile clients need a longer TTL" in ttl.outcome["details"]
    assert store.memories.require(D_POSTGRES).outcome_status == "PENDING"  # v1 outcome NULL


def test_created_at_in_seconds_or_milliseconds_ends_up_in_milliseconds(
    store: Store, v1: V1Database, imported: ImportReport
) -> None:
    assert store.memories.require(D_POSTGRES).created_at == 1732231000 * 1000  # v1 wrote seconds
    assert store.memories.require(D_LINT).created_at == 1732800000 * 1000
    assert store.memories.require(D_JWT).created_at == 1732230000000  # v1 wrote milliseconds
    for row in v1.decisions:
        assert store.memories.require(row["id"]).created_at == _ms(row["created_at"]), row["id"]


def test_updated_at_survives_the_import(
    store: Store, v1: V1Database, imported: ImportReport
) -> None:
    """The v1 updated_at is kept (and not overwritten with the time of the import)."""
    assert store.memories.require(D_POSTGRES).updated_at == 1732231500 * 1000
    for row in v1.decisions:
        memory = store.memories.require(row["id"])
        assert (memory.updated_at, memory.version) == (_ms(row["updated_at"]), 1), row["id"]


def test_unknown_columns_are_kept_in_metadata_legacy(store: Store, imported: ImportReport) -> None:
    legacy = store.memories.require(D_JWT).metadata["legacy"]
    assert legacy["trust_context"] == TRUST_CONTEXT  # JSON column, parsed
    assert legacy["kind"] == "decision"
    assert (legacy["usage_success"], legacy["usage_failure"], legacy["time_saved"]) == (5, 2, 3600)
    assert (legacy["needs_validation"], legacy["validation_attempts"]) == (1, 2)
    assert legacy["last_validated_at"] == 1732400000000
    assert (legacy["duration_days"], legacy["user_involvement"]) == (12, "approved")
    assert (legacy["status"], legacy["summary"], legacy["superseded_by"]) == (
        "superseded",
        "JWT for auth",
        D_SESSIONS,
    )
    # Columns MAMA has a place for are not duplicated into legacy.
    assert not {"id", "topic", "decision", "reasoning", "confidence", "created_at"} & set(legacy)
    assert store.memories.require(D_LINT).metadata["legacy"]["status"] == "contradicted"


def test_usage_count_becomes_times_used(
    store: Store, v1: V1Database, imported: ImportReport
) -> None:
    for row in v1.decisions:
        assert store.memories.require(row["id"]).times_used == row.get("usage_count", 0)
    assert store.memories.require(D_JWT).times_used == 7


def test_evidence_alternatives_and_risks_as_json_or_plain_text(
    store: Store, imported: ImportReport
) -> None:
    jwt = store.memories.require(D_JWT)
    sources = [e["source"] for e in jwt.evidence]
    assert sources[0] == "bench/jwt.txt: verify 0.2 ms"
    assert "rfc7519" in sources[1]
    assert [a["option"] for a in jwt.reasoning["alternatives_considered"]] == [
        "server-side sessions",
        "OAuth proxy",
    ]
    assert jwt.tension["risks"] == ["refresh token theft from localStorage"]
    sessions = store.memories.require(D_SESSIONS)
    assert [e["source"] for e in sessions.evidence] == [
        "load test 2024-11-25: p99 12 ms at 5k req/s"
    ]
    assert [a["option"] for a in sessions.reasoning["alternatives_considered"]] == [
        "sticky sessions on the load balancer"
    ]
    assert store.memories.require(D_POSTGRES).evidence == []


def test_a_v1_0_database_without_later_migrations_imports(
    store: Store, tmp_path: Path, project: str
) -> None:
    rows = [
        {"id": "decision_api_style_1731000000000_aaaa", "topic": "api_style", "decision": "REST",
         "reasoning": "clients know it", "outcome": "SUCCESS", "created_at": 1731000000000},
        {"id": "decision_api_style_1731500000000_bbbb", "topic": "api_style", "decision": "GraphQL",
         "reasoning": "fewer round trips", "supersedes": "decision_api_style_1731000000000_aaaa",
         "created_at": 1731500000},
    ]  # fmt: skip
    rows[0]["superseded_by"] = rows[1]["id"]
    v1 = build_v1_db(tmp_path / "old.db", story=False, base_only=True, decisions=rows)
    report = import_file(store, v1.path, project=project)
    assert report.counts["decisions"] == {"source": 2, "imported": 2}
    assert store.memories.require(rows[0]["id"]).status == "superseded"
    assert store.memories.require(rows[1]["id"]).created_at == 1731500000000
    assert [ln.relationship for ln in store.links.of(rows[0]["id"])] == ["supersedes"]


# -- links -----------------------------------------------------------------------------------


def test_supersede_chain_marks_the_old_decision_and_keeps_the_edge_reason(
    store: Store, imported: ImportReport
) -> None:
    assert store.memories.require(D_JWT).status == "superseded"
    assert store.memories.require(D_SESSIONS).status == "current"
    (link,) = [
        ln for ln in store.links.of(D_JWT, direction="in") if ln.relationship == "supersedes"
    ]
    assert (link.from_id, link.to_id, link.reason) == (D_SESSIONS, D_JWT, SUPERSEDE_REASON)
    assert (link.link_category, link.created_by, link.created_at) == (
        "evolution",
        "user",
        1732500000000,
    )
    assert "incident-17 postmortem" in link.evidence
    assert current_of(store, D_JWT).id == D_SESSIONS


def test_refined_from_becomes_refines_links(store: Store, imported: ImportReport) -> None:
    out = {(ln.to_id, ln.relationship) for ln in store.links.of(D_TTL, direction="out")}
    assert out == {(D_SESSIONS, "refines"), (D_JWT, "refines")}
    for link in store.links.of(D_TTL, direction="out"):
        assert link.reason.strip()
        assert link.created_at == 1732600000000
    assert store.memories.require(D_SESSIONS).status == "current"  # refining does not replace


def test_an_edge_without_reason_gets_one(store: Store, imported: ImportReport) -> None:
    (link,) = [ln for ln in store.links.of(D_CACHE, direction="out")]
    assert (link.to_id, link.relationship) == (D_SESSIONS, "builds_on")
    assert link.reason.strip()
    assert link.confidence == pytest.approx(0.8)
    assert link.created_at == 1732700000 * 1000  # the edge was stamped in seconds


def test_an_unapproved_edge_is_archived_not_linked(store: Store, imported: ImportReport) -> None:
    assert store.links.of(D_LINT) == []
    archived = [(t, r) for t, r in _legacy_rows(store) if r.get("from_id") == D_LINT]
    assert len(archived) == 1
    table, row = archived[0]
    assert "decision_edges" in table and "approved" in table
    assert (row["to_id"], row["relationship"], row["approved_by_user"], row["created_by"]) == (
        D_POSTGRES,
        "debates",
        0,
        "llm",
    )
    assert store.memories.require(D_POSTGRES).status == "current"


def test_a_dangling_edge_is_archived_not_linked(store: Store, imported: ImportReport) -> None:
    assert store.memories.get(D_GHOST) is None
    assert all(D_GHOST not in (ln.from_id, ln.to_id) for ln in store.links.iter())
    archived = [(t, r) for t, r in _legacy_rows(store) if r.get("to_id") == D_GHOST]
    assert len(archived) == 1
    table, row = archived[0]
    assert table.startswith("decision_edges") and "not linkable" in table
    assert row["reason"] == "Cache invalidation rides on the message queue"


def test_exactly_the_expected_links_exist(store: Store, imported: ImportReport) -> None:
    links = {(ln.from_id, ln.to_id, ln.relationship) for ln in store.links.iter()}
    assert links == {
        (D_SESSIONS, D_JWT, "supersedes"),  # columns and edge: one link, not two
        (D_TTL, D_SESSIONS, "refines"),
        (D_TTL, D_JWT, "refines"),
        (D_CACHE, D_SESSIONS, "builds_on"),
    }
    assert all(ln.reason.strip() for ln in store.links.iter())


# -- checkpoints, sessions, other tables -------------------------------------------------------


def test_checkpoints_become_checkpoint_memories(
    store: Store, v1: V1Database, imported: ImportReport, project: str
) -> None:
    for row in v1.rows["checkpoints"]:
        memory = store.memories.require(f"chk_v1_{row['id']}")
        assert (memory.type, memory.project, memory.content) == (
            "checkpoint",
            project,
            row["summary"],
        )
        assert memory.created_at == _ms(row["timestamp"])
    first = store.memories.require("chk_v1_1")
    assert first.created_at == 1732240000 * 1000  # stamped in seconds
    assert first.continuity["open_files"] == ["src/auth/jwt.ts", "src/auth/refresh.ts"]
    assert [s["step"] for s in first.continuity["next_steps"]] == [
        "reproduce with two tabs",
        "add a mutex around refresh",
    ]
    second = store.memories.require("chk_v1_2")
    assert [s["step"] for s in second.continuity["next_steps"]] == [
        "remove the jwt library",
        "update the auth docs",
    ]
    assert second.metadata["legacy"]["recent_conversation"] == [
        {"role": "user", "content": "ship it"}
    ]
    third = store.memories.require("chk_v1_3")
    assert (third.continuity["open_files"], third.continuity["next_steps"]) == ([], [])


def test_sessions_with_a_summary_become_context_the_rest_is_archived(
    store: Store, imported: ImportReport
) -> None:
    context = store.memories.require(f"ctx_v1_session_{SESSION_WITH_SUMMARY}")
    assert (context.type, context.session_id) == ("context", SESSION_WITH_SUMMARY)
    assert context.content == "Chose JWT for auth, then hit the refresh race across tabs"
    assert context.created_at == 1732230000000
    for bare in (SESSION_BARE, SESSION_EMPTY_SUMMARY):
        assert store.memories.get(f"ctx_v1_session_{bare}") is None
    archived = sorted(r["id"] for t, r in _legacy_rows(store) if t == "sessions")
    assert archived == sorted([SESSION_BARE, SESSION_EMPTY_SUMMARY])


def test_error_patterns_are_archived_with_blobs_as_base64(
    store: Store, imported: ImportReport
) -> None:
    rows = {r["id"]: r for t, r in _legacy_rows(store) if t == "error_patterns"}
    assert set(rows) == {1, 2}
    assert rows[1]["embedding"] == {"base64": base64.b64encode(EMBEDDING_BLOB).decode("ascii")}
    assert base64.b64decode(rows[1]["embedding"]["base64"]) == EMBEDDING_BLOB
    assert rows[1]["error_pattern"].startswith("TypeError: Cannot read properties")
    assert rows[2]["embedding"] is None


def test_derived_and_bookkeeping_tables_are_skipped_and_named(
    store: Store, imported: ImportReport
) -> None:
    assert set(imported.skipped) >= SKIPPED
    assert all(why.strip() for why in imported.skipped.values())
    assert not SKIPPED & set(imported.counts)
    assert not SKIPPED & {t for t, _ in _legacy_rows(store)}


# -- the report ------------------------------------------------------------------------------


def test_report_accounts_for_every_source_row(store: Store, imported: ImportReport) -> None:
    assert imported.counts == STORY_COUNTS
    for table, counts in imported.counts.items():
        assert counts["source"] == sum(n for k, n in counts.items() if k != "source"), table
    stored = store.conn.execute("SELECT counts FROM imports").fetchall()
    assert [json.loads(c) for (c,) in stored] == [STORY_COUNTS]
    assert len(_legacy_rows(store)) == 6  # 2 edges + 2 sessions + 2 error patterns
    assert json.loads(json.dumps(imported.as_dict()))["counts"] == STORY_COUNTS


def test_cli_prints_the_report(
    tmp_path: Path, v1: V1Database, capsys: pytest.CaptureFixture[str]
) -> None:
    db, folder = tmp_path / "cli" / "mama.db", tmp_path / "shop"
    folder.mkdir()
    assert main(["--db", str(db), "import", str(v1.path), "--project", str(folder)]) == 0
    out = capsys.readouterr().out
    printed: dict[str, dict[str, int]] = {}
    for table, source, parts in re.findall(r"^\s+(\S+)\s+(\d+) rows → (.*)$", out, re.M):
        outcomes = {k: int(v) for k, v in (p.rsplit(" ", 1) for p in parts.split(", "))}
        assert int(source) == sum(outcomes.values()), table
        printed[table] = {"source": int(source), **outcomes}
    assert printed == STORY_COUNTS
    for table in SKIPPED:
        assert re.search(rf"^\s+{table}\s+skipped: \S", out, re.M), table
    assert "0% loss" in out and "mama import --rollback" in out
    with Store.open(db, config=Config()) as store:
        assert store.memories.require(D_JWT).project == str(folder.resolve())


def test_cli_json_report(
    tmp_path: Path, v1: V1Database, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "cli" / "mama.db"
    assert (
        main(["--db", str(db), "import", str(v1.path), "--project", str(tmp_path), "--json"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert (report["format"], report["counts"]) == ("mama-v1", STORY_COUNTS)
    assert set(report["skipped"]) >= SKIPPED
    assert Path(report["backup"]).is_file()


# -- privacy ---------------------------------------------------------------------------------


def test_secrets_are_masked_everywhere(store: Store, imported: ImportReport) -> None:
    assert "[REDACTED:api_key]" in store.memories.require(D_TTL).reasoning["primary"]
    assert SECRET not in store.memories.require(D_TTL).reasoning["primary"]
    text = _all_text(store)
    for secret in (SECRET, SECRET_2):
        assert secret not in text
        assert secret[:20] not in text
    assert store.search.text("leaked")  # the rest of the text is still there and indexed


# -- importing twice -------------------------------------------------------------------------


def test_reimport_adds_no_memories_or_links(
    store: Store, v1: V1Database, imported: ImportReport, project: str
) -> None:
    before = {
        t: rows
        for t, rows in _snapshot(store).items()
        if t in {"memories", "memory_links", "relationship_usage"}
    }
    again = import_file(store, v1.path, project=project)
    after = {t: rows for t, rows in _snapshot(store).items() if t in before}
    assert after == before
    assert again.counts["decisions"] == {"source": 6, "already_present": 6}
    assert again.counts["checkpoints"] == {"source": 3, "already_present": 3}
    # the session with a summary is a memory already; the bare ones are archived rows already
    assert again.counts["sessions"] == {"source": 3, "already_present": 3}


def test_reimport_archives_nothing_twice(
    store: Store, v1: V1Database, imported: ImportReport, project: str
) -> None:
    before = _legacy_rows(store)
    import_file(store, v1.path, project=project)
    assert _legacy_rows(store) == before


def test_reimport_reports_nothing_as_imported(
    store: Store, v1: V1Database, imported: ImportReport, project: str
) -> None:
    again = import_file(store, v1.path, project=project)
    for table, counts in again.counts.items():
        assert counts["source"] == sum(n for k, n in counts.items() if k != "source")
        assert counts.get("imported", 0) == 0, (table, counts)


# -- backup and rollback ---------------------------------------------------------------------


def test_a_backup_of_the_pre_import_state_is_taken_first(
    store: Store, v1: V1Database, project: str
) -> None:
    earlier = _decision(store, project)
    report = import_file(store, v1.path, project=project)
    assert report.backup.is_file()
    assert report.backup.parent == store.path.parent / "backups"
    with Store.open(report.backup, config=Config()) as backup:
        assert [m.id for m in backup.memories.iter()] == [earlier]
        assert backup.conn.execute("SELECT count(*) FROM imports").fetchall()[0][0] == 0
    stored = store.conn.execute("SELECT backup FROM imports").fetchall()
    assert [Path(b) for (b,) in stored] == [report.backup]


def test_rollback_restores_the_state_before_the_import(
    store: Store, v1: V1Database, project: str
) -> None:
    earlier = _decision(store, project, content="Keep a CHANGELOG for the JWT library users")
    before = _snapshot(store)
    report = import_file(store, v1.path, project=project)
    assert store.memories.counts()["memories"] == 11
    assert rollback_last_import(store) == report.backup
    assert _snapshot(store) == before
    assert store.memories.counts()["memories"] == 1
    assert store.memories.get(earlier) is not None and store.memories.get(D_JWT) is None
    assert [m.id for m, _ in store.search.text("JWT")] == [earlier]  # the index went back too
    # The store is usable afterwards: the same file imports again.
    import_file(store, v1.path, project=project)
    assert store.memories.counts()["memories"] == 11


def test_rollback_without_an_import_says_so(store: Store, project: str) -> None:
    _decision(store, project)
    with pytest.raises(LegacyImportError, match="nothing to roll back"):
        rollback_last_import(store)
    assert store.memories.counts()["memories"] == 1


def test_rollback_refuses_to_lose_newer_memories_unless_forced(
    store: Store, v1: V1Database, project: str
) -> None:
    import_file(store, v1.path, project=project)
    later = _decision(store, project, content="A decision saved after the import")
    epoch = int(store.meta("vectors_epoch") or 0)
    with pytest.raises(LegacyImportError, match=r"1 memories were saved or changed after"):
        rollback_last_import(store)
    assert (
        store.memories.get(later) is not None and store.memories.get(D_JWT) is not None
    )  # nothing changed
    rollback_last_import(store, force=True)
    assert store.memories.get(later) is None and store.memories.get(D_JWT) is None
    assert int(store.meta("vectors_epoch") or 0) > epoch  # in-memory vector indexes reload
    kept = sorted((store.path.parent / "backups").glob("*pre-rollback*.db"))
    with Store.open(kept[-1], config=Config()) as saved:  # what --force discarded is still on disk
        assert saved.memories.get(later) is not None


def test_cli_rollback(tmp_path: Path, v1: V1Database, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli" / "mama.db"
    assert main(["--db", str(db), "import", "--rollback"]) == 1
    assert "nothing to roll back" in capsys.readouterr().err
    assert main(["--db", str(db), "import", str(v1.path), "--project", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "import", "--rollback"]) == 0
    assert "restored the database from" in capsys.readouterr().out
    with Store.open(db, config=Config()) as store:
        assert store.memories.counts()["memories"] == 0
        assert store.conn.execute("SELECT count(*) FROM legacy_rows").fetchall()[0][0] == 0


# -- failed imports write nothing ------------------------------------------------------------


def _text_file(tmp: Path) -> Path:
    (tmp / "notes.txt").write_text("just some notes\n", encoding="utf-8")
    return tmp / "notes.txt"


def _empty_file(tmp: Path) -> Path:
    (tmp / "empty.db").write_bytes(b"")
    return tmp / "empty.db"


def _json_array(tmp: Path) -> Path:
    (tmp / "list.json").write_text("[1, 2, 3]", encoding="utf-8")
    return tmp / "list.json"


def _corrupt_json(tmp: Path) -> Path:
    (tmp / "export.json").write_text(
        '{"format": "mama-export", "memories": [{"id": ', encoding="utf-8"
    )
    return tmp / "export.json"


def _foreign_json(tmp: Path) -> Path:
    (tmp / "other.json").write_text('{"name": "not a MAMA export"}', encoding="utf-8")
    return tmp / "other.json"


_GOOD = {
    "id": "dec_good",
    "type": "decision",
    "project": "/p",
    "content": "Use Redis",
    "reasoning": {"primary": "fast"},
}


def _export(tmp: Path, name: str, memories: list[Any], links: list[Any], version: int = 1) -> Path:
    dump = {
        "format": "mama-export",
        "format_version": version,
        "memories": memories,
        "links": links,
    }
    (tmp / name).write_text(json.dumps(dump), encoding="utf-8")
    return tmp / name


def _export_with_a_bad_memory(tmp: Path) -> Path:
    bad = {**_GOOD, "id": "dec_bad", "content": "Use Mongo", "reasoning": {}}
    return _export(tmp, "bad-memory.json", [_GOOD, bad], [])


def _export_with_a_dangling_link(tmp: Path) -> Path:
    link = {
        "from_id": "dec_good",
        "to_id": "dec_missing",
        "relationship": "supersedes",
        "reason": "x",
    }
    return _export(tmp, "dangling.json", [_GOOD], [link])


def _newer_export(tmp: Path) -> Path:
    return _export(tmp, "newer.json", [], [], version=99)


def _no_decisions_table(tmp: Path) -> Path:
    return build_sqlite_without_decisions(tmp / "notes.sqlite")


def _corrupt_sqlite(tmp: Path) -> Path:
    v1 = build_v1_db(tmp / "corrupt.db")
    corrupt_table(v1.path, "decisions")
    return v1.path


BAD_SOURCES = {
    "missing file": (lambda tmp: tmp / "nope.db", "cannot read"),
    "directory": (lambda tmp: tmp, "cannot read"),
    "text file": (_text_file, "neither a MAMA v1.0 SQLite database nor a MAMA JSON export"),
    "empty file": (_empty_file, "neither"),
    "json array": (_json_array, "neither"),
    "corrupt json": (_corrupt_json, "not readable JSON"),
    "foreign json": (_foreign_json, "not a MAMA export"),
    "export with a bad memory": (_export_with_a_bad_memory, "dec_bad"),
    "export with a dangling link": (_export_with_a_dangling_link, "links[0]"),
    "export from a newer MAMA": (_newer_export, "upgrade MAMA"),
    "sqlite without decisions": (_no_decisions_table, "no 'decisions' table"),
    "corrupt sqlite": (_corrupt_sqlite, "corrupt.db"),
}


@pytest.mark.parametrize("case", sorted(BAD_SOURCES))
def test_a_failed_import_writes_nothing(
    store: Store, tmp_path: Path, project: str, case: str
) -> None:
    make, message = BAD_SOURCES[case]
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    source = make(bad_dir)
    _decision(store, project)
    before = _snapshot(store)
    with pytest.raises(LegacyImportError) as caught:
        import_file(store, source, project=project)
    assert message in str(caught.value)
    assert _snapshot(store) == before


@pytest.mark.parametrize("case", sorted(BAD_SOURCES))
def test_cli_reports_a_failed_import_and_exits_1(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    make, message = BAD_SOURCES[case]
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    source = make(bad_dir)
    db = tmp_path / "cli" / "mama.db"
    assert main(["--db", str(db), "import", str(source), "--project", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("mama: error: ") and message in captured.err
    assert captured.err.count("\n") == 1  # one line, no traceback
    with Store.open(db, config=Config()) as store:
        assert store.memories.counts()["memories"] == 0
        assert store.conn.execute("SELECT count(*) FROM imports").fetchall()[0][0] == 0


# -- export and re-import ----------------------------------------------------------------------


def test_json_export_reimports_into_a_fresh_store_unchanged(
    store: Store, imported: ImportReport, tmp_path: Path, project: str
) -> None:
    # Link suggestions travel with their verdicts, so a judged pair is not proposed again.
    owner = store.memories.require(D_POSTGRES).project
    made = [store.suggestions.add(owner, a, b, "relates_to", f"{a} and {b} share the API",
                                 judged_by=judge, sources=["same_topic_week"], score=0.5)
            for a, b, judge in ((D_CACHE, D_TTL, "rules"), (D_LINT, D_POSTGRES, "llm"),
                                (D_POSTGRES, D_CACHE, "llm"))]  # fmt: skip
    assert all(made)
    accepted = suggest.accept(store, made[0].id, decided_by="user")[0]  # type: ignore[union-attr]
    suggest.reject(store, made[1].id, decided_by="claude")  # type: ignore[union-attr]
    first = export_data(store)
    assert len(first["memories"]) == 10 and len(first["links"]) == 5
    assert [x["status"] for x in first["link_suggestions"]] == ["accepted", "rejected", "pending"]
    dump = tmp_path / "export.json"
    dump.write_text(json.dumps(first), encoding="utf-8")
    with Store.open(tmp_path / "fresh" / "mama.db", config=Config()) as fresh:
        report = import_file(fresh, dump, project="/elsewhere")
        assert report.format == "mama-export"
        assert report.counts == {
            "memories": {"source": 10, "imported": 10},
            "links": {"source": 5, "imported": 5},
            "link_suggestions": {"source": 3, "imported": 3},
            # The accepted suggestion gave its older memory a dated note: it travels too.
            "memory_notes": {"source": 1, "imported": 1},
        }
        second = export_data(fresh)
        assert fresh.memories.require(D_JWT).status == "superseded"
        assert current_of(fresh, D_JWT).id == D_SESSIONS
        [again] = [x for x in fresh.suggestions.iter() if x.status == "accepted"]
        link = next(ln for ln in fresh.links.iter() if ln.id == again.link_id)
        assert (link.from_id, link.to_id, again.decided_at) == (D_CACHE, D_TTL, accepted.decided_at)
        assert fresh.suggestions.judged_pairs([D_LINT]) == {(D_LINT, D_POSTGRES)}
    assert _without_exported_at(second) == _without_exported_at(first)
    assert second["memories"] == first["memories"] and second["links"] == first["links"]


def test_a_bad_link_suggestion_in_an_export_names_itself_and_imports_nothing(
    store: Store, imported: ImportReport, tmp_path: Path
) -> None:
    data = export_data(store)
    data["link_suggestions"] = [{"project": "/p", "from_id": D_JWT, "to_id": D_TTL,
                                 "relationship": "relates_to", "reason": "r",
                                 "judged_by": "llm", "created_at": 1, "status": "maybe"}]  # fmt: skip
    dump = tmp_path / "export.json"
    dump.write_text(json.dumps(data), encoding="utf-8")
    with Store.open(tmp_path / "fresh" / "mama.db", config=Config()) as fresh:
        with pytest.raises(LegacyImportError, match=r"link_suggestions\[0\]: refused.*status one"):
            import_file(fresh, dump, project="/elsewhere")
        assert fresh.memories.counts()["memories"] == 0  # all rows arrive or none do


def test_cli_export_then_import_round_trips(
    tmp_path: Path, v1: V1Database, capsys: pytest.CaptureFixture[str]
) -> None:
    one, two = tmp_path / "one" / "mama.db", tmp_path / "two" / "mama.db"
    out1, out2 = tmp_path / "one.json", tmp_path / "two.json"
    assert main(["--db", str(one), "import", str(v1.path), "--project", str(tmp_path)]) == 0
    assert main(["--db", str(one), "export", "--output", str(out1)]) == 0
    assert main(["--db", str(two), "import", str(out1)]) == 0
    assert main(["--db", str(two), "export", "-o", str(out2)]) == 0
    capsys.readouterr()
    first, second = (json.loads(p.read_text(encoding="utf-8")) for p in (out1, out2))
    assert _without_exported_at(first) == _without_exported_at(second)
    assert {m["id"] for m in first["memories"]} >= set(STORY_IDS)


def test_markdown_export_tells_the_story(
    tmp_path: Path, v1: V1Database, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "cli" / "mama.db"
    assert main(["--db", str(db), "import", str(v1.path), "--project", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["--db", str(db), "export", "--format", "md"]) == 0
    text = capsys.readouterr().out
    for row in v1.decisions:
        assert row["topic"] in text and row["decision"] in text
    assert "superseded" in text
    assert f"replaced by {D_SESSIONS}" in text
    assert JWT_FAILURE in text
    assert "10 memories" in text


# -- scale -----------------------------------------------------------------------------------


def test_a_thousand_decisions_in_supersede_chains_import(
    store: Store, tmp_path: Path, project: str
) -> None:
    v1 = build_v1_db(tmp_path / "big.db", story=False, synthetic=1000, chain_length=4)
    report = import_file(store, v1.path, project=project)
    assert report.counts["decisions"] == {"source": 1000, "imported": 1000}
    assert report.counts["decision_edges"] == {"source": 375, "imported": 375}  # 125 chains × 3
    assert report.counts["decision_columns"] == {"source": 375, "imported": 375}
    for counts in report.counts.values():
        assert counts["source"] == sum(n for k, n in counts.items() if k != "source")
    counts = store.memories.counts()
    assert counts["memories"] == 1000
    assert counts["by_status"] == {"current": 250, "superseded": 750}
    assert counts["links"] == 750 and counts["links_by_category"] == {"evolution": 750}
    for row in v1.decisions:
        memory = store.memories.require(row["id"])
        assert memory.created_at == _ms(row["created_at"])
        assert memory.reasoning["primary"] == (row["reasoning"] or NO_REASONING)
    heads = [row["id"] for row in v1.decisions[::4]]
    tails = [row["id"] for row in v1.decisions[3::4]]
    assert [current_of(store, h).id for h in heads] == tails
