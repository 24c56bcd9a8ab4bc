"""Real Claude Code, fake model: memory above the project, where the model reads it.

A preference promoted to the global scope in one project is named by the session start of
another project (asserted on the first request body Claude Code sends), and the model's
``promote_memory`` call makes a project insight global.
"""

from __future__ import annotations

from pathlib import Path

from fake_anthropic import text, tool_use
from test_claude_code import SERVER, needs_claude, result_of, run_claude

from mama_plugin.config import Config
from mama_plugin.project import GLOBAL, project_key
from mama_plugin.services.saving.memories import save_decision, save_insight
from mama_plugin.services.saving.scopes import promote
from mama_plugin.storage import Store

pytestmark = needs_claude
PROMOTE, MORE = f"{SERVER}__promote_memory", f"{SERVER}__more_tools"
PREFERENCE = "I prefer explicit, hand-written database migrations over auto-generated ones"


def test_a_new_project_s_session_start_names_the_global_memory_and_the_model_promotes_one(
    tmp_path: Path, mama_home: Path
) -> None:
    elsewhere, project = tmp_path / "shop", tmp_path / "project"
    elsewhere.mkdir()
    project.mkdir()
    with Store.open(config=Config(mama_home)) as store:
        pref = save_insight(store, project_key(elsewhere), {"content": PREFERENCE}).memory.id
        promote(store, pref)
        habit = save_insight(
            store, project_key(project), {"content": "Always load-test auth changes at 10K req/s"}
        ).memory.id
        # promote_memory is one more_tools call away in any project with memories.
        save_decision(store, project_key(project), {"topic": "auth", "decision": "Redis sessions",
                                                    "reasoning": "p99 4 ms at 10K req/s"})  # fmt: skip
    fake = run_claude(
        [
            tool_use(MORE, {}),
            tool_use(PROMOTE, {"memory_id": habit}),
            text("It holds everywhere now."),
        ],
        "Keep the load-testing habit for all my projects.",
        tmp_path,
        "global",
    )
    first = str(fake.main_requests[0].get("system", "")) + str(fake.main_requests[0]["messages"])
    assert "Yours in every project (global):" in first and f"{PREFERENCE} ({pref})" in first
    answer = result_of(fake.main_requests[2], PROMOTE)
    assert not answer["is_error"] and "is global now" in answer["text"], answer["text"]
    with Store.open(config=Config(mama_home)) as store:
        assert store.memories.require(habit).project == GLOBAL
