"""A draft of what an imported v1.0 decision lacks, read in its own words. No model.

The deterministic extractor (:func:`.extract.extract`) reads the memory's own recorded text
(:func:`~mama_plugin.services.saving.enrichment.own_text`): numbers with units as specifics,
"instead of" / "over" as alternatives. Every item is a piece of what the memory already says
(grounded by construction); the draft is offered, never written.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..services.saving.enrichment import own_text
from ..storage import MemoryRecord
from .extract import extract


@dataclass(frozen=True)
class Draft:
    """What the extractor reads in a memory's own text: specifics and alternatives."""

    specifics: list[str] = field(default_factory=list)
    alternatives: list[dict[str, str]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.specifics or self.alternatives)

    def as_dict(self) -> dict[str, Any]:
        return {"specifics": self.specifics, "alternatives": self.alternatives}


def draft(memory: MemoryRecord, lacking: Iterable[str]) -> Draft:
    """The specifics and alternatives the extractor reads in ``memory``'s own text, for the
    layers it lacks."""
    wanted = set(lacking)
    # Read against the topic, not the decision: an option the decision names ("Biome instead
    # of ESLint") is an alternative here, where the extractor leaves out what a decision says.
    found = extract(memory.topic, own_text(memory))
    return Draft(
        specifics=list(found.specifics) if "specifics" in wanted else [],
        alternatives=list(found.alternatives) if "alternatives" in wanted else [],
    )
