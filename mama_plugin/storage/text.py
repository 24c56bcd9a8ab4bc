"""Plain text drawn from narrative JSON, for the full-text index. Pure functions."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def reasoning_text(reasoning: dict[str, Any]) -> str:
    """Flatten a reasoning layer (primary, secondary, alternatives) into indexable text."""
    parts: list[str] = [str(reasoning.get("primary") or "")]
    parts.extend(str(s) for s in reasoning.get("secondary") or [])
    for alt in reasoning.get("alternatives_considered") or []:
        if isinstance(alt, dict):
            parts.append(str(alt.get("option") or ""))
            parts.append(str(alt.get("rejected_because") or ""))
        else:
            parts.append(str(alt))
    return "\n".join(p for p in parts if p)


def embedding_text(topic: str, content: str, reasoning: dict[str, Any]) -> str:
    """The text a memory is embedded as: topic, content and its primary reason."""
    parts = [topic.replace("_", " ") if topic else "", content, str(reasoning.get("primary") or "")]
    return ". ".join(p.strip() for p in parts if p and p.strip())


def fulltext_row(
    topic: str, content: str, reasoning: dict[str, Any], tags: Iterable[str]
) -> tuple[str, str, str]:
    """A memory's full-text columns (topic, content, reasoning); its tags go with its topic."""
    labels = "\n".join([topic, *(str(t) for t in tags)]).strip()
    return labels, content, reasoning_text(reasoning)
