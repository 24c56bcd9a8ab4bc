"""The user sees and steers memory: `mama verify --list` names every memory flagged as changed
since it was decided, with the commands to act; search answers and load_checkpoint name how
to correct or remove a memory, once and in a few tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_verify import DECISION, change, git, repo  # noqa: F401  (repo: a fixture)

from mama_plugin.cli import main
from mama_plugin.config import Config
from mama_plugin.project import project_key
from mama_plugin.schema import LoadCheckpointInput, parse
from mama_plugin.server.base import Env
from mama_plugin.server.tools import do_load_checkpoint
from mama_plugin.services.saving.memories import save_checkpoint, save_decision
from mama_plugin.services.story import checked
from mama_plugin.services.story.answers import CORRECT, search_by_context
from mama_plugin.storage import Store

LOAD = {**DECISION, "topic": "load", "decision": "k6 for load tests", "evidence": ["bench/load.js"]}


def test_verify_list_names_every_flagged_memory_with_the_commands_to_act(
    repo: Path,  # noqa: F811
    mama_home: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config, project = Config(mama_home), project_key(repo)
    with Store.open(config=config) as store:
        redis = save_decision(store, project, DECISION).memory
        load = save_decision(store, project, LOAD).memory
    monkeypatch.chdir(repo)
    assert main(["verify", "--list"]) == 0
    assert capsys.readouterr().out.startswith("nothing flagged: the files 2 memories of")
    change(repo, "infra/redis.tf", 'resource "redis" { replicas = 2 }\n')
    day = git(repo, "log", "-1", "--format=%cs")

    assert main(["verify", "--list"]) == 0
    out = capsys.readouterr().out
    assert f"1 memories of {project} cite files changed since:" in out
    assert f"  {redis.id} (decision, sessions): Redis Sentinel" in out
    assert f"infra/redis.tf changed since this was decided (1 commit, last {day})" in out
    assert load.id not in out
    assert "`mama verify ID`" in out and "`mama forget ID`" in out

    assert main(["verify", "--list", "--json", "--project", str(repo)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [f["id"] for f in data["flagged"]] == [redis.id]
    assert data["flagged"][0]["verify"] == f"mama verify {redis.id}"
    assert data["flagged"][0]["forget"] == f"mama forget {redis.id}"
    assert data["checked"] == 2 and data["more"] == 0

    assert main(["verify", redis.id]) == 0  # verified: no longer flagged
    capsys.readouterr()
    assert main(["verify", "--list"]) == 0
    assert capsys.readouterr().out.startswith("nothing flagged")


def test_verify_list_bounds_git_to_the_memories_it_tells_and_counts_the_rest(
    repo: Path,  # noqa: F811
    mama_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config, project = Config(mama_home), project_key(repo)
    with Store.open(config=config) as store:
        saved = [
            save_decision(store, project, {**DECISION, "topic": f"t{i}", "decision": f"choice {i}"})
            for i in range(3)
        ]
        old = save_checkpoint(
            store, project, {"summary": "Sentinel wired", "open_files": ["infra/redis.tf"]}
        ).memory
        save_checkpoint(store, project, {"summary": "later work", "open_files": ["bench/load.js"]})
        assert store.file_states.of([old.id])[old.id]  # it cites infra/redis.tf
    change(repo, "infra/redis.tf", 'resource "redis" { replicas = 2 }\n')
    asked: list[str] = []

    def counted(root: Path, path: str, commit: str) -> tuple[int, str]:
        asked.append(path)
        return 1, "2026-01-01"

    monkeypatch.setattr("mama_plugin.services.learning.verify.commits_since", counted)
    with Store.open(config=config) as store:
        found = checked.flagged(store, project, limit=1)
    assert [m.id for m, _ in found.told] == [saved[-1].memory.id]  # the newest decision
    assert found.more == 2 and asked == ["infra/redis.tf"]
    # An older checkpoint tells where work stood then: it is not listed.
    assert old.id not in [m.id for m, _ in found.told] and found.checked == 4


def test_verify_needs_an_id_or_list(mama_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify"]) != 0
    assert "give a memory id to verify, or --list" in capsys.readouterr().err
    assert main(["verify", "dec_x", "--list"]) != 0


# -- tool answers name how to correct or remove a memory ------------------------------------


def test_search_and_load_checkpoint_name_update_and_forget_once(store: Store, project: str) -> None:
    save_decision(store, project, {**DECISION, "evidence": []})
    save_decision(store, project, {**LOAD, "evidence": []})
    answer = search_by_context(store, "Redis Sentinel k6 load", project=project)
    assert answer.text.count("update_memory/forget_memory") == 1
    assert answer.text.endswith("</mama-memory>\n" + CORRECT)
    none = search_by_context(store, "zebra giraffe", project=project)
    assert "forget_memory" not in none.text  # nothing told, nothing to correct

    save_checkpoint(store, project, {"summary": "Sentinel wired"})
    resumed = do_load_checkpoint(Env(store, project), parse(LoadCheckpointInput, {})).text
    assert resumed.count("update_memory/forget_memory") == 1
    assert resumed.endswith(CORRECT)


# -- the slash commands show both lists ------------------------------------------------------


def test_configure_lists_what_gc_removes_and_what_is_flagged_and_may_run_them(
    mama_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mama_plugin.hooks.aliases import CONFIGURE_RUNS, alias_text

    root = Path(__file__).resolve().parents[1]
    body = (root / "commands/configure.md").read_text(encoding="utf-8")
    (allowed,) = [ln for ln in body.splitlines() if ln.startswith("allowed-tools:")]
    mama = 'sh "${CLAUDE_PLUGIN_ROOT}/bin/mama"'
    for run in CONFIGURE_RUNS:
        assert f"Bash({mama} {run}:*)" in allowed
        assert f"`{mama} {run}" in body  # and its body runs it
    assert "gc --dry-run" in CONFIGURE_RUNS and "verify --list" in CONFIGURE_RUNS
    assert "`mama verify ID`" in body and "`mama forget ID`" in body
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", "/plug")
    alias = alias_text("mama-configure")
    assert all(f'Bash(sh "/plug/bin/mama" {run}:*)' in alias for run in CONFIGURE_RUNS)
    gc = (root / "commands/gc.md").read_text(encoding="utf-8")
    assert f"Bash({mama} verify --list:*)" in gc and f"`{mama} verify --list`" in gc


def test_configure_names_every_embedding_model_a_user_can_choose() -> None:
    from mama_plugin.settings import Settings

    root = Path(__file__).resolve().parents[1]
    body = (root / "commands/configure.md").read_text(encoding="utf-8")
    assert "models (embedding_model," in body
    parse = Settings.__dataclass_fields__["embedding_model"].metadata["parse"]
    with pytest.raises(ValueError, match="must be one of") as refused:
        parse("no such model")
    choices = str(refused.value).removeprefix("must be one of ").split(", ")
    assert "minilm" in choices and "embeddinggemma" in choices
    for choice in choices:
        assert f"`{choice}`" in body, choice


def test_configure_says_of_each_model_what_its_card_says() -> None:
    """The command's paragraph on the models is the cards' (embeddings/cards.py): a new model is
    one card, and this test names the paragraph to paste."""
    from mama_plugin.embeddings.cards import CARDS, configure_text

    body = (Path(__file__).resolve().parents[1] / "commands/configure.md").read_text("utf-8")
    assert " ".join(configure_text().split()) in " ".join(body.split()), configure_text()
    assert all(f"`{card.choice}`" in configure_text() for card in CARDS)
