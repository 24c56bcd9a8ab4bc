"""The graph tools: links by relationship or what followed a memory, and the graph's health.

Also the "did you mean" lines a save's answer carries for a relationship word used for the
first time (:func:`relationship_hints`), which fail open: no model loaded yet, no hint.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import MamaError
from ..fence import fenced
from ..schema.graph import FindLinksInput, GraphHealthInput
from ..services.graph.health import graph_health
from ..services.graph.queries import links_by_relationship, what_happened_after
from ..services.graph.synonyms import hint_text, new_word_hints
from ..services.graph.upkeep import shown
from .base import Answer, Env
from .declare import READS, tool


def relationship_hints(env: Env, words: Iterable[str]) -> list[dict[str, Any]]:
    """A suggestion for each new relationship word close to a canonical one (may be empty)."""
    if env.embedder is None:
        return []
    try:
        hints = new_word_hints(env.store, env.embedder, words)
    except MamaError:
        return []
    return [
        {
            "relationship": w,
            "did_you_mean": h.word,
            "score": round(h.score, 3),
            "text": hint_text(w, h),
        }
        for w, h in hints.items()
    ]


@tool(
    "find_links",
    "Links by relationship — the word and words of the same meaning (relationship="
    "inspired_by also finds motivated_by) — or what happened after a memory (after=<id>: "
    "what implemented it or came next, within window_days).",
    READS,
)
def do_find_links(env: Env, args: FindLinksInput) -> Answer:
    if args.after is not None:
        after = what_happened_after(env.store, args.after, window_days=args.window_days)
        lines = [f"After {after.start.id}, within {after.window_days:g} days:"]
        lines += [
            f"{'  ' * (s.depth - 1)}- {m.id} ({m.type}, {m.status}) --{s.link.relationship}-- "
            f"(#{s.link.id}, strength {s.confidence:.2f}) {m.content[:160]}"
            for s, m in after.steps
        ] or ["- nothing linked to it by implementation or time."]
        return Answer(fenced("\n".join(lines)), after.as_dict())
    assert args.relationship is not None  # the input model requires one of the two
    found = links_by_relationship(
        env.store, env.embedder, args.relationship, project=env.project, limit=args.limit
    )
    words = ", ".join(f"{w.word} ({w.score:.2f})" for w in found.words)
    lines = [f"Links by {found.asked}, matching {words}:"]
    lines += [f"- {shown(ln).line(found.tags.get(ln.id, ()))}" for ln in found.links] or [
        "- none in this project."
    ]
    return Answer(fenced("\n".join(lines)), found.as_dict())


@tool(
    "graph_health",
    "How connected the project's memory graph is: isolated memories, components, "
    "relationship words and their canonical coverage, with recommendations.",
    READS,
)
def do_graph_health(env: Env, args: GraphHealthInput) -> Answer:
    health = graph_health(env.store, env.project)
    lines = [f"Graph health of {env.project}:", *health.lines()]
    lines += [
        f"- {r.text}" + (f" (`{r.command}`)" if r.command else "") for r in health.recommendations
    ]
    return Answer("\n".join(lines), health.as_dict())
