"""The tool catalogue a client is shown, readable with the standard library alone.

``bootstrap/tools.json`` holds every tool's ``tools/list`` definition and ``exposure.json``
the exposure sets (the core, what each conversational context needs), both generated from the
tools' declarations (:mod:`.declare`; ``python -m mama_plugin.server.listing``; a test fails
while either is stale), so a server can list tools before it has imported pydantic or the
handlers. The initialize instructions, written from the names a session lists, live here for
the same reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

TOOLS_JSON = Path(__file__).resolve().parents[1] / "bootstrap" / "tools.json"

EXPOSURE_JSON = Path(__file__).resolve().with_name("exposure.json")
# Generated beside tools.json from the tools' declarations (each tool's ``@tool`` in its
# module: ``core``, ``contexts``), so the front reads them before the handlers load. (A key
# it lacks reads as empty, so that an older file never stops its own regeneration.)
_EXPOSURE = json.loads(EXPOSURE_JSON.read_text(encoding="utf-8"))
# Always listed: what a turn in any project may need before the server knows anything about
# it — a decision, checkpoint or lesson to save, a question, a resume, an outcome to record
# (`/mama:outcome` names its tool: an unlisted one answers "No such tool available").
CORE: tuple[str, ...] = tuple(_EXPOSURE.get("core", ()))
# What each context needs. The store's state seeds a session with the contexts it makes
# possible (exposure.seed_contexts); a context detected later whose tools are not all
# listed grows the list, once, to every tool. Any memory can be corrected, forgotten or kept
# for every project ("editing"): a project that holds only insights still answers "forget
# that" or "keep this everywhere".
CONTEXT_TOOLS: dict[str, tuple[str, ...]] = {
    context: tuple(names) for context, names in _EXPOSURE.get("contexts", {}).items()
}
# The tool that lists the rest when the model asks (server/menu_tools.py): only a session
# whose list can grow is shown it.
MORE_TOOLS = "more_tools"
# The tool whose listed schema grows the project's frequent relationship words (word_params).
WORD_PARAMETER_TOOL: str = _EXPOSURE.get("word_parameters", "")
# The sentences of the initialize instructions, each said only when every tool it names is
# listed (the names are read from the sentence: :func:`_named`).
_ADVICE: tuple[str, ...] = (
    "Before deciding, ask search_by_context",
    "when you decide, save_decision with the WHY (supersedes=<id> when it replaces an "
    "earlier decision)",
    "when work pauses, save_checkpoint",
    "to pick work up again, load_checkpoint",
    "when a decision turns out well or badly, evolve_outcome",
    "a lesson worth keeping is a save_insight",
    "load_context tells one memory's story",
    "find_links finds links by relationship or what happened after a memory",
    "accept or reject the links MAMA proposes (suggest_links) with evolve_link",
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
    said = [text for text in _ADVICE if names.issuperset(_named(text))]
    advice = "; ".join(said)
    return (
        "MAMA is this project's memory of decisions."
        + (f" {advice[0].upper()}{advice[1:]}." if advice else "")
        + " Results say what is current. When a prompt touches a topic the session start lists "
        'under "Decisions on record", search before deciding it again.'
    )


def _named(text: str) -> set[str]:
    """The tools a sentence names: its words that are the names of tools."""
    return set(re.findall(r"\w+", text)) & set(load().definitions)


@dataclass(frozen=True)
class Catalogue:
    """Every tool's definition in the table's order, and which ones are not listed.

    The hidden hook tools are named here (``hooks``) and declared beside their handlers
    (:mod:`.hook_tools`); :mod:`.hook_table` reads them, as light as this.
    """

    definitions: dict[str, dict[str, Any]]  # name -> tools/list entry, every tool
    listed: tuple[str, ...]  # the static list: every tool a client may be shown
    legacy: tuple[str, ...]  # MAMA v1.0 names: served, listed only if configured
    hooks: tuple[str, ...] = ()  # the hidden tools Claude Code's hooks call

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
        hooks=tuple(data.get("hook_tools", [])),
    )


# For callers that cannot know the session's list yet: the core is always listed.
INSTRUCTIONS = instructions(CORE)
