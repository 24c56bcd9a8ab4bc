"""Every MCP tool the server answers, declared once: today's (:mod:`.tools`) and the MAMA v1.0
names (:mod:`.v1_tools`), in the order they are listed; what memory learned
(:mod:`.learning_tools`) after today's."""

from __future__ import annotations

from .base import Tool
from .graph_tools import GRAPH_TOOLS
from .learning_tools import LEARNING_TOOLS
from .link_tools import LINK_TOOLS
from .tools import CURRENT
from .v1_tools import V1_TOOLS

TOOLS: tuple[Tool, ...] = (
    *CURRENT,
    *LEARNING_TOOLS,
    *V1_TOOLS,
    *GRAPH_TOOLS,
    *LINK_TOOLS,
)
BY_NAME = {tool.name: tool for tool in TOOLS}
