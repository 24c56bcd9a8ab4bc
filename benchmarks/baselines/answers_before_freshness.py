"""The ``search_by_context`` answer as main composed it at f9a7c36, frozen: the baseline of
``python -m benchmarks answers``.

Every current result in "Stands now" (automatic checkpoints and outcome events included), the
next steps of every current result as "Remains", each session's checkpoints and each outcome
event listed as results of their own, no token budget, the text unfenced with a numbered list
after the story (as the MCP tool wrote it). The graph steps it shares with today's answer
(successors, presentation, chains, lessons) are called, not copied. Not used by the server.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from mama_plugin.embeddings.protocol import EmbeddingModel
from mama_plugin.services.search.retrieval import retrieve
from mama_plugin.services.story import results
from mama_plugin.services.story.freshness import moot
from mama_plugin.storage import Store

TEMPLATE = """\
{% if not results %}
Nothing in memory matches "{{ query }}".
{% else %}
{% for c in chains %}
On {{ c.topic or 'this question' }}: {% for s in c.steps %}{{ s.content }}\
{% if s.outcome not in ('PENDING', 'SUPERSEDED') %} ({{ s.outcome }}\
{% if s.failure_reason %}: {{ s.failure_reason }}{% endif %}){% endif %}\
{% if not loop.last %} → {% endif %}{% endfor %}.
{% endfor %}
{% for r in results if r.status == 'current' and r.role == 'advice' %}
{% if loop.first %}Stands now:
{% endif %}
- {{ r.content }}{% if r.reasoning and r.reasoning.primary %} — because \
{{ r.reasoning.primary }}{% endif %}

{% endfor %}
{% for r in results if r.role == 'lesson' %}
{% if loop.first %}Failed before (lessons, not advice):
{% endif %}
- {{ r.content }}{% if r.outcome.details %}: {{ r.outcome.details }}{% endif %}

{% endfor %}
{% for l in learned %}
{% if loop.first %}Learned:
{% endif %}
- {{ l }}
{% endfor %}
{% for r in results if r.tension and r.status == 'current' %}
{% for risk in (r.tension.risks or []) + (r.tension.concerns or []) %}
{% if loop.first %}Unresolved ({{ r.id }}):
{% endif %}
- {{ risk }}
{% endfor %}
{% endfor %}
{% for s in status.next_steps %}
{% if loop.first %}Remains:
{% endif %}
- {{ s.step }} ({{ s.priority }})
{% endfor %}
{% endif %}
"""


@cache
def _template() -> Any:
    """The template, compiled once (as main's cached environment did)."""
    import jinja2

    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, autoescape=False)
    return env.from_string(TEMPLATE)


def answer_today(
    store: Store, query: str, *, embedder: EmbeddingModel | None, project: str, k: int = 10
) -> tuple[str, list[str]]:
    """The text main's ``search_by_context`` tool answered, and the ids it listed in order."""
    hits = retrieve(store, query, embedder=embedder, project=project, k=k)
    ordered = results.with_successors(store, [(h.memory, h.score) for h in hits], k)
    primary = [results.present(store, m, score, True, True) for m, score in ordered]
    chains, along = results.chains(store, [m for m, _ in ordered])
    status: dict[str, Any] = {
        "next_steps": [
            s
            for r in primary
            if r.status == "current" and not moot(store, store.memories.require(r.id))
            for s in r.next_steps or []
        ],
    }
    learned = results.learned([m for m, _ in ordered], chains, along)
    summary = _template().render(
        query=query, results=primary, chains=chains, status=status, learned=learned
    )
    lines = [summary.strip(), ""] if primary else [summary.strip()]
    for i, r in enumerate(primary, 1):
        lines.append(f"{i}. [{r.mark}, {r.role}] {r.id} ({r.type}) {r.content}")
    return "\n".join(lines).strip(), [r.id for r in primary]
