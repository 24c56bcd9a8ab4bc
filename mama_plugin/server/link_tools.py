"""The link tool: link two saved memories with a relationship, WHY, and tags.

Its listed schema grows, per project, a parameter for each relationship word the project's
links use most (:mod:`.word_params`): ``link_memories(from_id=A, inspired_by=B, reason=…)``.
"""

from __future__ import annotations

from ..schema.links import LinkMemoriesInput
from ..services.link_queries import tags_said
from ..services.linking import link_memories
from .base import Answer, Env, Tool
from .graph_tools import relationship_hints


def do_link_memories(env: Env, args: LinkMemoriesInput) -> Answer:
    linked = link_memories(env.store, env.project, args)
    hints = relationship_hints(env, (ln.relationship for ln in linked.links))
    lines = [
        f"Linked {ln.from_id} --{ln.relationship}--> {ln.to_id} (link #{ln.id}, confidence "
        f"{ln.confidence:.2f})" + tags_said(linked.tags.get(ln.id, ()))
        for ln in linked.links
    ]
    data = linked.as_dict() | ({"relationship_hints": hints} if hints else {})
    return Answer("\n".join([*lines, *(h["text"] for h in hints)]), data)


LINK_TOOLS: tuple[Tool, ...] = (
    Tool(
        "link_memories",
        "Link two saved memories: from_id --relationship--> to_id with WHY (reason) and "
        "optional tags. A relationship word this project uses often is a parameter of its "
        "own (e.g. inspired_by=<id>).",
        LinkMemoriesInput,
        do_link_memories,
        read_only=False,
    ),
)
