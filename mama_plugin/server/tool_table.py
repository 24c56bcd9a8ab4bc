"""Every MCP tool the server answers, gathered from the declarations beside the handlers
(:mod:`.declare`), in the order they are listed: saving, loading and searching
(:mod:`.tools`), the model's link tools (:mod:`.assist_tools`), editing (:mod:`.edit_tools`),
what memory learned (:mod:`.learning_tools`), the MAMA v1.0 names (:mod:`.v1_tools`), the
graph (:mod:`.graph_tools`), linking (:mod:`.link_tools`) and, last, the one that lists
the rest (:mod:`.menu_tools`)."""

from __future__ import annotations

from . import (
    assist_tools,
    edit_tools,
    graph_tools,
    learning_tools,
    link_tools,
    menu_tools,
    tools,
    v1_tools,
)
from .base import Tool
from .declare import declared

FAMILIES = (
    tools,
    assist_tools,
    edit_tools,
    learning_tools,
    v1_tools,
    graph_tools,
    link_tools,
    menu_tools,
)
TOOLS: tuple[Tool, ...] = tuple(t for family in FAMILIES for t in declared(family))
BY_NAME = {tool.name: tool for tool in TOOLS}
