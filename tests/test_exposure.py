"""Which tools a session lists: seeded from the project's memory, grown at most once.

A turn's first request is built before its prompt's hooks run, so what a turn needs must be
listed before it starts; the rest is one ``more_tools`` call away (server/exposure.py,
server/state.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import JWT, tell_story

from mama_plugin.config import Config
from mama_plugin.hooks.aliases import ALIASES
from mama_plugin.server.catalogue import (
    CONTEXT_TOOLS,
    CORE,
    INSTRUCTIONS,
    MORE_TOOLS,
    instructions,
    load,
)
from mama_plugin.server.exposure import AFTER_A_SAVE, PROPOSAL, Exposure, needs, seed_contexts
from mama_plugin.server.state import State
from mama_plugin.services.saving.memories import save_checkpoint, save_decision
from mama_plugin.storage import Store

ROOT = Path(__file__).resolve().parents[1]
EVERY = list(load().listed)
STATIC = [n for n in EVERY if n != MORE_TOOLS]  # a list that cannot grow has nothing to ask for
MEMORIES = ["resuming", "searching", "deciding", "linking", "editing"]
SEEDED = {"load_context", "search_by_topic", "search_recent"}  # a project with memories
CLAUDE = "claude-code"


def seeded(contexts: list[str]) -> list[str]:
    exposure = Exposure()
    exposure.start(contexts)
    return exposure.listed(CLAUDE)


def test_the_seed_follows_the_projects_memory(store: Store, project: str) -> None:
    assert seed_contexts(store, project) == []
    save_checkpoint(store, project, {"summary": "CI and Docker compose in place"})
    assert seed_contexts(store, project) == MEMORIES
    save_decision(store, project, JWT)
    assert seed_contexts(store, project) == [*MEMORIES, "tracking"]
    assert seed_contexts(store, "another/project") == []  # rows are scoped by project


def test_a_project_of_insights_alone_can_correct_forget_and_promote(
    store: Store, project: str
) -> None:
    from mama_plugin.services.saving.memories import save_insight

    save_insight(store, project, {"content": "The staging DB resets nightly", "topic": "staging"})
    assert "editing" in seed_contexts(store, project)  # possible: a prompt asking for it grows
    listed = seeded(seed_contexts(store, project))
    assert {"update_memory", "forget_memory", "promote_memory"}.isdisjoint(listed)
    assert MORE_TOOLS in listed  # ... and the turn that asks reaches them through it
    exposure = Exposure()
    exposure.start(seed_contexts(store, project))
    assert "forget_memory" in exposure.grow(["editing"])


def test_the_sessions_own_rolling_checkpoint_is_not_earlier_work(
    store: Store, project: str
) -> None:
    from mama_plugin.services.story.autosave import checkpoint_turn
    from mama_plugin.transcript import Digest

    saved = checkpoint_turn(store, project, session_id="s1", digest=Digest(),
                            last_message="Renamed the helper.", cwd="", request="rename it")  # fmt: skip
    assert saved is not None and saved.metadata.get("auto")
    assert seed_contexts(store, project, session_id="s1") == []  # this session's own
    assert seed_contexts(store, project, session_id="s2") == MEMORIES  # a later session's past


def test_the_initial_list_for_each_state_of_the_memory() -> None:
    core = [n for n in EVERY if n in CORE]
    assert seeded([]) == core
    assert set(seeded(MEMORIES)) - set(core) == SEEDED
    assert set(seeded([*MEMORIES, "tracking"])) - set(core) == SEEDED  # decisions: the same
    # Proposed links wait for a verdict (the session start shows them): their tools too.
    waiting = set(seeded([*MEMORIES, PROPOSAL])) - set(core)
    assert waiting == SEEDED | set(CONTEXT_TOOLS["linking"])


def test_the_first_list_of_a_project_with_memories_fits_its_budget() -> None:
    # What Claude Code sends the model for each tool: its prefixed name, description, schema.
    catalogue = load()
    sent = [{"name": f"mcp__plugin_mama_mama__{n}", "description": catalogue.definition(n)["description"],
             "input_schema": catalogue.definition(n)["inputSchema"]} for n in seeded(MEMORIES)]  # fmt: skip
    assert len(json.dumps(sent)) / 4 <= 4000


def test_more_tools_names_every_tool_the_first_list_leaves_out() -> None:
    described = load().definition(MORE_TOOLS)["description"]
    assert _named(described) == set(EVERY) - set(seeded([*MEMORIES, "tracking"]))


def test_seeding_before_the_first_list_is_no_change() -> None:
    exposure = Exposure()
    assert exposure.start(MEMORIES) and exposure.changes == 0 and not exposure.pending
    assert exposure.start(["tracking"]) == []  # once


def test_seeding_after_the_client_saw_a_list_is_a_change() -> None:
    exposure = Exposure()
    exposure.listed(CLAUDE)
    assert exposure.start(MEMORIES)
    assert exposure.changes == 1 and exposure.pending


def test_growth_happens_once_and_to_every_tool() -> None:
    exposure = Exposure()
    exposure.start(MEMORIES)
    assert exposure.grow(["resuming", "searching"]) == []  # already listed: no change
    assert exposure.grow(None) == [] and exposure.changes == 0
    assert exposure.grow("tracking") == []  # its tools are seeded: a report needs nothing new
    added = exposure.grow("editing")
    assert set(added) == set(EVERY) - set(CORE) - SEEDED
    assert exposure.listed(CLAUDE) == EVERY and exposure.changes == 1 and exposure.pending
    exposure.pending = False
    for context in CONTEXT_TOOLS:
        assert exposure.grow(context) == []
    assert exposure.changes == 1 and not exposure.pending


def test_a_static_list_never_counts_a_change() -> None:
    exposure = Exposure(mode="force_static")
    assert exposure.listed(CLAUDE) == STATIC
    exposure.grow("editing")
    exposure.grow_all("more_tools")
    assert exposure.changes == 0 and not exposure.pending


def test_every_context_needs_known_tools_and_more_tools_reaches_the_rest() -> None:
    assert needs(CONTEXT_TOOLS) <= set(EVERY) and set(CORE) <= set(EVERY)
    exposure = Exposure()
    exposure.start(MEMORIES)
    assert exposure.grow_all("more_tools") and exposure.listed(CLAUDE) == EVERY
    assert exposure.grow_all("more_tools") == [] and exposure.changes == 1  # once


def _named(text: str) -> set[str]:
    return {n for n in EVERY if re.search(rf"\b{n}\b", text)}


@pytest.mark.parametrize("contexts", [[], MEMORIES, [*MEMORIES, "tracking"], ["linking"]])
def test_the_instructions_name_only_listed_tools(contexts: list[str]) -> None:
    listed = seeded(contexts)
    said = instructions(listed)
    assert _named(said) <= set(listed), said
    assert {"save_decision", "search_by_context", "evolve_outcome"} <= _named(said)


def test_the_fixed_instructions_name_only_the_core() -> None:
    assert _named(INSTRUCTIONS) <= set(CORE)
    assert _named(instructions([])) == set()


def _command(name: str) -> tuple[set[str], str]:
    """A plugin command's allowed MCP tools and its body."""
    text = (ROOT / "commands" / f"{name}.md").read_text(encoding="utf-8")
    front, body = text.split("---", 2)[1:]
    allowed = re.search(r"allowed-tools:(.*)", front)
    tools = set(re.findall(r"mcp__plugin_mama_mama__(\w+)", allowed.group(1) if allowed else ""))
    return tools, body


