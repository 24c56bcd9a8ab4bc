"""Issue 29's leftovers: `mama doctor` quotes the backups setting; an export carries the files
memories cite and an import restores them as recorded; a process's cached view vectors never
write back text another process forgot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Counting

from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.project import project_key
from mama_plugin.services.hygiene.forgetting import forget, redact
from mama_plugin.services.learning import verify
from mama_plugin.services.saving.memories import save_decision
from mama_plugin.services.search import indexing
from mama_plugin.services.search import views as recall_views
from mama_plugin.services.warm import warm
from mama_plugin.storage import Store
from mama_plugin.transfer.dump import export_data
from mama_plugin.transfer.imports import import_file

SESSIONS = {
    "topic": "session_store",
    "decision": "Redis Sentinel with one replica for sessions",
    "reasoning": {"primary": "failover without running a cluster"},
    "evidence": ["infra/redis.tf:12-30"],
}


# -- mama doctor ----------------------------------------------------------------------------


def test_doctor_quotes_the_backups_max_count_setting(
    mama_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["config", "set", "backups_max_count", "7"]) == 0
    capsys.readouterr()
    main(["doctor"])  # no store yet: the backups are listed all the same
    out = capsys.readouterr().out
    assert "keeping the newest 7;" in out and "newest 3" not in out


# -- export and import of memory_files ------------------------------------------------------


def test_an_export_carries_the_cited_files_and_an_import_restores_them_as_recorded(
    tmp_path: Path, mama_home: Path
) -> None:
    root = tmp_path / "repo"
    (root / "infra").mkdir(parents=True)
    (root / "infra/redis.tf").write_text("replicas = 1\n")
    project = project_key(root)
    with Store.open(config=Config(mama_home)) as store:
        saved = save_decision(store, project, SESSIONS).memory
        (recorded,) = store.file_states.of([saved.id])[saved.id]
        data = export_data(store)
    assert data["memory_files"] == [recorded.as_dict()]
    (root / "infra/redis.tf").write_text("replicas = 2\n")  # changed after the export
    dump = tmp_path / "export.json"
    dump.write_text(json.dumps(data), encoding="utf-8")
    with Store.open(tmp_path / "fresh" / "mama.db", config=Config(mama_home)) as fresh:
        report = import_file(fresh, dump, project=None)
        assert report.counts["memory_files"] == {"source": 1, "imported": 1}
        assert fresh.file_states.of([saved.id])[saved.id] == [recorded]
        # Restored as recorded, not recorded again: the change is still flagged.
        (change,) = verify.check(fresh, [fresh.memories.require(saved.id)])[saved.id]
        assert change.path == "infra/redis.tf"
        again = import_file(fresh, dump, project=None)  # present already: left alone
        assert again.counts["memory_files"] == {"source": 1, "already_present": 1}


def test_an_import_refuses_a_bad_memory_files_row(tmp_path: Path, mama_home: Path) -> None:
    from mama_plugin.errors import LegacyImportError

    with Store.open(config=Config(mama_home)) as store:
        data = export_data(store)
        data["memory_files"] = [{"memory_id": "dec_x", "project": "/p", "path": ""}]
        dump = tmp_path / "bad.json"
        dump.write_text(json.dumps(data), encoding="utf-8")
        with pytest.raises(LegacyImportError, match=r"memory_files\[0\]"):
            import_file(store, dump, project=None)


# -- cached view vectors after another process forgets ---------------------------------------


def _prompt_time_views(server: Store, memory_id: str, erased: str | None = None) -> list[str]:
    """The server's prompt path embeds a memory's views (cached, not stored yet)."""
    m = server.memories.require(memory_id)
    narrative = indexing.narrative_text(server, m)
    model = Counting()
    prompt = model.embed(["session store"])[0]
    recall_views.best_cosines(model, prompt, [(m, narrative, None)], store=server, erased=erased)
    return recall_views.views(m, narrative)


@pytest.mark.parametrize("how", ["forget", "redact"])
def test_a_forget_elsewhere_keeps_the_server_s_cached_views_out_of_the_store(
    tmp_path: Path, mama_home: Path, how: str
) -> None:
    config, db = Config(mama_home), tmp_path / "mama.db"
    with Store.open(db, config=config) as server, Store.open(db, config=config) as cli:
        saved = save_decision(server, "/p", SESSIONS).memory
        views = _prompt_time_views(server, saved.id)
        assert warm(server).views.holds_fresh(Counting.name)
        if how == "forget":
            forget(cli, config, saved.id)  # `mama forget`, another process
        else:
            redact(cli, config, "Sentinel")
        assert recall_views.save_fresh(server, Counting.name) == 0
        assert server.vectors.of_texts(Counting.name, views) == {}
        # The cache itself let go of the old text.
        again = Counting()
        m = saved if how == "forget" else server.memories.require(saved.id)
        warm(server).views.vectors(again, [(m, views[-1])], server)
        assert again.texts == [views[-1]]


def test_views_embedded_for_memories_read_before_a_forget_are_not_kept(
    tmp_path: Path, mama_home: Path
) -> None:
    """The forget lands between the prompt reading its candidates and embedding their views."""
    config, db = Config(mama_home), tmp_path / "mama.db"
    with Store.open(db, config=config) as server, Store.open(db, config=config) as cli:
        saved = save_decision(server, "/p", SESSIONS).memory
        before = server.erasure.token()  # read with the candidates
        m = server.memories.require(saved.id)
        forget(cli, config, saved.id)
        narrative = indexing.narrative_text(server, m)
        model = Counting()
        prompt = model.embed(["session store"])[0]
        best = recall_views.best_cosines(
            model, prompt, [(m, narrative, None)], store=server, erased=before
        )
        assert saved.id in best  # this answer still used them
        assert not warm(server).views.holds_fresh(Counting.name)
        assert recall_views.save_fresh(server, Counting.name) == 0


def test_views_are_still_stored_when_nothing_was_erased(tmp_path: Path, mama_home: Path) -> None:
    config, db = Config(mama_home), tmp_path / "mama.db"
    with Store.open(db, config=config) as server, Store.open(db, config=config) as cli:
        saved = save_decision(server, "/p", SESSIONS).memory
        views = _prompt_time_views(server, saved.id)
        save_decision(cli, "/p", {**SESSIONS, "topic": "other", "decision": "k6 for load"})
        assert recall_views.save_fresh(server, Counting.name) == len(views)
        assert set(server.vectors.of_texts(Counting.name, views)) == set(views)
