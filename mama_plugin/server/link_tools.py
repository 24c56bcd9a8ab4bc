"""The link verdict tool: a link the user says is wrong, down-voted or deleted."""

from __future__ import annotations

from ..schema.link_verdicts import RateLinkInput
from ..services.link_upkeep import judge_link
from .base import Answer, Env, Tool


def do_rate_link(env: Env, args: RateLinkInput) -> Answer:
    judged = judge_link(env.store, args.link_id, args.verdict)
    return Answer(judged.summary(), judged.as_dict())


LINK_TOOLS: tuple[Tool, ...] = (
    Tool(
        "rate_link",
        "Down-vote (verdict=down: confidence halved) or delete (verdict=delete) one link by "
        "its number, when the user says two memories are not related as the link claims.",
        RateLinkInput,
        do_rate_link,
        read_only=False,
        destructive=True,
    ),
)
