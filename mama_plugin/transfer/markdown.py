"""``mama export --format md``: every memory as readable Markdown, grouped by project."""

from __future__ import annotations

from typing import Any

from ..services.evolution import current_of
from ..services.render import render
from ..storage import Store, now_ms


def export_markdown(store: Store, *, project: str | None = None) -> str:
    """Render one project's memories (or every project's) with their links and successors."""
    groups: dict[str, list[Any]] = {}
    links_of: dict[str, list[Any]] = {}
    successors: dict[str, Any] = {}
    for memory in store.memories.iter(project=project):
        groups.setdefault(memory.project, []).append(memory)
        if memory.status == "superseded":
            successors[memory.id] = current_of(store, memory.id)
    for link in store.links.iter():
        links_of.setdefault(link.from_id, []).append(link)
        links_of.setdefault(link.to_id, []).append(link)
    total = sum(len(v) for v in groups.values())
    return render(
        "export.md.j2",
        store.home,
        exported_at=now_ms(),
        groups=groups,
        links_of=links_of,
        successors=successors,
        total=total,
    )
