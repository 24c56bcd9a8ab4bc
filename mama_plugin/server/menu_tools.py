"""``more_tools``: the tools a session's first list leaves out, listed when the model asks.

A session starts with the core and the resume and search tools (:mod:`.exposure`); this one
line names the rest, so every capability stays reachable from the first request. Its call
lists every tool, and the transport answers it after the client has listed them again, so
the model's next request can call them.
"""

from __future__ import annotations

from ..schema import MoreToolsInput
from .base import Answer, Env
from .catalogue import MORE_TOOLS
from .declare import CORE_READS, tool


@tool(
    MORE_TOOLS,
    "Lists MAMA's other tools for your next step: update_memory, forget_memory, "
    "promote_memory (every project), evolve_supersede, confidence_history, project_context, "
    "evolve_pass, suggest_links, evolve_link, find_links, link_memories, rate_link, "
    "graph_health.",
    CORE_READS,
)
def do_more_tools(env: Env, args: MoreToolsInput) -> Answer:
    """Grow the session's list to every tool; say which are new."""
    added = env.list_every_tool()
    if not added:
        return Answer("Every MAMA tool is listed already: call the one you need.", {"added": []})
    return Answer(f"Listed now, call them directly: {', '.join(added)}.", {"added": added})
