"""Checked against the code before it is told: memories flag files changed since they were saved.

In a real git repository (``git init`` in tmp_path): a decision citing a file, the file
changed and committed; the next session start, load_checkpoint, a search answer and the
prompt's context tell it; an outcome, VERIFIED or ``mama verify`` clears it; outside git,
stat data and hashes; and a session start over 1,000 memories citing files stays within the
hook's deadline.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.filestate import blob_hash, cited_paths, head_commit
from mama_plugin.hooks.runner import DEADLINE_S
from mama_plugin.hooks.session_start import session_start
from mama_plugin.project import project_key
from mama_plugin.schema import LoadCheckpointInput, OutcomeInput, parse
from mama_plugin.server.base import Env
from mama_plugin.server.tools import do_load_checkpoint
from mama_plugin.services.saving.memories import save_checkpoint, save_decision
from mama_plugin.services.saving.outcomes import record_outcome_event
from mama_plugin.services.story import briefing
from mama_plugin.services.story.answers import search_by_context
from mama_plugin.storage import NewMemory, Store

DECISION = {
    "topic": "sessions",
    "decision": "Redis Sentinel with one replica for sessions",
    "reasoning": {"primary": "failover without running a cluster"},
    "evidence": ["infra/redis.tf:12-30"],
}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with infra/redis.tf and bench/load.js committed."""
    root = tmp_path / "repo"
    (root / "infra").mkdir(parents=True)
    (root / "bench").mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "Dev")
    git(root, "config", "commit.gpgsign", "false")
    (root / "infra/redis.tf").write_text('resource "redis" { replicas = 1 }\n')
    (root / "bench/load.js").write_text("export default () => 1;\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "first")
    return root


def change(repo: Path, path: str, text: str, message: str = "change") -> None:
    (repo / path).write_text(text)
    git(repo, "commit", "-qam", message)


def start(repo: Path, config: Config) -> str:
    return session_start({"cwd": str(repo), "source": "startup"}, config)


def test_a_changed_and_committed_file_is_flagged_at_session_start_and_in_search(
    repo: Path, mama_home: Path
) -> None:
    config, project = Config(mama_home), project_key(repo)
    with Store.open(config=config) as store:
        saved = save_decision(store, project, DECISION).memory
        briefing.refresh(store, project, config)
    before = start(repo, config)
    assert "Redis Sentinel" in before and "verify:" not in before
    change(repo, "infra/redis.tf", 'resource "redis" { replicas = 2 }\n')
    change(repo, "infra/redis.tf", 'resource "redis" { replicas = 3 }\n')
    day = git(repo, "log", "-1", "--format=%cs")

    told = start(repo, config)  # the hook: stat and hash only, no git
    assert (
        f"verify: infra/redis.tf changed since this was decided — `mama verify {saved.id}`" in told
    )
    with Store.open(config=config) as store:
        briefing.refresh(store, project, config)  # the server's refresh asks git, off the hook
    told = start(repo, config)
    assert f"infra/redis.tf changed since this was decided (2 commits, last {day})" in told
    with Store.open(config=config) as store:
        answer = search_by_context(store, "Redis Sentinel sessions", project=project)
    assert f"- {saved.id}: verify: infra/redis.tf changed since this was decided (2 commits" in (
        answer.text
    )
    assert answer.primary_results[0].verify is not None


def test_an_outcome_clears_the_flag_and_verified_keeps_the_outcome(
    repo: Path, mama_home: Path
) -> None:
    config, project = Config(mama_home), project_key(repo)
    with Store.open(config=config) as store:
        first = save_decision(store, project, DECISION).memory
        second = save_decision(
            store,
            project,
            {
                **DECISION,
                "topic": "load",
                "decision": "k6 for load tests",
                "evidence": ["bench/load.js"],
            },
        ).memory
    change(repo, "infra/redis.tf", 'resource "redis" { replicas = 2 }\n')
    change(repo, "bench/load.js", "export default () => 2;\n")
    assert start(repo, config).count("verify:") == 2
    with Store.open(config=config) as store:
        record_outcome_event(
            store,
            parse(
                OutcomeInput,
                {"memory_id": first.id, "outcome": "SUCCESS", "details": "failover in 4 s"},
            ),
        )
        record_outcome_event(
            store,
            parse(
                OutcomeInput, {"memory_id": second.id, "outcome": "verified", "details": "still k6"}
            ),
        )
        assert store.memories.require(second.id).outcome_status == "PENDING"
        answer = search_by_context(store, "Redis Sentinel k6 load", project=project)
    told = start(repo, config)
    assert "verify:" not in told and "verify:" not in answer.text
    assert all(r.verify is None for r in answer.primary_results)


def test_mama_verify_records_the_files_as_they_are_now(
    repo: Path, mama_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, project = Config(mama_home), project_key(repo)
    with Store.open(config=config) as store:
        saved = save_decision(store, project, DECISION).memory
    change(repo, "infra/redis.tf", 'resource "redis" { replicas = 2 }\n')
    assert "verify:" in start(repo, config)
    assert main(["verify", saved.id]) == 0
    out = capsys.readouterr().out
    assert f"Verified {saved.id} against infra/redis.tf" in out
    assert "was: infra/redis.tf changed since this was decided (1 commit" in out
    assert "verify:" not in start(repo, config)
    with Store.open(config=config) as store:
        (row,) = store.file_states.of([saved.id])[saved.id]
    assert row.commit == git(repo, "rev-parse", "HEAD") == head_commit(repo)
    assert row.state.blob == git(repo, "hash-object", "infra/redis.tf")


def test_a_confirmed_item_whose_evidence_changed_is_no_longer_told_as_confirmed(
    repo: Path, mama_home: Path
) -> None:
    config, project = Config(mama_home), project_key(repo)
    with Store.open(config=config) as store:
        cp = save_checkpoint(
            store,
            project,
            {
                "summary": "Load-tested the session store",
                "confirmed": [
                    {"claim": "p99 under 50 ms", "evidence": "k6 run bench/load.js"},
                    {"claim": "replica count is 1", "evidence": "read the plan"},
                ],
            },
        ).memory
        env = Env(store, project)
        resumed = do_load_checkpoint(env, parse(LoadCheckpointInput, {})).text
        assert "✅ p99 under 50 ms" in resumed and "verify:" not in resumed
        change(repo, "bench/load.js", "export default () => 3;\n")
        resumed = do_load_checkpoint(env, parse(LoadCheckpointInput, {})).text
    assert "✅ p99 under 50 ms" not in resumed
    assert "⚠️ was confirmed; bench/load.js changed since: p99 under 50 ms" in resumed
    assert "✅ replica count is 1" in resumed
    assert "verify: bench/load.js changed since this was saved (1 commit, last" in resumed
    assert f"`mama verify {cp.id}`" in resumed
    told = start(repo, config)
    assert "was confirmed; bench/load.js changed since" in told


def test_outside_git_content_decides_not_the_mtime(tmp_path: Path, mama_home: Path) -> None:
    folder = tmp_path / "plain"
    (folder / "infra").mkdir(parents=True)
    tf = folder / "infra/redis.tf"
    tf.write_text("one\n")
    config, project = Config(mama_home), project_key(folder)
    with Store.open(config=config) as store:
        save_decision(store, project, DECISION)
        (row,) = next(
            iter(
                store.file_states.of(
                    [m.id for m in store.memories.latest(project=project, type="decision")]
                ).values()
            )
        )
    assert row.commit == "" and row.state.blob == blob_hash(b"one\n")
    quiet = start(folder, config)
    stamp = time.time_ns() + 5_000_000_000
    os.utime(tf, ns=(stamp, stamp))  # touched, same content
    assert start(folder, config) == quiet  # byte-identical: nothing changed
    tf.write_text("two\n")
    assert "verify: infra/redis.tf changed since this was decided — `mama verify" in start(
        folder, config
    )
    tf.unlink()
    assert "verify: infra/redis.tf was deleted since this was decided" in start(folder, config)


def test_the_session_start_stays_within_its_deadline_with_1000_memories_citing_files(
    repo: Path, mama_home: Path
) -> None:
    config, project = Config(mama_home), project_key(repo)
    files = [f"src/mod{i:03}.py" for i in range(200)]
    (repo / "src").mkdir()
    for path in files:
        (repo / path).write_text(f"VALUE = {path!r}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "modules")
    with Store.open(config=config) as store:
        save_decision(store, project, DECISION)
        from mama_plugin.services.learning.verify import record

        with store.transaction():
            memories = [
                store.memories.insert(
                    NewMemory(
                        type="decision",
                        project=project,
                        topic=f"module {i}",
                        content=f"module {i} keeps its value",
                        reasoning={"primary": "simple"},
                        evidence=[{"source": f"{files[i % len(files)]}:1"}],
                    )
                )[0]
                for i in range(999)
            ]
        for m in memories:
            record(store, m)
        briefing.refresh(store, project, config)
    for path in files:
        (repo / path).write_text("VALUE = 'changed'\n")
    (repo / "infra/redis.tf").write_text('resource "redis" { replicas = 2 }\n')
    git(repo, "commit", "-qam", "change every cited file")
    began = time.monotonic()
    told = start(repo, config)  # a cache miss: every cited file differs by its stat data
    elapsed = time.monotonic() - began
    assert "verify:" in told
    assert elapsed < DEADLINE_S, f"{elapsed:.2f} s over the hook's {DEADLINE_S} s deadline"


def test_cited_paths_are_existing_files_under_the_root(tmp_path: Path) -> None:
    (tmp_path / "infra").mkdir()
    (tmp_path / "infra/redis.tf").write_text("x")
    (tmp_path / "smoke.sh").write_text("x")
    (tmp_path / "README").write_text("x")
    (tmp_path.parent / "outside.txt").write_text("x")
    texts = [
        "infra/redis.tf:12-30",
        "ran `sh smoke.sh` twice.",
        "see https://example.com/infra/redis.tf and e.g. the docs",
        "../outside.txt, missing/file.py, README",
        f"{tmp_path}/infra/redis.tf",
    ]
    assert cited_paths(texts, tmp_path) == ["infra/redis.tf", "smoke.sh"]


@pytest.mark.parametrize("data", [b"", b"hello\n", bytes(range(256)) * 3])
def test_blob_hash_is_gits(tmp_path: Path, data: bytes) -> None:
    (tmp_path / "f").write_bytes(data)
    done = subprocess.run(["git", "hash-object", str(tmp_path / "f")], capture_output=True)
    assert blob_hash(data) == done.stdout.decode().strip()


def test_a_memory_outside_any_folder_records_nothing(store: Store, project: str) -> None:
    saved = save_decision(store, project, DECISION).memory  # PROJECT is no folder here
    assert store.file_states.of([saved.id]) == {}
    assert (
        json.loads(json.dumps(search_by_context(store, "Sentinel", project=project).as_dict()))[
            "primary_results"
        ][0].get("verify")
        is None
    )


def test_a_prompt_s_context_flags_a_changed_memory_without_spawning_git(
    repo: Path, mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mama_plugin.services.learning import verify
    from mama_plugin.services.recall.context import prompt_context

    def no_git(*_: object) -> None:
        raise AssertionError("the prompt hook ran git")

    monkeypatch.setattr(verify, "commits_since", no_git)
    project = project_key(repo)
    with Store.open(config=Config(mama_home)) as store:
        saved = save_decision(store, project, DECISION).memory
        ask = "Should sessions keep Redis Sentinel with one replica?"
        assert "verify:" not in prompt_context(store, ask, project=project, budget=400).text
        change(repo, "infra/redis.tf", 'resource "redis" { replicas = 2 }\n')
        told = prompt_context(store, ask, project=project, budget=400)
    assert saved.id in told.text
    assert f"verify: infra/redis.tf changed since this was decided — `mama verify {saved.id}`" in (
        told.text
    )


def test_a_memory_s_files_go_with_it_and_an_old_database_gains_the_table(
    repo: Path, mama_home: Path
) -> None:
    from mama_plugin.storage.connection import connect
    from mama_plugin.storage.migrations import LATEST, migrate

    old = mama_home / "old.db"
    mama_home.mkdir(parents=True, exist_ok=True)
    conn = connect(old)
    migrate(conn, embedding_dim=384, upto=LATEST - 1)  # the ladder before memory_files
    conn.close()
    with Store.open(old, config=Config(mama_home)) as store:
        saved = save_decision(store, project_key(repo), DECISION).memory
        assert [c.state.path for c in store.file_states.of([saved.id])[saved.id]] == [
            "infra/redis.tf"
        ]
        with store.transaction():
            store.conn.execute("DELETE FROM memories WHERE id = ?", (saved.id,))
        assert store.file_states.of([saved.id]) == {}


def test_a_pointer_to_a_changed_memory_says_a_file_it_cites_changed(
    repo: Path, mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mama_plugin.services.learning import verify
    from mama_plugin.services.recall import context as prompt_context
    from mama_plugin.services.recall.prompt import Hit, Recall

    def no_git(*_: object) -> None:
        raise AssertionError("the prompt hook ran git")

    monkeypatch.setattr(verify, "commits_since", no_git)
    project = project_key(repo)
    with Store.open(config=Config(mama_home)) as store:
        saved = save_decision(store, project, DECISION).memory
        pointed = Recall(["redis"], pointers=[Hit(saved, saved, 0.6, 0.2, ["redis"])])
        before = prompt_context._pointed(store, pointed, 400, None).text
        change(repo, "infra/redis.tf", 'resource "redis" { replicas = 2 }\n')
        after = prompt_context._pointed(store, pointed, 400, None).text
    assert saved.id in before and "changed since" not in before
    assert saved.id in after and " (a file it cites changed since)" in after
