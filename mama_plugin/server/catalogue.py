"""The tool catalogue a client is shown, readable with the standard library alone.

``bootstrap/tools.json`` holds every tool's ``tools/list`` definition, generated from the
tool table (``python -m mama_plugin.server.listing``; a test fails while it is stale), so a
server can list tools before it has imported pydantic or the handlers. The exposure sets
(the core, and what each conversational context adds) live here for the same reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

TOOLS_JSON = Path(__file__).resolve().parents[1] / "bootstrap" / "tools.json"

# What the server tells a client at initialize.
INSTRUCTIONS = (
    "MAMA is this project's memory of decisions. Before deciding, ask search_by_context; when "
    "you decide, save_decision with the WHY; when work pauses, save_checkpoint; when a "
    "decision turns out well or badly, evolve_outcome. Results say what is current."
)
# Always listed; each context adds its tools (expand-only within a session).
CORE = ("save_decision", "search_by_context", "load_checkpoint")
CONTEXT_TOOLS: dict[str, tuple[str, ...]] = {
    "resuming": ("load_context", "search_recent", "save_checkpoint"),
    "deciding": (
        "search_by_topic",
        "evolve_supersede",
        "save_insight",
        "suggest_links",
        "evolve_link",
    ),
    "searching": ("search_by_topic", "load_context", "search_recent"),
    "tracking": (
        "evolve_outcome",
        "save_checkpoint",
        "search_recent",
        "suggest_links",
        "evolve_link",
    ),
}


@dataclass(frozen=True)
class Catalogue:
    """Every tool's definition in the table's order, and which ones are not listed."""

    definitions: dict[str, dict[str, Any]]  # name -> tools/list entry, every tool
    listed: tuple[str, ...]  # the static list: every tool a client may be shown
    hook_tools: frozenset[str]  # hidden, called by the plugin's hooks
    legacy: tuple[str, ...]  # MAMA v1.0 names: served, listed only if configured

    def definition(self, name: str) -> dict[str, Any]:
        return self.definitions[name]


@cache
def load() -> Catalogue:
    """The shipped catalogue (read once per process)."""
    data = json.loads(TOOLS_JSON.read_text(encoding="utf-8"))
    tools = data["tools"] + data.get("legacy_tools", [])
    return Catalogue(
        definitions={t["name"]: t for t in tools},
        listed=tuple(t["name"] for t in data["tools"]),
        hook_tools=frozenset(data["hook_tools"]),
        legacy=tuple(t["name"] for t in data.get("legacy_tools", [])),
    )
