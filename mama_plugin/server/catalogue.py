"""The tool catalogue a client is shown, readable with the standard library alone.

``bootstrap/tools.json`` holds every tool's ``tools/list`` definition, generated from the
tool table (``python -m mama_plugin.server.listing``; a test fails while it is stale), so a
server can list tools before it has imported pydantic or the handlers. The exposure sets
(the core, what each conversational context needs) and the initialize instructions, written
from the names a session lists, live here for the same reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

TOOLS_JSON = Path(__file__).resolve().parents[1] / "bootstrap" / "tools.json"

# Always listed: what a turn in any project may need before the server knows anything about
# it — a decision, checkpoint or lesson to save, a question, a resume, an outcome to record
# (`/mama:outcome` names its tool: an unlisted one answers "No such tool available").
CORE = (
    "save_decision",
    "save_checkpoint",
    "save_insight",
    "load_checkpoint",
    "search_by_context",
    "evolve_outcome",
)
# What each context needs. The store's state seeds a session with the contexts it makes
# possible (exposure.seed_contexts); a context detected later whose tools are not all
# listed grows the list, once, to every tool.
CONTEXT_TOOLS: dict[str, tuple[str, ...]] = {
    "resuming": ("load_context", "search_recent"),
    "searching": ("search_by_topic", "load_context", "search_recent"),
    "deciding": ("search_by_topic", "load_context"),
    "tracking": (
        "evolve_outcome",
        "evolve_supersede",
        "search_by_topic",
        "update_memory",
        "forget_memory",
        "promote_memory",
        "confidence_history",
        "project_context",
        "evolve_pass",
    ),
    "linking": (
        "suggest_links",
        "evolve_link",
        "find_links",
        "graph_health",
        "link_memories",
        "rate_link",
    ),
    # Any memory can be corrected, forgotten or kept for every project: a project that holds
    # only insights still answers "forget that" or "keep this everywhere".
    "editing": ("update_memory", "forget_memory", "promote_memory"),
}
# The sentences of the initialize instructions, each said only when its tools are listed.
_ADVICE: tuple[tuple[tuple[str, ...], str], ...] = (
    (("search_by_context",), "Before deciding, ask search_by_context"),
    (
        ("save_decision",),
        "when you decide, save_decision with the WHY (supersedes=<id> when it replaces an "
        "earlier decision)",
    ),
    (("save_checkpoint",), "when work pauses, save_checkpoint"),
    (("load_checkpoint",), "to pick work up again, load_checkpoint"),
    (("evolve_outcome",), "when a decision turns out well or badly, evolve_outcome"),
    (("save_insight",), "a lesson worth keeping is a save_insight"),
    (("load_context",), "load_context tells one memory's story"),
    (("find_links",), "find_links finds links by relationship or what happened after a memory"),
    (
        ("suggest_links", "evolve_link"),
        "accept or reject the links MAMA proposes (suggest_links) with evolve_link",
    ),
)


# A project switched off (`mama config disable`): the tools save nothing, the hooks say nothing.
OFF = (
    "MAMA (the memory plugin) is switched off for this project: it recalls nothing here, saves "
    "nothing, and its tools refuse to save. Do not try to save decisions or checkpoints. The "
    "user can switch it back on with /mama-configure, or `mama config enable` in the "
    "project's directory."
)


def instructions(listed: Iterable[str], *, enabled: bool = True) -> str:
    """What the server tells a client at initialize, naming only tools in ``listed``.

    In a project switched off, it says so and how to switch MAMA back on, and nothing else.
    """
    if not enabled:
        return OFF
    names = set(listed)
    said = [text for tools, text in _ADVICE if names.issuperset(tools)]
    advice = "; ".join(said)
    return (
        "MAMA is this project's memory of decisions."
        + (f" {advice[0].upper()}{advice[1:]}." if advice else "")
        + " Results say what is current. When a prompt touches a topic the session start lists "
        'under "Decisions on record", search before deciding it again.'
    )


# For callers that cannot know the session's list yet: the core is always listed.
INSTRUCTIONS = instructions(CORE)


@dataclass(frozen=True)
class Catalogue:
    """Every tool's definition in the table's order, and which ones are not listed.

    The hidden hook tools are not here: :mod:`.hook_table` declares them, as light as this.
    """

    definitions: dict[str, dict[str, Any]]  # name -> tools/list entry, every tool
    listed: tuple[str, ...]  # the static list: every tool a client may be shown
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
        legacy=tuple(t["name"] for t in data.get("legacy_tools", [])),
    )
