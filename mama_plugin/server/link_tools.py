"""The link tools: link two saved memories (relationship, WHY, tags), and judge a link.

``link_memories``' listed schema grows, per project, a parameter for each relationship word
the project's links use most (:mod:`.word_params`):
``link_memories(from_id=A, inspired_by=B, reason=…)``. ``rate_link`` is the user's verdict on a
link: down-voted or deleted.
"""

from __future__ import annotations

from ..schema.link_verdicts import RateLinkInput
from ..schema.links import LinkMemoriesInput
from ..services.graph.linking import link_memories
from ..services.graph.upkeep import judge_link, tags_said
from .base import Answer, Env
from .declare import WRITES, Hints, tool
from .graph_tools import relationship_hints


@tool(
    "link_memories",
    "Link two saved memories: from_id --relationship--> to_id with WHY (reason) and "
    "optional tags. A relationship word this project uses often is a parameter of its "
    "own (e.g. inspired_by=<id>).",
    WRITES,
    word_parameters=True,
)
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


@tool(
    "rate_link",
    "Down-vote (verdict=down: confidence halved) or delete (verdict=delete) one link by "
    "its number, when the user says two memories are not related as the link claims.",
    Hints(read_only=False, destructive=True),
)
def do_rate_link(env: Env, args: RateLinkInput) -> Answer:
    judged = judge_link(env.store, args.link_id, args.verdict)
    return Answer(judged.summary(), judged.as_dict())
