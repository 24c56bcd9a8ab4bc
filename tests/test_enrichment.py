"""Decisions imported from MAMA v1.0 without narrative: listed, offered in answers, enriched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DESKTOP, connect
from conftest import text_result as text
from v1_fixture import D_JWT, D_LINT, D_POSTGRES, D_SESSIONS, V1Database, build_v1_db

from mama_plugin.assist.enrich import draft
from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.server.state import State
from mama_plugin.services.saving.enrichment import missing, offer, unenriched
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.storage import Store
from mama_plugin.transfer.imports import import_file


@pytest.fixture
def v1(tmp_path: Path) -> V1Database:
    return build_v1_db(tmp_path / "mama-memory.db")


def test_the_imported_decisions_lacking_narrative_are_listed_with_what_they_lack(
    store: Store, v1: V1Database, project: str
) -> None:
    import_file(store, v1.path, project=project)
    own = save_decision(
        store, project, {"topic": "db", "decision": "Use SQLite", "reasoning": "one file"}
    ).memory
    assert missing(own) == ()  # saved here, not imported: never offered
    found = {e.memory.id: e for e in unenriched(store, project)}
    # v1.0 had no specifics column; JWT kept its evidence and alternatives columns.
    assert found[D_JWT].missing == ("specifics",)
    assert found[D_POSTGRES].missing == ("specifics", "alternatives", "evidence")
    assert own.id not in found
    # The draft is read from the memory's own words (no model): Biome was chosen over
    # "ESLint + Prettier", and the sessions decision recorded its load test's figures.
    lint = draft(found[D_LINT].memory, found[D_LINT].missing).alternatives
    assert lint[0]["option"] == "ESLint + Prettier"
    sessions = draft(found[D_SESSIONS].memory, found[D_SESSIONS].missing)
    assert sessions.specifics == ["p99 12 ms at 5k req/s"] and sessions.alternatives == []
    assert not draft(found[D_POSTGRES].memory, found[D_POSTGRES].missing)  # nothing to draft
    assert unenriched(store, "/elsewhere") == []


def test_mama_enrich_lists_them_and_says_when_none_lacks_any(
    store: Store, v1: V1Database, project: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["enrich", "--project", project]) == 0
    assert "no decision imported from MAMA v1.0 lacks narrative" in capsys.readouterr().out
    import_file(store, v1.path, project=project)
    store.close()
    assert main(["enrich", "--project", project]) == 0
    out = capsys.readouterr().out
    assert f"{D_POSTGRES} [database] Use PostgreSQL 16" in out
    assert "lacks: specifics, alternatives, evidence" in out
    assert "draft alternative (from its own text): ESLint + Prettier" in out
    assert f"update_memory memory_id={D_POSTGRES} expected_version=1" in out
    assert main(["enrich", "--project", project, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {e["id"] for e in listed} >= {D_POSTGRES, D_LINT}
    assert all(e["missing"] for e in listed)
    assert main(["search", "PostgreSQL primary store", "--project", project, "--keyword-only"]) == 0
    assert "imported from MAMA v1.0 without specifics, alternatives, evidence: mama enrich" in (
        capsys.readouterr().out
    )


@pytest.mark.anyio
async def test_answers_offer_the_update_and_update_memory_adds_the_narrative(
    v1: V1Database, mama_home: Path, project: str, tmp_path: Path
) -> None:
    state = State(Config(mama_home), project, tmp_path / "server.db")
    try:
        import_file(state.store, v1.path, project=project)
        async with connect(state, DESKTOP) as c:
            loaded = await c.call_tool("load_context", {"memory_id": D_POSTGRES})
            told = text(loaded)
            assert "Imported from MAMA v1.0 without narrative" in told
            assert f"{D_POSTGRES} lacks specifics, alternatives, evidence" in told
            assert f"update_memory memory_id={D_POSTGRES} expected_version=1" in told
            assert told.index("</") < told.index("Imported from MAMA v1.0")  # after the fence
            assert loaded.structured_content["enrich"] == ["specifics", "alternatives", "evidence"]
            found = await c.call_tool("search_by_context", {"query": "PostgreSQL primary store"})
            assert f"{D_POSTGRES} lacks specifics, alternatives, evidence" in text(found)
            first = found.structured_content["primary_results"][0]
            assert first["id"] == D_POSTGRES and first["enrich"] == [
                "specifics",
                "alternatives",
                "evidence",
            ]
            # The call the offer names, with what the user knows.
            updated = await c.call_tool("update_memory", {
                "memory_id": D_POSTGRES, "expected_version": 1,
                "specifics": ["p99 4 ms on 2M rows"],
                "evidence": [{"source": "bench/pg.txt:1-20", "detail": "pgbench run"}],
                "reasoning": {"primary": "JSONB and row-level security",
                              "alternatives_considered": [
                                  {"option": "MySQL 8", "rejected_because": "no RLS"}]},
            })  # fmt: skip
            assert not updated.is_error, text(updated)
            again = await c.call_tool("load_context", {"memory_id": D_POSTGRES})
            assert "Imported from MAMA v1.0" not in text(again)
            assert again.structured_content["enrich"] == []
        m = state.store.memories.require(D_POSTGRES)
        assert m.metadata["imported_from"] == "mama-v1" and missing(m) == ()
        assert m.reasoning["alternatives_considered"][0]["option"] == "MySQL 8"
        assert D_POSTGRES not in {e.memory.id for e in unenriched(state.store, project)}
    finally:
        state.close()


def test_the_offer_names_at_most_three_and_counts_the_rest(
    store: Store, v1: V1Database, project: str
) -> None:
    import_file(store, v1.path, project=project)
    lacking = [e.memory for e in unenriched(store, project)]
    assert len(lacking) > 3
    line = offer(lacking)
    assert line.count(" lacks ") == 3
    assert f"{len(lacking) - 3} more (`mama enrich` lists them)" in line
    assert "(each at its own id and version)" in line
    assert offer([]) == ""