@pytest.mark.parametrize("name", ["resume", "save", "search", "outcome"])
def test_a_command_names_only_tools_listed_before_its_turn(name: str) -> None:
    allowed, body = _command(name)
    named = _named(body)
    assert named <= allowed, f"/mama:{name} names tools it does not allow: {named - allowed}"
    # A project with memories lists every tool the command names before its turn, or (the
    # link tools /mama:save offers after saving) right after the save that needs them.
    after_a_save = set(seeded(MEMORIES)) | needs(AFTER_A_SAVE)
    assert named <= after_a_save, named - after_a_save
    # A new project: what the command runs first is in the core. (/mama:resume stops when
    # there is no checkpoint; /mama:save calls the link tools only when memories existed.)
    first = named - {"load_context", "suggest_links", "evolve_link"}
    assert first <= set(CORE), first - set(CORE)


def test_an_alias_allows_what_its_command_allows() -> None:
    for alias, (command, _, _, tools) in ALIASES.items():
        assert set(tools) == _command(command)[0], alias


def test_the_server_state_seeds_before_its_first_list(tmp_path: Path, mama_home: Path) -> None:
    db = tmp_path / "known.db"
    with Store.open(db, config=Config(mama_home)) as store:
        tell_story(store, "p")
    state = State(Config(mama_home), "p", db)
    try:
        assert set(state.exposure_ready().listed(CLAUDE)) == set(CORE) | SEEDED
        assert state.exposure.changes == 0
        # The prompt of a turn that reports an outcome needs nothing new: no change.
        assert state.observe("The load test failed. Record it and move us to Redis")[1] == []
        assert state.exposure.changes == 0
    finally:
        state.close()


