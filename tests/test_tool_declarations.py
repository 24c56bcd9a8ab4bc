"""Each tool declared once, beside its handler (server/declare.py), and what derives from it.

The catalogue's exposure sets, the hook table's names, the v1.0 aliases, the generated files
(bootstrap/tools.json, server/exposure.json) and README.md's "MCP tools" table are all read
from the declarations; these tests fail when one of them drifts.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from mama_plugin.server import catalogue, hook_tools, listing
from mama_plugin.server.declare import CONTEXTS, declared_hooks
from mama_plugin.server.hook_table import HOOKS
from mama_plugin.server.tool_table import BY_NAME, TOOLS
from mama_plugin.server.word_params import LINK_TOOL

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "mama_plugin" / "server"

# The exposure sets, frozen: a change to them is a change to every session's first list
# (since 12-02 the tools a first request rarely needs are listed on request: more_tools).
FROZEN_CORE = (
    "save_decision",
    "save_checkpoint",
    "save_insight",
    "load_checkpoint",
    "search_by_context",
    "evolve_outcome",
    "more_tools",
)
FROZEN_CONTEXTS = {
    "resuming": {"load_context", "search_recent"},
    "searching": {"search_by_topic", "load_context", "search_recent"},
    "deciding": {"search_by_topic", "load_context"},
    "tracking": {"evolve_outcome", "search_by_topic"},
    "linking": {"suggest_links", "evolve_link"},
    "editing": {"update_memory", "forget_memory", "promote_memory"},
}
FROZEN_ALIASES = {
    "recall_decision": "search_by_topic",
    "suggest_decision": "search_by_context",
    "list_decisions": "search_recent",
    "update_outcome": "evolve_outcome",
}


def test_the_exposure_sets_are_the_declarations_and_unchanged() -> None:
    assert catalogue.CORE == FROZEN_CORE == tuple(t.name for t in TOOLS if t.core)
    assert list(catalogue.CONTEXT_TOOLS) == list(CONTEXTS)
    assert {c: set(names) for c, names in catalogue.CONTEXT_TOOLS.items()} == FROZEN_CONTEXTS
    for context, names in catalogue.CONTEXT_TOOLS.items():
        assert names == tuple(t.name for t in TOOLS if context in t.contexts)


def test_the_link_tool_is_the_one_declared_with_word_parameters() -> None:
    assert LINK_TOOL == "link_memories" == catalogue.WORD_PARAMETER_TOOL
    assert [t.name for t in TOOLS if t.word_parameters] == [LINK_TOOL]


def test_exposure_json_is_fresh() -> None:
    assert catalogue.EXPOSURE_JSON.read_text(encoding="utf-8") == listing.render_exposure(), (
        "mama_plugin/server/exposure.json is stale: regenerate it with "
        "`.venv/bin/python -m mama_plugin.server.listing`"
    )


def test_the_aliases_are_declared_with_what_replaced_them() -> None:
    aliases = {t.name: t.replaced_by for t in TOOLS if t.replaced_by}
    assert aliases == FROZEN_ALIASES
    for name, replacement in aliases.items():
        alias, then = BY_NAME[name], BY_NAME[replacement]
        assert alias.hidden and not then.hidden and not then.replaced_by
        assert alias.description == f"MAMA v1.0: use {replacement}."
        assert (alias.read_only, alias.destructive) == (then.read_only, then.destructive)
    assert list(catalogue.load().legacy) == list(aliases)


def test_every_listed_tool_is_reachable_and_hidden_ones_are_in_no_context() -> None:
    on_request = catalogue.load().definition(catalogue.MORE_TOOLS)["description"]
    for t in TOOLS:
        if t.hidden:
            assert not (t.core or t.contexts), t.name
        else:  # core, listed for a context, or named by the tool that lists the rest
            assert t.core or t.contexts or re.search(rf"\b{t.name}\b", on_request), t.name
    assert [t.name for t in TOOLS if not t.hidden] == list(catalogue.load().listed)


def test_the_hook_tools_are_their_declarations() -> None:
    hooks = declared_hooks(hook_tools)
    assert [h.name for h in hooks] == list(HOOKS) == list(catalogue.load().hooks)
    for h in hooks:
        assert HOOKS[h.name].handler() is h.handler
        assert HOOKS[h.name].event == h.event


def _quoted_names(path: Path) -> set[str]:
    names = set(BY_NAME) | {h.name for h in declared_hooks(hook_tools)}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in names
    }


def test_a_tool_name_is_written_once_in_the_server() -> None:
    """As a string of its own, a tool's name is in its declaration alone (prose aside)."""
    where: dict[str, list[str]] = {}
    for path in sorted(SERVER.glob("*.py")):
        for name in _quoted_names(path):
            where.setdefault(name, []).append(path.name)
    allowed = {"v1_tools.py"}  # a v1.0 alias names what replaced it
    twice = {n: files for n, files in where.items() if len(set(files) - allowed) > 1}
    assert not twice, twice


def test_the_readme_table_is_rendered_from_the_declarations() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert listing.readme_table() in readme, (
        "README.md's MCP tools table differs from the declarations: paste "
        "`.venv/bin/python -m mama_plugin.server.listing --readme` over it"
    )
    section = readme.split("\n## MCP tools\n", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("|")]
    assert "\n".join(table) + "\n" == listing.readme_table()


def test_tools_json_keeps_its_shape() -> None:
    data = json.loads(catalogue.TOOLS_JSON.read_text(encoding="utf-8"))
    assert list(data) == ["tools", "hook_tools", "legacy_tools"]
