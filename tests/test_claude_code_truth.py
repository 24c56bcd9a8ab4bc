"""Real Claude Code, fake model: memory that stays true, where the model reads it.

A project in a real git repository holds a decision citing ``infra/redis.tf``. The file is
changed and committed; in one Claude Code session (one process, two user turns) the session
start and a paraphrased prompt's context both carry the verify line, asserted on the request
bodies Claude Code sent. In another session the model calls ``forget_memory`` as the user asks:
the tool's answer says what went, and the store no longer holds the memory; a project that
holds only an insight lists ``forget_memory`` from its first request. A second
decision on a standing decision's topic is answered with the question, and the model's
``evolve_link`` accept supersedes the old one.
"""

from __future__ import annotations

from pathlib import Path

from fake_anthropic import text, tool_use
from test_claude_code import JWT, SAVE, SERVER, needs_claude, result_of, run_claude, tool_names
from test_claude_code_recall import OTHERS, _prompt_context, _session
from test_verify import DECISION, change, git

from mama_plugin.config import Config
from mama_plugin.project import project_key
from mama_plugin.services.saving.memories import save_decision, save_insight
from mama_plugin.storage import Store

pytestmark = needs_claude
FORGET, EVOLVE = f"{SERVER}__forget_memory", f"{SERVER}__evolve_link"
MORE = f"{SERVER}__more_tools"  # lists the tools a first list leaves out, forget_memory among them


def _repo(root: Path) -> Path:
    """``root`` as a git repository with infra/redis.tf committed."""
    (root / "infra").mkdir(parents=True)
    git(root, "init", "-q")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "Dev")
    git(root, "config", "commit.gpgsign", "false")
    (root / "infra/redis.tf").write_text('resource "redis" { replicas = 1 }\n')
    git(root, "add", ".")
    git(root, "commit", "-qm", "first")
    return root


def _seed(project: Path, home: Path) -> str:
    """The Redis Sentinel decision citing infra/redis.tf, among unrelated ones."""
    with Store.open(config=Config(home)) as store:
        key = project_key(project)
        for topic, decision, why in OTHERS:
            save_decision(store, key, {"topic": topic, "decision": decision, "reasoning": why})
        return save_decision(store, key, DECISION).memory.id


def _sent(request: dict[str, object]) -> str:
    return str(request.get("system", "")) + str(request.get("messages", ""))


def test_a_changed_cited_file_is_told_at_session_start_and_with_the_prompt(
    tmp_path: Path, mama_home: Path
) -> None:
    project = _repo(tmp_path / "project")
    saved = _seed(project, mama_home)
    change(project, "infra/redis.tf", 'resource "redis" { replicas = 3 }\n')
    fake = _session(
        project,
        mama_home,
        [
            "Hi, let's pick up the infra work.",
            "Should sessions keep Redis Sentinel with one replica?",
        ],
    )
    flag = f"verify: infra/redis.tf changed since this was decided — `mama verify {saved}`"
    first = _sent(fake.main_requests[0])
    assert "Redis Sentinel" in first and flag in first, first[-3000:]
    asked = _prompt_context(fake.main_requests[-1])
    assert saved in asked and "infra/redis.tf changed since this was decided" in asked, asked


def test_the_model_forgets_a_memory_when_the_user_asks(tmp_path: Path, mama_home: Path) -> None:
    project = _repo(tmp_path / "project")
    saved = _seed(project, mama_home)
    fake = run_claude(
        [tool_use(MORE, {}), tool_use(FORGET, {"memory_id": saved}), text("Forgotten.")],
        f"Forget the Redis Sentinel decision ({saved}) for good.",
        tmp_path,
        "forget",
    )
    answer = result_of(fake.main_requests[2], FORGET)
    assert not answer["is_error"], answer["text"]
    assert saved in answer["text"] and "orgot" in answer["text"], answer["text"]
    with Store.open(config=Config(mama_home)) as store:
        assert store.memories.get(saved) is None
        left = [
            m.topic
            for m in store.memories.recent(project=project_key(project), type="decision", limit=50)
        ]
    assert "sessions" not in left and len(left) == len(OTHERS)


def test_a_project_of_insights_alone_reaches_forget_memory_in_the_turn_that_asks(
    tmp_path: Path, mama_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with Store.open(config=Config(mama_home)) as store:
        lesson = {"content": "The staging database resets every night at 02:00", "topic": "staging"}
        saved = save_insight(store, project_key(project), lesson).memory.id
    fake = run_claude(
        [tool_use(MORE, {}), tool_use(FORGET, {"memory_id": saved}), text("Forgotten.")],
        f"That staging note ({saved}) is wrong, forget it.",
        tmp_path,
        "forget an insight",
    )
    first, second = (tool_names(r) for r in fake.main_requests[:2])
    assert MORE in first and FORGET not in first  # the first list: the core, resume, search
    assert FORGET in second  # more_tools was answered once Claude Code had listed again
    answer = result_of(fake.main_requests[2], FORGET)
    assert not answer["is_error"] and saved in answer["text"], answer["text"]
    with Store.open(config=Config(mama_home)) as store:
        assert store.memories.get(saved) is None


def test_a_contradicting_save_is_asked_about_and_the_answer_supersedes(
    tmp_path: Path, mama_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with Store.open(config=Config(mama_home)) as store:
        jwt = save_decision(store, project_key(project), JWT).memory.id
    sessions = {
        "topic": "auth_strategy",
        "decision": "Server-side sessions in Redis for API auth",
        "reasoning": "refresh without a DB round trip: p99 41 ms at 10K req/s",
    }
    fake = run_claude(
        [
            tool_use(SAVE, sessions),
            tool_use(EVOLVE, {"suggestion_id": 1, "verdict": "accept"}),
            text("Recorded: sessions replace JWT."),
        ],
        "Record that we moved API auth to Redis sessions.",
        tmp_path,
        "contradiction",
    )
    saved = result_of(fake.main_requests[1], SAVE)["text"]
    assert f"'auth_strategy' already has current decision {jwt}" in saved, saved
    assert "evolve_link suggestion_id=1" in saved and "verdict=reject" in saved, saved
    # The tool the question names is offered in the very request that reads the question.
    assert EVOLVE in tool_names(fake.main_requests[1])
    accepted = result_of(fake.main_requests[2], EVOLVE)
    assert not accepted["is_error"], accepted["text"]
    with Store.open(config=Config(mama_home)) as store:
        assert store.memories.require(jwt).status == "superseded"