def test_a_new_project_grows_once_after_its_first_decision(tmp_path: Path, mama_home: Path) -> None:
    state = State(Config(mama_home), "p", tmp_path / "new.db")
    try:
        assert state.exposure_ready().listed(CLAUDE) == [n for n in EVERY if n in CORE]
        # Tracking in a project without decisions: nothing to track, nothing changes.
        assert state.observe("the load test failed, move us to Redis sessions")[1] == []
        assert state.wrote() == [] and state.exposure.changes == 0  # nothing was written yet
        save_decision(state.store, "p", JWT)
        assert {"load_context", "suggest_links"} <= set(state.wrote())  # linking follows a save
        assert state.exposure.listed(CLAUDE) == EVERY and state.exposure.changes == 1
    finally:
        state.close()


def test_a_store_that_cannot_open_lists_every_tool(tmp_path: Path, mama_home: Path) -> None:
    folder = tmp_path / "a-folder.db"
    folder.mkdir()  # not a database: Store.open fails
    state = State(Config(mama_home), "p", folder)
    try:
        assert state.exposure_ready().listed(CLAUDE) == EVERY  # every context, as if grown
        assert state.exposure.changes == 0
    finally:
        state.close()


def test_seeding_needs_no_pydantic(tmp_path: Path, mama_home: Path) -> None:
    # A light front seeds its first tools/list before pydantic and the handlers load.
    code = (
        "import sys; from mama_plugin.config import Config; "
        "from mama_plugin.storage import Store; "
        "from mama_plugin.server.exposure import Exposure, seed_contexts; "
        "from mama_plugin.server.catalogue import instructions; "
        f"store = Store.open({str(tmp_path / 'x.db')!r}, config=Config()); "
        "e = Exposure(); e.start(seed_contexts(store, 'p')); "
        "said = instructions(e.listed('claude-code')); "
        "heavy = sorted(m for m in ('pydantic', 'mcp', 'jinja2', 'numpy', "
        "'mama_plugin.server.tools', 'mama_plugin.services') if m in sys.modules); "
        "print(json.dumps([e.listed('claude-code'), heavy]))"
    ).replace("import sys;", "import sys, json;")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MAMA_HOME": str(mama_home)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=env)  # fmt: skip
    listed, heavy = json.loads(out.stdout)
    assert heavy == [] and listed == [n for n in EVERY if n in CORE]


def test_the_server_state_lists_tools_before_pydantic(tmp_path: Path, mama_home: Path) -> None:
    # What a light front calls before answering initialize and tools/list.
    code = (
        "import sys, json; from mama_plugin.config import Config; "
        "from mama_plugin.server.state import State; "
        "from mama_plugin.server.catalogue import instructions; "
        f"s = State(Config(), 'p', {str(tmp_path / 'x.db')!r}); "
        "names = s.exposure_ready().listed('claude-code'); said = instructions(names); "
        "heavy = sorted(m for m in ('pydantic', 'mcp', 'jinja2', 'numpy', 'anyio') "
        "if m in sys.modules); print(json.dumps([names, heavy]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MAMA_HOME": str(mama_home)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=env)  # fmt: skip
    names, heavy = json.loads(out.stdout)
    assert heavy == [] and names == [n for n in EVERY if n in CORE]
